#include "shapeprop/validate.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "ir/depth.h"
#include "check/full_check.h"
#include "check/inference_tolerance.h"
#include "check/linked_onnx.h"
#include "check/onnx_checker.h"
#include "onnx/checker.h"
#include "schemas/checker_registry.h"
#include "shapeprop/call_graph.h"
#include "shapeprop/version.h"
#include "support/labels.h"

namespace shapeprop {

namespace {

// ONNX's standard domains: nodes in them are operators, never model-local functions.
bool is_standard_domain(std::string_view domain) {
  return FunctionId::is_default_domain(domain) || domain == "ai.onnx.ml" || domain == "ai.onnx.preview.training";
}

bool has_type(const onnx::ValueInfoProto& vi) {
  return vi.has_type() && vi.type().value_case() != onnx::TypeProto::VALUE_NOT_SET;
}

std::string canonical_domain(const std::string& domain) { return FunctionId::canonical_domain(domain); }

std::string function_label(const std::string& domain, const std::string& name, const std::string& overload) {
  return FunctionId(domain, name, overload).str();
}

class StructureValidator {
 public:
  StructureValidator(const onnx::ModelProto& model, std::string_view origin) : model_(model), origin_(origin) {
    for (const auto& f : model.functions()) {
      auto id = std::make_tuple(canonical_domain(f.domain()), f.name(), f.overload());
      if (!functions_.emplace(id, &f).second)
        report({"function " + function_label(f.domain(), f.name(), f.overload())},
               "model-local function is defined more than once");
      function_domains_.insert(canonical_domain(f.domain()));
    }
  }

  Diagnostics run() {
    const std::vector<std::string> main = {"graph '" + model_.graph().name() + "'"};
    const auto imports = domains(model_.opset_import(), main);
    untyped_values(model_.graph(), main);
    walk(model_.graph().node(), imports, main);
    for (const auto& f : model_.functions()) {
      const std::vector<std::string> here = {"function " + function_label(f.domain(), f.name(), f.overload())};
      // ONNX's checker lets a default without a type pass; nothing can read it, and text
      // cannot spell it (found by fuzz-model_binary).
      for (const auto& a : f.attribute_proto())
        if (a.type() == onnx::AttributeProto::UNDEFINED)
          report(here, "attribute '" + a.name() + "' has a default value without a type");
      walk(f.node(), domains(f.opset_import(), here), here);
      unassigned_outputs(f, here);
    }
    return std::move(diagnostics_);
  }

 private:
  const onnx::ModelProto& model_;
  std::string origin_;
  // Looked up once per node, by views of the node's strings.
  using Key = std::tuple<std::string, std::string, std::string>;
  using KeyView = std::tuple<std::string_view, std::string_view, std::string_view>;
  struct ByViews {
    using is_transparent = void;
    static KeyView view(const Key& k) { return {std::get<0>(k), std::get<1>(k), std::get<2>(k)}; }
    static const KeyView& view(const KeyView& k) { return k; }
    template <class A, class B>
    bool operator()(const A& a, const B& b) const {
      return view(a) < view(b);
    }
  };
  std::map<Key, const onnx::FunctionProto*, ByViews> functions_;
  std::set<std::string, std::less<>> function_domains_;
  std::set<std::pair<std::string, std::string>> reported_imports_;  // (scope, domain)
  Diagnostics diagnostics_;

  void report(std::vector<std::string> path, std::string message, Severity severity = Severity::Error) {
    Diagnostic d = Diagnostic::make(severity, std::move(message)).in_file(origin_);
    d.call_path = std::move(path);
    diagnostics_.push_back(std::move(d));
  }

  // Values of the main graph whose type is left out are what inference is for: a note,
  // not an error (ONNX's checker would reject them; see run_onnx_checker). Subgraph
  // values may leave their type out.
  void untyped_values(const onnx::GraphProto& g, const std::vector<std::string>& path) {
    auto check = [&](const auto& list, const char* what) {
      for (const auto& vi : list)
        if (!has_type(vi)) report(with(path, "value '" + vi.name() + "'"), std::string(what) + " has no type", Severity::Note);
    };
    check(g.output(), "graph output");
    check(g.value_info(), "value_info entry");
  }

  // Each output of a function is one of its inputs or an output of a node of its body
  // (not of a subgraph: a branch's values end with the branch). ONNX's checker lets an
  // output that nothing defines pass (TorchScript's exporter wrote some), ONNX Runtime
  // refuses to load the model, and an inliner would leave the caller reading a name that
  // nothing defines.
  void unassigned_outputs(const onnx::FunctionProto& f, const std::vector<std::string>& path) {
    std::set<std::string_view> defined(f.input().begin(), f.input().end());
    for (const auto& n : f.node()) defined.insert(n.output().begin(), n.output().end());
    defined.erase("");
    for (const auto& o : f.output())
      if (!defined.count(o))
        report(path, "function output '" + o + "' is defined by no node of the body");
  }

