// The checker (see shapeprop/check.h): structure, strict inference, then every declared
// type against what the inference proves in each context.
#include "shapeprop/check.h"
#include "shapeprop/version.h"

#include <map>
#include <set>
#include <unordered_map>

#include "infer/declared_type.h"
#include "check/facts_view.h"
#include "check/inference_tolerance.h"
#include "shapeprop/call_graph.h"
#include "shapeprop/dim.h"
#include "shapeprop/validate.h"
#include "support/labels.h"
#include "support/subgraphs.h"

namespace shapeprop {

namespace {

using infer::DimParams;
using check::FactsView;
using onnx::FunctionProto;
using onnx::GraphProto;
using onnx::NodeProto;
using onnx::ValueInfoProto;
using Path = std::vector<std::string>;

Path with(Path path, std::string item) {
  path.push_back(std::move(item));
  return path;
}

bool has_type(const ValueInfoProto& vi) {
  return vi.has_type() && vi.type().value_case() != onnx::TypeProto::VALUE_NOT_SET;
}

// "domain::function/value", the name exporters before IR 10 gave a function's values in
// the graph's value_info: the function and the value, when `name` is one.
std::optional<std::pair<FunctionId, std::string>> legacy_name(const std::string& name) {
  const auto sep = name.find("::");
  if (sep == std::string::npos) return std::nullopt;
  const auto slash = name.find('/', sep + 2);
  if (slash == std::string::npos) return std::nullopt;
  return std::make_pair(FunctionId(name.substr(0, sep), name.substr(sep + 2, slash - sep - 2)), name.substr(slash + 1));
}

// Where each value of a body is defined: the path from the body to the node that computes
// it (through the subgraphs that hold it), or to the input that binds it.
std::unordered_map<std::string, Path> definitions(const google::protobuf::RepeatedPtrField<NodeProto>& nodes,
                                                  const Path& prefix) {
  std::unordered_map<std::string, Path> out;
  struct Walk {
    std::unordered_map<std::string, Path>& out;
    void operator()(const google::protobuf::RepeatedPtrField<NodeProto>& body, const Path& at) {
      for (const auto& n : body) {
        const Path here = with(at, node_label(n));
        for (const auto& o : n.output())
          if (!o.empty()) out.try_emplace(o, here);
        for (const auto& a : n.attribute()) {
          auto visit = [&](const GraphProto& g) {
            const Path inside = with(here, a.name());
            for (const auto& in : g.input()) out.try_emplace(in.name(), with(inside, "input '" + in.name() + "'"));
            (*this)(g.node(), inside);
          };
          if (a.has_g()) visit(a.g());
          for (const auto& g : a.graphs()) visit(g);
        }
      }
    }
  };
  Walk{out}(nodes, prefix);
  return out;
}

// The names a (sub)graph defines itself: its inputs, initializers and node outputs.
std::set<std::string> defined_in(const GraphProto& g) {
  std::set<std::string> names;
  for (const auto& in : g.input()) names.insert(in.name());
  for (const auto& t : g.initializer()) names.insert(t.name());
  for (const auto& n : g.node())
    for (const auto& o : n.output()) names.insert(o);
  return names;
}

class Checker {
 public:
  Checker(const onnx::ModelProto& model, const CallGraph& calls, FactsView& facts, const CheckOptions& options)
      : model_(model), calls_(calls), facts_(facts), options_(options) {}

  Diagnostics run() {
    const GraphProto& g = model_.graph();
    const Path root = {"graph '" + g.name() + "'"};
    find_call_paths(facts_.main(), g.node(), root);
    check_main_graph(g, root);
    for (const auto& f : model_.functions()) check_function(f);
    diagnostics_.push_back(count_note());
    return std::move(diagnostics_);
  }

 private:
  // One declared type, and how diagnostics name where it is declared.
  struct Declared {
    std::string value;       // the value it describes (in its body)
    const ValueInfoProto* entry;
    std::string source;      // "graph value_info", "value_info of function pkg.f", ...
    const GraphProto* subgraph = nullptr;  // the subgraph that defines the value, if one does
  };

  const onnx::ModelProto& model_;
  const CallGraph& calls_;
  FactsView& facts_;
  const CheckOptions& options_;
  Diagnostics diagnostics_;
  std::unordered_map<const FactsView::Context*, Path> call_path_;
  std::map<const FunctionProto*, std::vector<Declared>> legacy_;
  size_t graph_checked_ = 0, function_checked_ = 0, functions_checked_ = 0, contexts_checked_ = 0;

