// --override: a library's functions replace the model's functions of the same id, each
// checked before anything changes (see shapeprop/override.h).
#include "shapeprop/override.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "infer/analyzer.h"
#include "io/model_prefix.h"
#include "io/read_input.h"
#include "shapeprop/call_graph.h"
#include "shapeprop/dim.h"
#include "shapeprop/io.h"
#include "shapeprop/validate.h"
#include "support/labels.h"
#include "support/subgraphs.h"

namespace shapeprop {

namespace {

using onnx::AttributeProto;
using onnx::FunctionProto;

// The text before a library's own text: a model with an empty graph, whose functions the
// library's are. On the library's first line, so that line numbers are the library's.
constexpr std::string_view kLibraryPrefix = "<ir_version: 10, opset_import: []> shapeprop_library () => () {} ";

// attribute name -> its default, if it has one.
std::map<std::string, const AttributeProto*> attributes_of(const FunctionProto& f) {
  std::map<std::string, const AttributeProto*> out;
  for (const auto& a : f.attribute()) out[a] = nullptr;
  for (const auto& a : f.attribute_proto()) out[a.name()] = &a;
  return out;
}

std::string value_text(const AttributeProto& a) {
  switch (a.type()) {
    case AttributeProto::INT: return std::to_string(a.i());
    case AttributeProto::FLOAT: {
      std::ostringstream os;
      os << a.f();
      return os.str();
    }
    case AttributeProto::STRING: return "\"" + a.s() + "\"";
    default: return "another value";
  }
}

bool same_value(AttributeProto a, AttributeProto b) {
  a.clear_doc_string();
  b.clear_doc_string();
  return a.SerializeAsString() == b.SerializeAsString();
}

// What a call of the model's function relies on that the replacement does not give.
std::optional<std::string> signature_mismatch(const FunctionProto& model_f, const FunctionProto& lib_f) {
  if (lib_f.input_size() != model_f.input_size())
    return "takes " + counted(lib_f.input_size(), "input") + "; the model's function takes " + std::to_string(model_f.input_size());
  if (lib_f.output_size() != model_f.output_size())
    return "has " + counted(lib_f.output_size(), "output") + "; the model's function has " + std::to_string(model_f.output_size());
  const auto mine = attributes_of(lib_f), theirs = attributes_of(model_f);
  for (const auto& [name, def] : mine)
    if (!theirs.count(name)) return "has attribute '" + name + "', which the model's function does not have";
  for (const auto& [name, def] : theirs) {
    auto it = mine.find(name);
    if (it == mine.end()) return "lacks attribute '" + name + "' of the model's function";
    const AttributeProto* lib_default = it->second;
    if (def && !lib_default) return "gives attribute '" + name + "' no default; the model's function defaults it to " + value_text(*def);
    if (!def && lib_default) return "defaults attribute '" + name + "', which the model's function does not";
    if (def && !same_value(*def, *lib_default))
      return "defaults attribute '" + name + "' to " + value_text(*lib_default) + "; the model's function to " + value_text(*def);
  }
  return std::nullopt;
}

// Where a replacement's output contradicts the original's in one context.
std::optional<std::string> contradiction(const Fact& before, const Fact& after) {
  if (before.other || after.other) return std::nullopt;
  if (before.elem_type && after.elem_type && before.elem_type != after.elem_type) return "element type";
  if (before.shape && after.shape) {
    if (before.shape->size() != after.shape->size()) return "rank";
    for (size_t i = 0; i < before.shape->size(); ++i)
      if ((*before.shape)[i].equals((*after.shape)[i]) == false) return "dim " + std::to_string(i);
  }
  return std::nullopt;
}

// Every function a body calls, in its subgraphs too.
template <class F>
void for_each_call(const google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes, const F& f) {
  for (const auto& n : nodes) {
    f(FunctionId::of(n));
    for_each_subgraph(n, [&](const onnx::GraphProto& g) { for_each_call(g.node(), f); });
  }
}

}  // namespace

Result<std::vector<FunctionProto>> load_function_library(const std::filesystem::path& path, const Limits& limits) {
  if (format_for_path(path) == Format::Binary) {
    auto model = load_model(path, limits);
    if (!model) return model.error();
    if (model->functions().empty()) return Diagnostic::error("no function in this library").in_file(path.string());
    return std::vector<FunctionProto>(model->functions().begin(), model->functions().end());
  }
  ModelPrefix prefix(path.string(), Format::Text, limits);
  // Bounded, as a model's input is.
  auto text = read_input(path, limits, [&prefix](std::string_view bytes) { return prefix.check(bytes); });
  if (!text) {
    Diagnostic d = text.error();  // "cannot read: REASON", "input is larger than ...", ...
    constexpr std::string_view kCannot = "cannot read";
    d.message = d.message.starts_with(kCannot) ? "cannot read the library" + d.message.substr(kCannot.size())
                                               : "the library: " + d.message;
    return d;
  }
  auto parsed = parse_model_text(std::string(kLibraryPrefix) + *text, path.string(), limits);
  if (!parsed) {
    Diagnostic d = parsed.error();
    if (d.line == 1) d.column = std::max(1, d.column - static_cast<int>(kLibraryPrefix.size()));
    return d;
  }
  if (parsed->functions().empty()) return Diagnostic::error("no function in this library").in_file(path.string());
  return std::vector<FunctionProto>(parsed->functions().begin(), parsed->functions().end());
}

Result<OverrideResult> apply_overrides(onnx::ModelProto& model, const std::vector<FunctionProto>& library,
                                       const std::string& origin, const InferOptions& options) {
  const Dim::MaxTerms terms(options.limits.max_dim_terms);
  OverrideResult result;
  std::map<FunctionId, const FunctionProto*> offered;
  for (const auto& f : library)
    if (!offered.emplace(FunctionId::of(f), &f).second)
      return Diagnostic::error("the library defines " + FunctionId::of(f).str() + " twice").in_file(origin);

  onnx::ModelProto candidate = model;
  std::set<FunctionId> defined;
  std::vector<const FunctionProto*> work;
  for (auto& f : *candidate.mutable_functions()) {
    const FunctionId id = FunctionId::of(f);
    defined.insert(id);
    auto it = offered.find(id);
    if (it == offered.end()) continue;
    if (auto why = signature_mismatch(f, *it->second))
      return Diagnostic::error("the override of " + id.str() + " " + *why).in_file(origin);
    f = *it->second;
    result.replaced.push_back(id);
    work.push_back(it->second);
  }
  if (result.replaced.empty()) {
    result.diagnostics.push_back(Diagnostic::warning("no function of the library is a function of the model").in_file(origin));
    return result;
  }
  // The library's functions that the replacements call and the model does not define.
  while (!work.empty()) {
    const FunctionProto* f = work.back();
    work.pop_back();
    for (const auto& import : f->opset_import()) {
      const auto& imports = candidate.opset_import();
      const bool imported = std::any_of(imports.begin(), imports.end(), [&](const auto& o) {
        return FunctionId::canonical_domain(o.domain()) == FunctionId::canonical_domain(import.domain());
      });
      if (!imported) *candidate.add_opset_import() = import;  // ONNX Runtime looks domains up in the model's imports
    }
    for_each_call(f->node(), [&](const FunctionId& id) {
      auto it = offered.find(id);
      if (it == offered.end() || !defined.insert(id).second) return;
      *candidate.add_functions() = *it->second;
      result.added.push_back(id);
      work.push_back(it->second);
    });
  }

  // ONNX's checker on the result, as ONNX runs it: among others, a library function
  // importing an opset version other than the model's must use ops defined alike at both
  // (shapeprop reads such a model, but ONNX Runtime refuses it: an override never makes one).
  for (auto& d : validate_model(candidate, origin, options.op_rules.get(), CheckerMode::onnx, options.limits))
    if (d.severity == Severity::Error) {
      d.message = "after the override: " + d.message;
      d.file = origin;
      return d;
    }

  // The outputs of every replaced function in every context the model calls it in.
  auto calls_before = CallGraph::build(model);
  auto calls_after = CallGraph::build(candidate);
  if (!calls_before || !calls_after) return calls_before ? calls_after.error() : calls_before.error();
  infer::Analyzer before(model, *calls_before, options), after(candidate, *calls_after, options);
  before.run();
  after.run();
  const std::set<FunctionId> replaced(result.replaced.begin(), result.replaced.end());
  std::map<FunctionId, std::vector<const infer::CallContext*>> contexts_after;
  for (const auto& [f, contexts] : after.live_contexts()) contexts_after[FunctionId::of(*f)] = contexts;
  for (const auto& [f, contexts] : before.live_contexts()) {
    const FunctionId id = FunctionId::of(*f);
    if (!replaced.count(id)) continue;
    bool unchecked = false;
    for (const infer::CallContext* ctx : contexts) {
      const auto& candidates = contexts_after[id];
      auto match = std::find_if(candidates.begin(), candidates.end(), [&](const auto* c) { return *c == *ctx; });
      if (match == candidates.end()) continue;  // reached differently: an earlier replacement's outputs differ
      const auto& old_outputs = before.summary(*ctx).outputs;
      const auto& new_outputs = after.summary(**match).outputs;
      for (size_t k = 0; k < old_outputs.size() && k < new_outputs.size(); ++k) {
        if (auto what = contradiction(old_outputs[k], new_outputs[k]))
          return Diagnostic::error("the override of " + id.str() + " gives output " + std::to_string(k) + " as " +
                                   new_outputs[k].str() + " where the model's function gives " + old_outputs[k].str() +
                                   " (" + *what + ", in the context " + ctx->str() + ")")
              .in_file(origin);
        unchecked |= (old_outputs[k].elem_type && !new_outputs[k].elem_type) || (old_outputs[k].shape && !new_outputs[k].shape);
      }
      ++result.contexts_checked;
    }
    if (unchecked)
      result.diagnostics.push_back(Diagnostic::warning("the override of " + id.str() +
                                                       " has outputs whose types the analysis cannot infer; they are not checked")
                                       .in_file(origin));
  }
  model = std::move(candidate);
  return result;
}

}  // namespace shapeprop
