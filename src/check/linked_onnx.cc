#include "check/linked_onnx.h"

#include <map>
#include <set>
#include <vector>
#include <string>

#include "shapeprop/function_id.h"
#include "shapeprop/version.h"
#include "support/newer_onnx.h"

namespace shapeprop {

namespace {

// ONNX's releases since FunctionProto.value_info (IR 10), from VERSION_TABLE in ONNX
// 1.21.0's onnx/helper.py: the IR version and the ai.onnx and ai.onnx.ml opsets each
// reads; 1.22 and 1.23 from ONNX's main branch (its IR 14 as onnx.proto states it). A
// release reads every lower version too.
struct Release {
  const char* version;
  int64_t ir;
  int64_t opset;
  int64_t ml_opset;
};
constexpr Release kReleases[] = {
    {"1.16", 10, 21, 5}, {"1.17", 10, 22, 5}, {"1.18", 11, 23, 5},
    {"1.19", 12, 24, 5}, {"1.20", 13, 25, 5}, {"1.21", 13, 26, 5},
    {"1.22", 13, 27, 5}, {"1.23", 14, 28, 5},
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

// The ai.onnx ops of the model whose version at their scope's opset is newer than the
// linked ONNX's and that no rule states, as "Op-28", sorted, without repeats.
std::vector<std::string> uncovered_ops(const onnx::ModelProto& model, const OpRules& rules) {
  using Nodes = google::protobuf::RepeatedPtrField<onnx::NodeProto>;
  auto opset_of = [](const google::protobuf::RepeatedPtrField<onnx::OperatorSetIdProto>& imports) {
    for (const auto& o : imports)
      if (FunctionId::is_default_domain(o.domain())) return o.version();
    return int64_t{0};
  };
  std::vector<std::pair<const Nodes*, int64_t>> work{{&model.graph().node(), opset_of(model.opset_import())}};
  for (const auto& f : model.functions()) work.emplace_back(&f.node(), opset_of(f.opset_import()));
  std::set<std::string> found;
  while (!work.empty()) {  // a work list: subgraphs may nest deeper than the limits, not yet checked
    auto [nodes, opset] = work.back();
    work.pop_back();
    for (const auto& n : *nodes) {
      for (const auto& a : n.attribute()) {
        if (a.has_g()) work.emplace_back(&a.g().node(), opset);
        for (const auto& g : a.graphs()) work.emplace_back(&g.node(), opset);
      }
      if (!FunctionId::is_default_domain(n.domain())) continue;
      if (const auto since = newer_onnx::newer_version(n.op_type(), opset); since && !rules.find_version(n.op_type(), *since))
        found.insert(n.op_type() + "-" + std::to_string(*since));
    }
  }
  return {found.begin(), found.end()};
}

}  // namespace

std::optional<Diagnostic> newer_than_linked_onnx(const onnx::ModelProto& model, std::string_view origin,
                                                 const OpRules* rules) {
  const Needs n = needs_of(model);
  // What shapeprop reads: the linked ONNX's versions, carried on by the rules where they apply.
  const bool through_rules = newer_onnx::rules_extend_linked_onnx();
  const int64_t ir_read = through_rules ? newer_onnx::kMaxIrVersion : onnx_ir_version();
  std::string what;  // what the model asks beyond that, for the message
  if (n.ir > ir_read) what = "ir_version " + std::to_string(n.ir);
  for (const auto& [domain, version] : n.opsets) {
    const int64_t known = domain.empty() && through_rules ? newer_onnx::kMaxOpset : onnx_max_opset(domain);
    if (known > 0 && version > known)
      what += (what.empty() ? "" : ", ") + domain_name(domain) + " opset " + std::to_string(version);
  }
  if (what.empty()) {
    const auto opset = n.opsets.find("");
    if (n.ir <= onnx_ir_version() && (opset == n.opsets.end() || opset->second <= onnx_max_opset(""))) return std::nullopt;
    const auto builtin = rules ? nullptr : builtin_op_rules();
    const auto missing = uncovered_ops(model, rules ? *rules : *builtin);
    if (missing.empty()) return std::nullopt;
    const size_t dash = missing.front().rfind('-');
    std::string message = newer_onnx::uncovered_message(missing.front().substr(0, dash), std::stoi(missing.front().substr(dash + 1)));
    if (missing.size() > 1) {
      message += " (nor for";
      for (size_t i = 1; i < missing.size(); ++i) message += (i > 1 ? ", " : " ") + missing[i];
      message += ")";
    }
    return Diagnostic::error(message).in_file(std::string(origin));
  }
  const Release* release = first_release_for(n);
  const std::string needed = release ? std::string("ONNX ") + release->version + " or newer"
                                     : std::string("an ONNX newer than ") + kReleases[std::size(kReleases) - 1].version;
  const std::string reads = through_rules ? "which with shapeprop's rules reads IR versions up to " + std::to_string(ir_read) +
                                                " and ai.onnx opsets up to " + std::to_string(newer_onnx::kMaxOpset)
                                          : "which reads IR versions up to " + std::to_string(onnx_ir_version()) +
                                                " and ai.onnx opsets up to " + std::to_string(onnx_max_opset(""));
  return Diagnostic::error("the model needs " + needed + " (" + what + "), and shapeprop is built against ONNX " +
                           onnx_version() + ", " + reads + ": rebuild shapeprop against " + needed)
      .in_file(std::string(origin));
}

}  // namespace shapeprop
