#include "check/linked_onnx.h"

#include <map>
#include <string>

#include "shapeprop/function_id.h"
#include "shapeprop/version.h"

namespace shapeprop {

namespace {

// ONNX's releases since FunctionProto.value_info (IR 10), from VERSION_TABLE in ONNX
// 1.21.0's onnx/helper.py: the IR version and the ai.onnx and ai.onnx.ml opsets each
// reads. A release reads every lower version too.
struct Release {
  const char* version;
  int64_t ir;
  int64_t opset;
  int64_t ml_opset;
};
constexpr Release kReleases[] = {
    {"1.16", 10, 21, 5}, {"1.17", 10, 22, 5}, {"1.18", 11, 23, 5},
    {"1.19", 12, 24, 5}, {"1.20", 13, 25, 5}, {"1.21", 13, 26, 5},
};

// What the model asks: its IR version and, per ONNX domain, the highest opset imported.
struct Needs {
  int64_t ir = 0;
  std::map<std::string, int64_t> opsets;  // "" for ai.onnx
};

Needs needs_of(const onnx::ModelProto& model) {
  Needs n;
  n.ir = model.ir_version();
  auto add = [&n](const onnx::OperatorSetIdProto& o) {
    const std::string domain = FunctionId::is_default_domain(o.domain()) ? "" : o.domain();
    auto& v = n.opsets[domain];
    v = std::max(v, o.version());
  };
  for (const auto& o : model.opset_import()) add(o);
  for (const auto& f : model.functions())
    for (const auto& o : f.opset_import()) add(o);
  return n;
}

std::string domain_name(const std::string& domain) { return domain.empty() ? "ai.onnx" : domain; }

// The first release that reads all the model asks, or nullptr when none listed here does.
const Release* first_release_for(const Needs& n) {
  for (const auto& r : kReleases) {
    auto opset = [&](const char* d) {
      auto it = n.opsets.find(d);
      return it == n.opsets.end() ? 0 : it->second;
    };
    if (n.ir <= r.ir && opset("") <= r.opset && opset("ai.onnx.ml") <= r.ml_opset) return &r;
  }
  return nullptr;
}

}  // namespace

std::optional<Diagnostic> newer_than_linked_onnx(const onnx::ModelProto& model, std::string_view origin) {
  const Needs n = needs_of(model);
  std::string what;  // what the model asks beyond the linked ONNX, for the message
  if (n.ir > onnx_ir_version()) what = "ir_version " + std::to_string(n.ir);
  for (const auto& [domain, version] : n.opsets) {
    const int64_t known = onnx_max_opset(domain);
    if (known > 0 && version > known)
      what += (what.empty() ? "" : ", ") + domain_name(domain) + " opset " + std::to_string(version);
  }
  if (what.empty()) return std::nullopt;
  const Release* release = first_release_for(n);
  const std::string needed = release ? std::string("ONNX ") + release->version + " or newer"
                                     : std::string("an ONNX newer than ") + kReleases[std::size(kReleases) - 1].version;
  return Diagnostic::error("the model needs " + needed + " (" + what + "), and shapeprop is built against ONNX " +
                           onnx_version() + ", which reads IR versions up to " + std::to_string(onnx_ir_version()) +
                           " and ai.onnx opsets up to " + std::to_string(onnx_max_opset("")) +
                           ": rebuild shapeprop against " + needed)
      .in_file(std::string(origin));
}

}  // namespace shapeprop