  void error(Path path, std::string message) {
    Diagnostic d = Diagnostic::error(std::move(message)).in_file(options_.origin);
    d.call_path = std::move(path);
    diagnostics_.push_back(std::move(d));
  }

  static std::string declared_as(const Declared& d) {
    return "'" + d.entry->name() + "' is declared " + infer::type_text(d.entry->type()) + " (" + d.source + ")";
  }

  // The first call path that reaches each live context, in the order of the nodes.
  void find_call_paths(const FactsView::Context& c, const google::protobuf::RepeatedPtrField<NodeProto>& nodes,
                       const Path& at) {
    for (const auto& n : nodes) {
      const Path here = with(at, node_label(n));
      if (const FactsView::Context* callee = facts_.callee(c, n)) {
        const FunctionProto* f = calls_.find(FunctionId::of(n));
        if (f && call_path_.emplace(callee, here).second) find_call_paths(*callee, f->node(), here);
      }
      const auto taken = facts_.taken_branch(c, n);
      for (const auto& a : n.attribute()) {
        if (taken && a.name() != (*taken == 0 ? "then_branch" : "else_branch")) continue;
        if (a.has_g()) find_call_paths(c, a.g().node(), with(here, a.name()));
        for (const auto& g : a.graphs()) find_call_paths(c, g.node(), with(here, a.name()));
      }
    }
  }

  // ------------------------------------------------------------------ the main graph

  void check_main_graph(const GraphProto& g, const Path& root) {
    const auto defined = definitions(g.node(), root);
    auto path_of = [&](const std::string& name) {
      auto it = defined.find(name);
      return it != defined.end() ? it->second : with(root, "input '" + name + "'");
    };
    DimParams dim_params;
    dim_params.collect_unproven();
    // Graph inputs are the contract: their dim_params name the sizes the caller gives.
    std::map<std::string, const onnx::TensorProto*> initializers;
    for (const auto& t : g.initializer()) initializers[t.name()] = &t;
    for (const auto& in : g.input()) {
      if (!has_type(in)) continue;
      const Fact* own = facts_.fact(facts_.main(), in.name());
      if (own) dim_params.bind_all(in.type(), *own, "'" + in.name() + "'");
      auto init = initializers.find(in.name());
      if (init == initializers.end()) continue;
      ++graph_checked_;
      if (auto wrong = infer::initializer_contradiction(in, *init->second)) error(path_of(in.name()), std::move(*wrong));
    }
    for (const auto& vi : g.value_info()) {
      if (!has_type(vi)) continue;
      if (auto legacy = legacy_name(vi.name()))
        if (const FunctionProto* f = calls_.find(legacy->first)) {
          legacy_[f].push_back({legacy->second, &vi, "legacy graph value_info entry for value '" + legacy->second +
                                                         "' of function " + legacy->first.str()});
          continue;
        }
      check_graph_value({vi.name(), &vi, "graph value_info"}, facts_.fact(facts_.main(), vi.name()), path_of(vi.name()),
                        dim_params);
    }
    for (const auto& o : g.output())
      if (has_type(o))
        check_graph_value({o.name(), &o, "graph output"}, facts_.fact(facts_.main(), o.name()), path_of(o.name()),
                          dim_params);
    check_subgraphs(g.node(), root, defined, dim_params);
  }

  void check_graph_value(const Declared& d, const Fact* proven, const Path& path, DimParams& dim_params) {
    if (!proven) return;  // never computed (a branch not taken): nothing to contradict
    ++graph_checked_;
    if (auto why = infer::contradiction(d.entry->type(), *proven, dim_params, "'" + d.value + "'"))
      error(path, declared_as(d) + " but proven " + infer::fact_text(*proven) + ": " + *why);
    else
      warn_unproven(path, d, *proven, dim_params.take_unproven());
  }

  // A declaration nothing refutes but the proof does not show either: a warning that
  // names what could not be proven (no size tried tells the two apart).
  void warn_unproven(const Path& path, const Declared& d, const Fact& proven, const std::vector<std::string>& unproven) {
    if (unproven.empty()) return;
    std::string what;
    for (const auto& u : unproven) what += (what.empty() ? "" : "; ") + u;
    Diagnostic w = Diagnostic::warning(declared_as(d) + ", proven " + infer::fact_text(proven) + ": could not prove " + what +
                                       " (they agree at every size tried)")
                       .in_file(options_.origin);
    w.call_path = path;
    diagnostics_.push_back(std::move(w));
  }