  // A call may leave out trailing optional inputs and unused outputs, never add any.
  static bool arity_fits(const onnx::NodeProto& n, const onnx::FunctionProto& f) {
    return n.input_size() <= f.input_size() && n.output_size() <= f.output_size();
  }
  void report_arity(const onnx::NodeProto& n, const onnx::FunctionProto& f, const std::vector<std::string>& path) {
    report(path, "call has " + counted(n.input_size(), "input") + " and " + counted(n.output_size(), "output") +
                     "; function " + function_label(f.domain(), f.name(), f.overload()) + " takes " +
                     counted(f.input_size(), "input") + " and " + counted(f.output_size(), "output"));
  }

  // The domains an opset_import list names; each may be listed once (ONNX's own tools
  // differ on which entry of several would win).
  std::set<std::string, std::less<>> domains(const google::protobuf::RepeatedPtrField<onnx::OperatorSetIdProto>& list,
                                const std::vector<std::string>& path) {
    std::map<std::string, int64_t> versions;
    for (const auto& o : list) {
      auto [it, fresh] = versions.emplace(canonical_domain(o.domain()), o.version());
      if (!fresh)
        report(path, "opset_import lists domain '" + o.domain() + "' twice (versions " + std::to_string(it->second) +
                         " and " + std::to_string(o.version()) + ")");
    }
    std::set<std::string, std::less<>> out;
    for (const auto& [domain, version] : versions) out.insert(domain);
    return out;
  }

  // Every node of a body and of its subgraphs (with a work list: subgraphs may nest deep).
  void walk(const google::protobuf::RepeatedPtrField<onnx::NodeProto>& body,
            const std::set<std::string, std::less<>>& imports, const std::vector<std::string>& body_path) {
    using Nodes = google::protobuf::RepeatedPtrField<onnx::NodeProto>;
    std::vector<std::pair<const Nodes*, std::vector<std::string>>> work;
    work.emplace_back(&body, body_path);
    // What the sets say of the domain asked about last: consecutive nodes nearly always
    // share one (looked up in two ordered sets at each node, it was most of this walk).
    std::string_view last_domain;
    bool last_imported = imports.contains(last_domain), last_function_domain = function_domains_.contains(last_domain);
    while (!work.empty()) {
      // Not a structured binding: clang 14 cannot capture one in the lambda below.
      const Nodes* nodes = work.back().first;
      const std::vector<std::string> path = std::move(work.back().second);
      work.pop_back();
      // Subgraphs are visited after the nodes of this one, in order.
      std::vector<std::pair<const Nodes*, std::vector<std::string>>> inner;
      for (const auto& n : *nodes) {
        // The node's place, spelled only where it is needed: reports and subgraphs.
        auto here = [&path, &n] { return with(path, node_label(n)); };
        const std::string_view domain = FunctionId::canonical_domain_view(n.domain());
        if (domain != last_domain) {
          last_domain = domain;
          last_imported = imports.contains(domain);
          last_function_domain = function_domains_.contains(domain);
        }
        // Once per scope and domain: a model missing an import misses it for every node.
        if (!last_imported && reported_imports_.insert({path.front(), std::string(domain)}).second)
          report(here(), "domain '" + n.domain() + "' is used without an opset import");
        // Only a domain that functions are defined in can hold a call.
        const bool function_domain = last_function_domain;
        auto callee = function_domain ? functions_.find(KeyView(domain, n.op_type(), n.overload())) : functions_.end();
        if (function_domain && !is_standard_domain(domain) && callee == functions_.end())
          report(here(), "calls function " + function_label(n.domain(), n.op_type(), n.overload()) +
                           ", which the model does not define");
        if (callee != functions_.end() && !arity_fits(n, *callee->second)) report_arity(n, *callee->second, here());
        for (const auto& a : n.attribute()) {
          // From IR version 2 an attribute states its type (a reference may leave it out, as
          // the text parser does); ONNX's checker let one without pass, whose value neither
          // text nor inference can read (found by fuzz-model_binary).
          if (a.type() == onnx::AttributeProto::UNDEFINED && a.ref_attr_name().empty() && model_.ir_version() >= 2)
            report(here(), "attribute '" + a.name() + "' has no type");
          if (a.has_g()) inner.emplace_back(&a.g().node(), with(here(), "attribute '" + a.name() + "'"));
          for (const auto& g : a.graphs()) inner.emplace_back(&g.node(), with(here(), "attribute '" + a.name() + "'"));
        }
      }
      for (auto it = inner.rbegin(); it != inner.rend(); ++it) work.push_back(std::move(*it));
    }
  }