  // Subgraphs of the main graph that run: value_info, inputs and outputs.
  void check_subgraphs(const google::protobuf::RepeatedPtrField<NodeProto>& nodes, const Path& at,
                       const std::unordered_map<std::string, Path>& defined, DimParams& dim_params) {
    const FactsView::Context& main = facts_.main();
    for (const auto& n : nodes) {
      const Path here = with(at, node_label(n));
      const auto taken = facts_.taken_branch(main, n);
      auto visit = [&](const onnx::AttributeProto& a, const GraphProto& g) {
        const Path inside = with(here, a.name());
        const std::set<std::string> own = defined_in(g);
        auto proven = [&](const std::string& name) {
          return own.count(name) ? facts_.fact(main, g, name) : facts_.fact(main, name);
        };
        // Sibling subgraphs may reuse a name: this one's own definitions first.
        auto local = definitions(g.node(), inside);
        for (const auto& in : g.input()) local.try_emplace(in.name(), with(inside, "input '" + in.name() + "'"));
        auto path_of = [&](const std::string& name) {
          if (auto own_path = local.find(name); own_path != local.end()) return own_path->second;
          auto outer = defined.find(name);
          return outer != defined.end() ? outer->second : inside;
        };
        for (const auto& in : g.input())
          if (has_type(in)) check_graph_value({in.name(), &in, "subgraph input"}, proven(in.name()), path_of(in.name()), dim_params);
        for (const auto& vi : g.value_info())
          if (has_type(vi)) check_graph_value({vi.name(), &vi, "subgraph value_info"}, proven(vi.name()), path_of(vi.name()), dim_params);
        for (const auto& o : g.output())
          if (has_type(o)) check_graph_value({o.name(), &o, "subgraph output"}, proven(o.name()), path_of(o.name()), dim_params);
        check_subgraphs(g.node(), inside, defined, dim_params);
      };
      for (const auto& a : n.attribute()) {
        // The branch a decided If does not take never runs: what it declares is vacuous.
        if (taken && a.name() != (*taken == 0 ? "then_branch" : "else_branch")) continue;
        if (a.has_g()) visit(a, a.g());
        for (const auto& g : a.graphs()) visit(a, g);
      }
    }
  }

  // ------------------------------------------------------------------ functions

  // Each declared type of `f` in each context `f` is called in. An entry false in some
  // context is reported once, at the first such context's call path.
  void check_function(const FunctionProto& f) {
    std::vector<Declared> declared;
    const std::string source = "value_info of function " + FunctionId::of(f).str();
    for (const auto& vi : f.value_info())
      if (has_type(vi)) declared.push_back({vi.name(), &vi, source});
    if (auto legacy = legacy_.find(&f); legacy != legacy_.end())
      declared.insert(declared.end(), legacy->second.begin(), legacy->second.end());
    subgraph_declarations(f.node(), "function " + FunctionId::of(f).str(), declared);
    const auto& contexts = facts_.contexts_of(f);
    if (declared.empty() || contexts.empty()) return;
    ++functions_checked_;
    contexts_checked_ += contexts.size();

    struct Verdict {
      const FactsView::Context* first_false = nullptr;
      std::string why;
      Fact proven;
      size_t false_in = 0, computed_in = 0;
      std::optional<Fact> joined;
      const FactsView::Context* first_unproven = nullptr;
      std::vector<std::string> unproven;
      Fact unproven_fact;
    };
    std::vector<Verdict> verdicts(declared.size());
    for (const FactsView::Context* c : contexts) {
      DimParams dim_params;  // one call's sizes
      dim_params.collect_unproven();
      for (size_t i = 0; i < declared.size(); ++i) {
        const Declared& d = declared[i];
        // A subgraph's own values as that subgraph computes them (absent where this context
        // never runs it); the body's, and outer values a subgraph names, as the body does.
        const Fact* proven = d.subgraph ? facts_.fact(*c, *d.subgraph, d.value) : facts_.fact(*c, d.value);
        if (!proven) continue;
        ++function_checked_;
        Verdict& v = verdicts[i];
        ++v.computed_in;
        v.joined = v.joined ? join(*v.joined, *proven) : *proven;
        auto why = infer::contradiction(declared[i].entry->type(), *proven, dim_params, "'" + declared[i].value + "'");
        if (auto unproven = dim_params.take_unproven(); !why && !unproven.empty() && !v.first_unproven)
          v.first_unproven = c, v.unproven = std::move(unproven), v.unproven_fact = *proven;
        if (!why) continue;
        if (v.false_in++ == 0) v.first_false = c, v.why = *why, v.proven = *proven;
      }
    }
    const auto defined = definitions(f.node(), {});
    // Where a context is reported: its call path, then where the body defines the value.
    auto path_in = [&](const FactsView::Context* c, const std::string& value) {
      Path path = call_path_.count(c) ? call_path_.at(c) : Path{"function " + FunctionId::of(f).str()};
      if (auto it = defined.find(value); it != defined.end())
        path.insert(path.end(), it->second.begin(), it->second.end());
      else
        path.push_back("input '" + value + "'");
      return path;
    };
    for (size_t i = 0; i < declared.size(); ++i) {
      const Verdict& v = verdicts[i];
      if (!v.first_false) {
        if (v.first_unproven) warn_unproven(path_in(v.first_unproven, declared[i].value), declared[i], v.unproven_fact, v.unproven);
        continue;
      }
      Path path = path_in(v.first_false, declared[i].value);
      std::string message = declared_as(declared[i]) + " but proven " + infer::fact_text(v.proven) + " in the context " +
                            facts_.describe(*v.first_false) + ": " + v.why;
      if (v.computed_in > 1)
        message += "; false in " + std::to_string(v.false_in) + " of the " + std::to_string(v.computed_in) +
                   " contexts that compute it, which all hold " + infer::fact_text(*v.joined);
      error(std::move(path), std::move(message));
    }
  }