  static std::vector<std::string> with(std::vector<std::string> path, std::string item) {
    path.push_back(std::move(item));
    return path;
  }
};

}  // namespace

Diagnostics run_onnx_checker(const onnx::ModelProto& model, bool full_check, std::string_view origin,
                             const OpRules* rules, CheckerMode mode) {
  const bool as_inference = mode == CheckerMode::as_inference;
  try {
    // ONNX's checker requires a type on every output and value_info entry of the main
    // graph, and a shape in a tensor type there. Entries without them (as ONNX's own
    // inference leaves an output whose rank it cannot tell) carry nothing else to check,
    // so the checker sees the model without them.
    const onnx::ModelProto* checked = &model;
    onnx::ModelProto typed_only;
    auto untyped = [](const onnx::ValueInfoProto& vi) {
      return !has_type(vi) || (vi.type().has_tensor_type() && !vi.type().tensor_type().has_shape());
    };
    const auto& g = model.graph();
    // IR 14 (read through rules, support/newer_onnx.h) adds element types and nothing an
    // older checker checks: it checks the model as of the IR version it knows.
    const bool newer_ir = model.ir_version() > onnx_ir_version();
    if (newer_ir || std::any_of(g.output().begin(), g.output().end(), untyped) ||
        std::any_of(g.value_info().begin(), g.value_info().end(), untyped)) {
      typed_only = model;
      if (newer_ir) typed_only.set_ir_version(onnx_ir_version());
      auto drop = [&](auto* list) {
        list->erase(std::remove_if(list->begin(), list->end(), untyped), list->end());
      };
      drop(typed_only.mutable_graph()->mutable_output());
      drop(typed_only.mutable_graph()->mutable_value_info());
      checked = &typed_only;
    }
    // ONNX's checker stats each external data file, and skips a location that begins
    // with '#' (where the data is not a file): in the folder "#" every location does, so
    // that absent weights are no error (see the header). Its other checks of locations
    // stay, beside ours at load.
    const auto builtin = rules ? nullptr : builtin_op_rules();
    schemas::CheckerRegistry registry(rules ? *rules : *builtin, /*accept_unknown_default_ops=*/as_inference);
    onnx::checker::CheckerContext ctx;
    ctx.set_model_dir("#");
    ctx.set_schema_registry(&registry);
    ctx.set_skip_opset_compatibility_check(as_inference);
    onnx_check_model(*checked, ctx);
    // What check_model(model, full_check=true) adds: ONNX's strict inference, with each
    // function body inferred once per distinct call signature (full_check.h).
    if (full_check) {
      onnx::ModelProto copy = *checked;
      strict_infer_shapes(copy, &registry);
    }
    return {};
  } catch (const std::exception& e) {
    std::string what = e.what();
    // ONNX appends "\n\n==> Context: ..." and the node text on further lines; the first
    // line carries the cause.
    if (auto ctx = what.find("\n\n==> Context:"); ctx != std::string::npos) what.resize(ctx);
    return {Diagnostic::error("ONNX checker: " + what).in_file(std::string(origin))};
  }
}

namespace {

Diagnostics validate_structure(const onnx::ModelProto& model, std::string_view origin, const Limits& limits,
                               const OpRules* rules, std::optional<CallGraph>& graph) {
  // A model newer than the linked ONNX reads is one error, whatever else it holds.
  if (auto newer = newer_than_linked_onnx(model, origin, rules)) return {std::move(*newer)};
  // First, so that nothing that recurses (ONNX's checker, the analyzer) sees deeper models.
  if (Diagnostics deep = check_depths(model, origin, limits); !deep.empty()) return deep;
  Diagnostics found = StructureValidator(model, origin).run();
  // ONNX forbids recursion, and its own checker recurses without end on it.
  auto calls = CallGraph::build(model);
  if (!calls) found.push_back(Diagnostic(calls.error()).in_file(std::string(origin)));
  if (calls && !has_errors(found)) graph = std::move(*calls);
  return found;
}

}  // namespace

Diagnostics validate_structure(const onnx::ModelProto& model, std::string_view origin, const Limits& limits,
                               const OpRules* rules) {
  std::optional<CallGraph> calls;
  return validate_structure(model, origin, limits, rules, calls);
}

Diagnostics validate_model(const onnx::ModelProto& model, std::string_view origin, const OpRules* rules,
                           CheckerMode mode, const Limits& limits, bool strict) {
  std::optional<CallGraph> calls;
  return validate_model(model, origin, rules, mode, limits, strict, calls);
}

Diagnostics validate_model(const onnx::ModelProto& model, std::string_view origin, const OpRules* rules,
                           CheckerMode mode, const Limits& limits, bool strict, std::optional<CallGraph>& calls) {
  Diagnostics all = validate_model_but_onnx_checker(model, origin, rules, mode, limits, strict, calls);
  if (has_errors(all)) return all;
  for (auto& d : run_onnx_checker(model, /*full_check=*/false, origin, rules, mode)) all.push_back(std::move(d));
  return all;
}

Diagnostics validate_model_but_onnx_checker(const onnx::ModelProto& model, std::string_view origin,
                                            const OpRules* rules, CheckerMode mode, const Limits& limits,
                                            bool strict, std::optional<CallGraph>& calls) {
  calls.reset();
  Diagnostics all = validate_structure(model, origin, limits, rules, calls);
  if (has_errors(all)) return all;
  if (mode == CheckerMode::as_inference)
    for (auto& d : inference_tolerances(model, origin, rules, strict ? Severity::Error : Severity::Warning))
      all.push_back(std::move(d));
  return all;
}

}  // namespace shapeprop