  // The inputs, outputs and value_info that subgraphs of a function body declare, however
  // deep.
  static void subgraph_declarations(const google::protobuf::RepeatedPtrField<NodeProto>& nodes, const std::string& in,
                                    std::vector<Declared>& out) {
    for (const auto& n : nodes)
      for_each_subgraph(n, [&](const GraphProto& g) {
        const std::set<std::string> own = defined_in(g);
        auto add = [&](const google::protobuf::RepeatedPtrField<ValueInfoProto>& list, const char* what) {
          for (const auto& vi : list)
            if (has_type(vi))
              out.push_back({vi.name(), &vi, std::string(what) + " in " + in, own.count(vi.name()) ? &g : nullptr});
        };
        add(g.input(), "subgraph input");
        add(g.value_info(), "subgraph value_info");
        add(g.output(), "subgraph output");
        subgraph_declarations(g.node(), in, out);
      });
  }

  Diagnostic count_note() const {
    std::string m = "checked " + counted(static_cast<int>(graph_checked_), "declared type") + " in the graph and " +
                    std::to_string(function_checked_) + " in " + counted(static_cast<int>(functions_checked_), "function") +
                    " (" + counted(static_cast<int>(contexts_checked_), "context") + ")";
    return Diagnostic::make(Severity::Note, std::move(m)).in_file(options_.origin);
  }
};

}  // namespace

Diagnostics check_model(const onnx::ModelProto& model, const CheckOptions& options) {
  register_onnx_schemas_once();
  const Dim::MaxTerms terms(options.limits.max_dim_terms);
  // ONNX's structural checker, after ours (its messages name the place less precisely).
  Diagnostics all = validate_structure(model, options.origin, options.limits, options.op_rules.get());
  if (!has_errors(all))  // errors, as ONNX's checker rejects them, in words that name the function
    for (auto& d : inference_tolerances(model, options.origin, nullptr, Severity::Error)) all.push_back(std::move(d));
  if (!has_errors(all))
    for (auto& d : run_onnx_checker(model, /*full_check=*/false, options.origin, options.op_rules.get(), CheckerMode::onnx))
      all.push_back(std::move(d));
  if (has_errors(all)) return all;

  auto calls = CallGraph::build(model);
  if (!calls) return {Diagnostic(calls.error()).in_file(options.origin)};
  InferOptions infer;
  static_cast<AnalysisOptions&>(infer) = options;  // limits, rules, assume_positive_dims, dim_ranges
  infer.strict = true;
  infer.use_declared_types = false;
  FactsView facts(model, *calls, infer);
  for (auto& d : facts.take_diagnostics()) {
    // A call may pass attributes its function does not declare: ONNX's checker and
    // inference ignore them, and no type depends on them. Strict inference calls it an
    // error (the wording is pinned by tests/golden/check/undeclared_attribute.onnxtxt);
    // for a type check it is a warning.
    if (d.severity == Severity::Error && d.message.find("' is not an attribute of function ") != std::string::npos)
      d.severity = Severity::Warning;
    all.push_back(std::move(d.in_file(options.origin)));
  }
  // The comparisons hold within the ranges (--dim-range), as the analysis does.
  DimBounds bounds(options.assume_positive_dims ? 1 : 0);
  for (const auto& [symbol, range] : options.dim_ranges) bounds.set_range(symbol, {range.min, range.max});
  const DimBounds::Scope in_force(bounds);
  for (auto& d : Checker(model, *calls, facts, options).run()) all.push_back(std::move(d));
  return all;
}

}  // namespace shapeprop
