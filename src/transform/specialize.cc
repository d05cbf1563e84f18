// Specialization: one folded copy of each reached function per distinct context,
// identical copies shared, call sites retargeted; then dead code removal, inlining by
// policy, and annotation. The rounds repeat until one changes nothing, so that the
// result is a fixed point: a second run of the tool on it changes nothing.
#include "shapeprop/specialize.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <string_view>
#include <tuple>
#include <unordered_set>

#include "eval/fold.h"
#include "fold_body.h"
#include "inline.h"
#include "body_pipeline.h"
#include "ir/body.h"
#include "ir/depth.h"
#include "infer/analysis_record.h"
#include "infer/annotate.h"
#include "support/proto_hash.h"
#include "infer/onnx_bridge.h"
#include "shapeprop/call_graph.h"
#include "shapeprop/dim.h"
#include "support/subgraphs.h"

namespace shapeprop {

namespace {

using onnx::FunctionProto;
using onnx::GraphProto;
using onnx::ModelProto;
using onnx::NodeProto;
using transform::NodeList;

constexpr int kMaxRounds = 4;

std::string serialized(const google::protobuf::Message& m) {
  std::string bytes;
  google::protobuf::io::StringOutputStream raw(&bytes);
  google::protobuf::io::CodedOutputStream out(&raw);
  out.SetSerializationDeterministic(true);
  m.SerializeToCodedStream(&out);
  out.Trim();
  return bytes;
}

size_t count_all_nodes(const ModelProto& m) {
  size_t k = transform::count_nodes(m.graph().node());
  for (const auto& f : m.functions()) k += transform::count_nodes(f.node());
  return k;
}

void collect_domains(const NodeList& nodes, std::set<std::string>& domains) {
  for (const auto& n : nodes) {
    domains.insert(FunctionId::canonical_domain(n.domain()));
    for_each_subgraph(n, [&](const GraphProto& g) { collect_domains(g.node(), domains); });
  }
}

// Finds the calls among nodes (and their subgraphs) of a set of functions.
class CallFinder {
 public:
  explicit CallFinder(const std::set<FunctionId>& functions) : functions_(functions) {
    for (const auto& f : functions) names_.insert(f.name);
  }

  // Adds the functions `nodes` call to `called`, and counts the calls in `count`.
  void find(const NodeList& nodes, std::set<FunctionId>& called, size_t* count = nullptr) const {
    if (functions_.empty()) return;
    for (const auto& n : nodes) {
      // Most nodes are ops no function is named after: told apart without building an id.
      if (names_.contains(n.op_type())) {
        FunctionId id = FunctionId::of(n);
        if (functions_.count(id)) {
          called.insert(std::move(id));
          if (count) ++*count;
        }
      }
      for_each_subgraph(n, [&](const GraphProto& g) { find(g.node(), called, count); });
    }
  }

 private:
  const std::set<FunctionId>& functions_;
  std::unordered_set<std::string_view> names_;  // views the ids' names
};

std::set<FunctionId> function_ids(const ModelProto& m) {
  std::set<FunctionId> ids;
  for (const auto& f : m.functions()) ids.insert(FunctionId::of(f));
  return ids;
}

size_t count_calls(const ModelProto& m) {
  const auto ids = function_ids(m);
  const CallFinder calls(ids);
  std::set<FunctionId> called;
  size_t k = 0;
  calls.find(m.graph().node(), called, &k);
  for (const auto& f : m.functions()) calls.find(f.node(), called, &k);
  return k;
}

// Drops functions nothing reachable from the main graph calls, and opset imports no
// node uses (the default domain stays).
void remove_unused(ModelProto& m) {
  const auto ids = function_ids(m);
  const CallFinder calls(ids);
  std::set<FunctionId> reached;
  calls.find(m.graph().node(), reached);
  for (std::set<FunctionId> frontier = reached; !frontier.empty();) {
    std::set<FunctionId> next;
    for (const auto& f : m.functions())
      if (frontier.count(FunctionId::of(f))) {
        std::set<FunctionId> called;
        calls.find(f.node(), called);
        for (const auto& c : called)
          if (reached.insert(c).second) next.insert(c);
      }
    frontier = std::move(next);
  }
  auto* functions = m.mutable_functions();
  functions->erase(std::remove_if(functions->begin(), functions->end(),
                                  [&](const FunctionProto& f) { return !reached.count(FunctionId::of(f)); }),
                   functions->end());

  std::set<std::string> used{""};
  collect_domains(m.graph().node(), used);
  for (auto& f : *m.mutable_functions()) {
    std::set<std::string> in_body;
    collect_domains(f.node(), in_body);
    used.insert(in_body.begin(), in_body.end());
    auto* imports = f.mutable_opset_import();
    imports->erase(std::remove_if(imports->begin(), imports->end(),
                                  [&](const onnx::OperatorSetIdProto& o) {
                                    return !in_body.count(FunctionId::canonical_domain(o.domain()));
                                  }),
                   imports->end());
  }
  auto* imports = m.mutable_opset_import();
  imports->erase(std::remove_if(imports->begin(), imports->end(),
                                [&](const onnx::OperatorSetIdProto& o) {
                                  return !used.count(FunctionId::canonical_domain(o.domain()));
                                }),
                 imports->end());
}

// Initializers nothing reads (graph inputs with a default stay: they are interface).
void remove_unused_initializers(GraphProto& g) {
  NameMap reads(static_cast<size_t>(g.node_size()) * 2);
  transform::collect_reads(g.node(), reads);
  for (const auto& o : g.output()) reads.insert(o.name());
  for (const auto& i : g.input()) reads.insert(i.name());
  auto* inits = g.mutable_initializer();
  inits->erase(std::remove_if(inits->begin(), inits->end(),
                              [&](const onnx::TensorProto& t) { return !reads.contains(t.name()); }),
               inits->end());
}

// The version of the default domain among `imports` (0 when absent).
int64_t onnx_opset(const google::protobuf::RepeatedPtrField<onnx::OperatorSetIdProto>& imports) {
  for (const auto& o : imports)
    if (FunctionId::is_default_domain(o.domain())) return o.version();
  return 0;
}

// The graph's inputs and outputs: names the rewrites keep.
std::unordered_set<std::string> interface_names(const GraphProto& g) {
  std::unordered_set<std::string> names;
  for (const auto& vi : g.input()) names.insert(vi.name());
  for (const auto& vi : g.output()) names.insert(vi.name());
  return names;
}

// One round: analyse the model, write one folded copy of each reached function per
// distinct context (identical copies shared), fold the main graph, remove dead code. The
// round keeps its analysis, so that when the round changes nothing the analysis of its
// input is the analysis of the result.
// Folded constants in the main graph become initializers, unless the model's IR version
// is below 4, where every initializer must also be a graph input: then they stay Constant
// nodes.
bool constants_may_be_initializers(const ModelProto& m) { return m.ir_version() >= 4; }

// Whether --keep names the function (domain, name): a backend's, left as the model wrote it.
bool kept(const TransformOptions& options, const std::string& domain, const std::string& name) {
  return options.keep.count({FunctionId::canonical_domain(domain), name}) > 0;
}

// A stage of a pipeline: a module pass and the body passes after it, which it runs over
// each body it writes (or, at the start of a pipeline, body passes alone: the main graph
// and each function called in one context).
struct Stage {
  std::optional<Pass> module;  // Specialize or Inline
  bool fold = false;
  bool dce = false;
  std::vector<Pass> rewrites;  // the other body passes, in order
  std::vector<Pass> passes;    // every pass of the stage, in order

  bool specializes() const { return module == Pass::Specialize; }
  bool inlines() const { return module == Pass::Inline; }
  // Whether the stage analyses the model and writes its bodies anew (a Round): all but an
  // inline without body passes after it.
  bool has_round() const { return !inlines() || fold || dce || !rewrites.empty(); }
  bool contains(Pass p) const { return std::find(passes.begin(), passes.end(), p) != passes.end(); }
};

std::vector<Stage> stages_of(const std::vector<Pass>& passes) {
  std::vector<Stage> stages;
  for (Pass p : passes) {
    if (pass_info(p).kind == PassKind::Module || stages.empty()) stages.emplace_back();
    Stage& s = stages.back();
    s.passes.push_back(p);
    if (pass_info(p).kind == PassKind::Module)
      s.module = p;
    else if (p == Pass::Fold)
      s.fold = true;
    else if (p == Pass::Dce)
      s.dce = true;
    else
      s.rewrites.push_back(p);
  }
  return stages;
}

class Round {
 public:
  // `take_initializers`: the round may move the input's initializers into its result (the
  // input is the transform's own copy); otherwise it copies them (the caller's model).
  // `try_unchanged`: the round first checks, without writing anything, whether it would
  // change nothing (changes_nothing); worth it unless the input is fresh from inlining.
  Round(ModelProto& model, const TransformOptions& options, const Stage& stage, TransformResult& result,
        bool count_specializations, bool take_initializers, bool try_unchanged)
      : model_(model),
        options_(options),
        stage_(stage),
        result_(result),
        count_specializations_(count_specializations),
        take_initializers_(take_initializers),
        try_unchanged_(try_unchanged) {}

  // One round of specialize + fold + remove dead code into `out`. False (and `out`
  // untouched) when the analysis found errors; an error when it could not run at all.
  // `out` takes (or copies) the input's initializers; give_back returns them.
  Result<bool> run(ModelProto& out) {
    PhaseClock analysing(result_.phases, "analysis", options_.infer.on_phase);
    auto calls = CallGraph::build(model_);
    if (!calls) return calls.error();
    calls_ = std::move(*calls);
    analysis_ = std::make_unique<infer::Analyzer>(model_, *calls_, options_.infer);
    infer::Analyzer& analysis = *analysis_;
    analysis.run();
    diagnostics_ = analysis.take_diagnostics();
    infer::merge_assumptions(result_.assumptions, analysis.assumptions());
    analysing.stop();
    for (const auto& d : diagnostics_) result_.diagnostics.push_back(d);
    if (has_errors(result_.diagnostics)) return false;
    if (try_unchanged_ && changes_nothing(analysis)) {
      unchanged_ = true;
      return true;
    }

    PhaseClock specializing(result_.phases, "specialization", options_.infer.on_phase);
    start_from(out);
    std::set<std::pair<std::string, std::string>> taken;  // (domain, name) of the original functions
    for (const auto& f : model_.functions()) taken.insert({FunctionId::canonical_domain(f.domain()), f.name()});

    std::set<std::tuple<std::string, std::string, std::string>> overloads_taken;  // (domain, name, overload)
    for (const auto& f : model_.functions())
      overloads_taken.insert({FunctionId::canonical_domain(f.domain()), f.name(), f.overload()});

    std::map<FunctionId, size_t> made;  // specialization -> contexts beyond the first that share it
    for (const auto& [f, contexts] : analysis.live_contexts()) {
      // A function kept for a backend is left as it is: its calls name it (callee_names
      // gives no name for them), and restore_missing_functions brings its body back.
      if (kept(options_, f->domain(), f->name())) continue;
      // Without the specialize pass a function called in several contexts stays as written
      // (its calls too): only one context's facts may fold a body in place.
      if (!stage_.specializes() && contexts.size() > 1) {
        for (const infer::CallContext* c : contexts) {
          name_of_[c] = f->name();
          overload_of_[c] = f->overload();
        }
        *out.add_functions() = *f;
        continue;
      }
      // Folding counts what it does; a function left as written (the limit below) did nothing.
      const TransformStats stats_before = result_.stats;
      const size_t notes_before = result_.rewrites_assuming_positive_dims.size();
      std::vector<FunctionProto> bodies;
      std::vector<std::vector<const infer::CallContext*>> users;
      std::unordered_map<uint64_t, std::vector<size_t>> bodies_by_hash;
      for (const infer::CallContext* c : contexts) {
        FunctionProto body = fold_function(*f, analysis.summary(*c), *c);
        // Identical folded bodies are one specialization: found by hash, confirmed whole.
        auto& same_hash = bodies_by_hash[hash_message(body)];
        auto same = std::find_if(same_hash.begin(), same_hash.end(),
                                 [&](size_t k) { return serialized(bodies[k]) == serialized(body); });
        size_t index;
        if (same != same_hash.end()) {
          index = *same;
        } else {
          index = bodies.size();
          same_hash.push_back(index);
          bodies.push_back(std::move(body));
          users.emplace_back();
        }
        users[index].push_back(c);
      }
      if (bodies.size() > options_.infer.limits.max_specializations) {
        // Limits::max_specializations: the function stays as written, for every context
        // (annotation writes the join of their facts); the functions it calls come back
        // as written where their specializations were renamed (restore_missing_functions).
        result_.diagnostics.push_back(Diagnostic::make(
            Severity::Note, FunctionId::of(*f).str() + " would need " + std::to_string(bodies.size()) +
                                " specializations, more than " + std::to_string(options_.infer.limits.max_specializations) +
                                " (--max-specializations): its calls keep the function as written"));
        result_.stats = stats_before;
        result_.rewrites_assuming_positive_dims.resize(notes_before);
        for (const infer::CallContext* c : contexts) {
          name_of_[c] = f->name();
          overload_of_[c] = f->overload();
        }
        *out.add_functions() = *f;
        continue;
      }
      const std::string domain = FunctionId::canonical_domain(f->domain());
      for (size_t k = 0; k < bodies.size(); ++k) {
        // One body keeps the function's name (so that a second run renames nothing);
        // several are numbered in first-use order: renamed copies, or overloads of the name.
        std::string name = f->name();
        std::string overload = f->overload();
        if (bodies.size() > 1 && options_.naming == Naming::Copies) {
          for (size_t n = k;; ++n) {
            name = f->name() + "__" + std::to_string(n);
            if (taken.insert({domain, name}).second) break;
          }
        } else if (bodies.size() > 1) {
          for (size_t n = k;; ++n) {
            overload = f->overload() + "__" + std::to_string(n);
            if (overloads_taken.insert({domain, name, overload}).second) break;
          }
        }
        bodies[k].set_name(name);
        if (!overload.empty()) bodies[k].set_overload(overload);
        for (const infer::CallContext* c : users[k]) {
          name_of_[c] = name;
          overload_of_[c] = overload;
        }
        if (bodies.size() > 1 || contexts.size() > 1)
          made[FunctionId::of(bodies[k])] = users[k].size() - 1;
        *out.add_functions() = std::move(bodies[k]);
      }
    }

    fold_main_graph(analysis, out);
    restore_missing_functions(out);
    if (stage_.specializes() || stage_.dce) remove_unused(out);
    // Specializations that survive (a function whose calls all folded away does not).
    if (count_specializations_) {
      for (const auto& f : out.functions()) {
        auto it = made.find(FunctionId::of(f));
        if (it == made.end()) continue;
        ++result_.stats.counters[Counter::Specializations];
        result_.stats.counters[Counter::Shared] += it->second;
      }
      if (options_.infer.describe_contexts) record_specializations(analysis);
    }
    return true;
  }

  // The round changed nothing: the input takes its initializers back from `out`, and
  // stays the result, with this round's analysis of it.
  void give_back(ModelProto& out) {
    if (take_initializers_) model_.mutable_graph()->mutable_initializer()->Swap(out.mutable_graph()->mutable_initializer());
  }
  const infer::Analyzer& analysis() const { return *analysis_; }
  // run() found, without writing `out`, that the round would give its input back.
  bool unchanged() const { return unchanged_; }
  const Diagnostics& diagnostics() const { return diagnostics_; }

 private:
  ModelProto& model_;
  const TransformOptions& options_;
  const Stage& stage_;
  TransformResult& result_;
  const bool count_specializations_;  // later rounds see the first round's specializations
  const bool take_initializers_;
  const bool try_unchanged_;
  std::optional<CallGraph> calls_;
  std::unique_ptr<infer::Analyzer> analysis_;
  Diagnostics diagnostics_;
  std::unordered_map<const infer::CallContext*, std::string> name_of_;
  std::unordered_map<const infer::CallContext*, std::string> overload_of_;
  bool unchanged_ = false;

  // The common last round of --mode inline: a graph without functions (and so without
  // specializations), nothing left to fold, no dead code, no unused initializer or opset
  // import, no value_info for the round to drop. Then the round is known to change
  // nothing before it writes anything. Anything else is left to the round itself.
  bool changes_nothing(const infer::Analyzer& analysis) const {
    const GraphProto& g = model_.graph();
    if (model_.functions_size() > 0 || g.value_info_size() > 0) return false;
    std::unordered_set<std::string> live;
    for (const auto& vi : g.output()) live.insert(vi.name());
    transform::BodyTarget target;
    if (constants_may_be_initializers(model_))
      target.main_graph = const_cast<GraphProto*>(&g);  // read only: nothing is emitted
    if (!transform::fold_changes_nothing(g.node(), analysis.graph().facts, target, live)) return false;
    // Nor would any rewrite apply (a dry run only matches: the nodes are only read).
    const transform::RewriteOptions options = rewrite_options(onnx_opset(model_.opset_import()), "");
    Counters unused;
    if (transform::rewrite_body(const_cast<NodeList&>(g.node()), transform::FactsByName(&analysis.graph().facts), target,
                                interface_names(g), stage_.rewrites, options, /*dry=*/true, unused)
            .changed)
      return false;
    NameMap reads(static_cast<size_t>(g.node_size()) * 2);
    transform::collect_reads(g.node(), reads);
    for (const auto& o : g.output()) reads.insert(o.name());
    for (const auto& i : g.input()) reads.insert(i.name());
    for (const auto& t : g.initializer())
      if (!reads.contains(t.name())) return false;
    std::set<std::string> used{""};
    collect_domains(g.node(), used);
    for (const auto& o : model_.opset_import())
      if (!used.count(FunctionId::canonical_domain(o.domain()))) return false;
    return true;
  }

  transform::RewriteOptions rewrite_options(int64_t opset, const std::string& where) const {
    transform::RewriteOptions o;
    o.assume_positive_dims = options_.infer.assume_positive_dims;
    o.onnx_opset = opset;
    o.where = where;
    o.notes = &result_.rewrites_assuming_positive_dims;
    return o;
  }

  // `out` as the input, without what the round writes anew (nodes, functions, value_info),
  // and with the input's initializers moved into it where it may take them. The analysis
  // points into the input's nodes and functions, which stay where they are.
  void start_from(ModelProto& out) {
    GraphProto& g = *model_.mutable_graph();
    NodeList nodes;
    google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> value_info;
    google::protobuf::RepeatedPtrField<FunctionProto> functions;
    nodes.Swap(g.mutable_node());
    value_info.Swap(g.mutable_value_info());
    functions.Swap(model_.mutable_functions());
    google::protobuf::RepeatedPtrField<onnx::TensorProto> initializers;
    if (take_initializers_) initializers.Swap(g.mutable_initializer());
    out = model_;  // what is left: small, unless the initializers are copied
    g.mutable_node()->Swap(&nodes);
    g.mutable_value_info()->Swap(&value_info);
    model_.mutable_functions()->Swap(&functions);
    if (take_initializers_) out.mutable_graph()->mutable_initializer()->Swap(&initializers);
  }

  // The input's functions and contexts, each with the specialization that serves it.
  void record_specializations(const infer::Analyzer& analysis) {
    result_.functions = infer::describe_contexts(analysis);
    auto entry = result_.functions.begin();
    for (const auto& [f, contexts] : analysis.live_contexts()) {
      for (size_t i = 0; i < contexts.size(); ++i)
        entry->contexts[i].specialization = FunctionId(f->domain(), name_of_[contexts[i]], f->overload()).str();
      ++entry;
    }
  }

  std::function<std::string(const infer::CallContext*)> callee_names() {
    return [this](const infer::CallContext* c) {
      auto it = name_of_.find(c);
      if (it != name_of_.end()) return it->second;
      return kept(options_, c->function.domain, c->function.name) ? std::string() : c->function.name;
    };
  }

  // Overloads are set only when specializations are overloads.
  std::function<std::string(const infer::CallContext*)> callee_overloads() {
    if (options_.naming != Naming::Overloads) return nullptr;
    return [this](const infer::CallContext* c) {
      auto it = overload_of_.find(c);
      return it != overload_of_.end() ? it->second : c->function.overload;
    };
  }



  // The rewrite passes over one folded body; a body they leave still changing after their
  // rounds is a warning naming the pass (the next round of the transform takes it up).
  bool rewrite(NodeList& nodes, const transform::FactsByName& facts, const transform::BodyTarget& target,
               const std::unordered_set<std::string>& interface, const transform::RewriteOptions& options) {
    if (stage_.rewrites.empty()) return false;
    const auto run = transform::rewrite_body(nodes, facts, target, interface, stage_.rewrites, options,
                                             /*dry=*/false, result_.stats.counters);
    if (run.still_changing)
      result_.diagnostics.push_back(Diagnostic::make(
          Severity::Warning, "the rewrites of " + options.where + " did not settle: pass " +
                                 std::string(pass_info(*run.still_changing).name) + " still changed it in the last round"));
    return run.changed;
  }

  // Where a body's folding goes, with what the stage runs of fold and dce.
  transform::BodyTarget body_target() {
    transform::BodyTarget target;
    target.callee_name = callee_names();
    target.callee_overload = callee_overloads();
    target.decide = stage_.fold;
    target.collapse = stage_.dce;
    return target;
  }

  FunctionProto fold_function(const FunctionProto& f, const infer::Summary& facts, const infer::CallContext& context) {
    FunctionProto body;
    body.set_domain(f.domain());
    if (f.has_overload()) body.set_overload(f.overload());
    if (f.has_doc_string()) body.set_doc_string(f.doc_string());
    *body.mutable_opset_import() = f.opset_import();
    *body.mutable_input() = f.input();
    *body.mutable_output() = f.output();
    std::unordered_set<std::string> io(f.input().begin(), f.input().end());
    io.insert(f.output().begin(), f.output().end());
    transform::BodyTarget target = body_target();
    target.attributes = &context.attributes;
    transform::FactsByName facts_by_name(&facts.facts);
    NodeList nodes = transform::fold_body(f.node(), facts.facts, target, io, result_.stats.counters, &facts_by_name);
    const std::unordered_set<std::string> outputs(f.output().begin(), f.output().end());
    if (stage_.dce) transform::remove_dead_nodes(nodes, outputs);
    const std::string where = "function " + FunctionId::of(f).str() + " " + context.str();
    int64_t opset = onnx_opset(f.opset_import());
    if (opset == 0) opset = onnx_opset(model_.opset_import());
    if (rewrite(nodes, facts_by_name, target, io, rewrite_options(opset, where)) && stage_.dce) {
      transform::collapse_identities(nodes, io);
      transform::remove_dead_nodes(nodes, outputs);
    }
    body.mutable_node()->Swap(&nodes);
    return body;
  }

  void fold_main_graph(const infer::Analyzer& analysis, ModelProto& out) {
    const GraphProto& g = model_.graph();
    GraphProto& target_graph = *out.mutable_graph();
    std::unordered_set<std::string> keep;
    for (const auto& vi : g.input()) keep.insert(vi.name());
    for (const auto& vi : g.output()) keep.insert(vi.name());
    for (const auto& t : target_graph.initializer()) keep.insert(t.name());
    transform::BodyTarget target = body_target();
    if (constants_may_be_initializers(model_)) target.main_graph = &target_graph;
    transform::FactsByName facts_by_name(&analysis.graph().facts);
    NodeList nodes =
        transform::fold_body(g.node(), analysis.graph().facts, target, keep, result_.stats.counters, &facts_by_name);
    std::unordered_set<std::string> live;
    for (const auto& vi : g.output()) live.insert(vi.name());
    if (stage_.dce) transform::remove_dead_nodes(nodes, live);
    const auto interface = interface_names(g);
    if (rewrite(nodes, facts_by_name, target, interface,
                rewrite_options(onnx_opset(model_.opset_import()), "graph '" + g.name() + "'")) &&
        stage_.dce) {
      transform::collapse_identities(nodes, keep);
      transform::remove_dead_nodes(nodes, live);
    }
    target_graph.mutable_node()->Swap(&nodes);
    if (stage_.dce) remove_unused_initializers(target_graph);
  }

  // A call the analysis did not specialize (one only ONNX's own rules walked, inside a
  // SequenceMap body) keeps calling the original function, which then stays.
  void restore_missing_functions(ModelProto& out) {
    for (bool added = true; added;) {
      added = false;
      auto present = function_ids(out);
      std::set<FunctionId> originals = function_ids(model_);
      const CallFinder calls(originals);
      std::set<FunctionId> called;
      calls.find(out.graph().node(), called);
      for (const auto& f : out.functions()) calls.find(f.node(), called);
      for (const auto& f : model_.functions())
        if (called.count(FunctionId::of(f)) && !present.count(FunctionId::of(f))) {
          *out.add_functions() = f;
          added = true;
        }
    }
  }
};

// A function whose opset version for a domain differs from the model's can still be
// inlined when every op it uses from that domain has the same definition at both
// versions (and for domains of model-local functions, whose versions mean nothing).
bool reconcile_opsets(FunctionProto& f, const ModelProto& model, std::string& why) {
  std::map<std::string, int64_t> model_versions;
  for (const auto& o : model.opset_import()) model_versions[FunctionId::canonical_domain(o.domain())] = o.version();
  std::set<std::string> local_domains;
  for (const auto& g : model.functions()) local_domains.insert(FunctionId::canonical_domain(g.domain()));
  for (auto& o : *f.mutable_opset_import()) {
    const std::string d = FunctionId::canonical_domain(o.domain());
    auto it = model_versions.find(d);
    if (it == model_versions.end() || it->second == o.version()) continue;
    if (!local_domains.count(d)) {
      std::vector<const NodeProto*> work;
      for (const auto& n : f.node()) work.push_back(&n);
      while (!work.empty()) {
        const NodeProto* n = work.back();
        work.pop_back();
        for_each_subgraph(*n, [&](const GraphProto& g) {
          for (const auto& m : g.node()) work.push_back(&m);
        });
        if (FunctionId::canonical_domain(n->domain()) != d) continue;
        const auto* at_function = infer::find_schema(n->op_type(), d, static_cast<int>(o.version()));
        const auto* at_model = infer::find_schema(n->op_type(), d, static_cast<int>(it->second));
        if (!at_function || at_function != at_model) {
          why = "its opset for domain '" + o.domain() + "' is " + std::to_string(o.version()) + " and the model's " +
                std::to_string(it->second) + ", and " +
                (at_function && at_model ? n->op_type() + " differs between them"
                                         : "no schema tells whether " + n->op_type() + " is the same at both");
          return false;
        }
      }
    }
    o.set_version(it->second);
  }
  return true;
}

// The nodes a model would have once the calls of the functions selected by (domain, name)
// are inlined, counted without inlining: each function's size once its own selected calls
// are expanded, memoised (call depth is bounded by validation, Limits::max_call_depth).
// Sizes saturate rather than wrap: 20 functions each calling the next twice expand 2^20 times.
class InlinedSize {
 public:
  InlinedSize(const ModelProto& m, const std::set<std::pair<std::string, std::string>>& selected) : selected_(selected) {
    for (const auto& f : m.functions()) functions_[FunctionId::of(f)] = &f;
  }

  // The main graph with the selected calls expanded, plus each function that stays.
  size_t model(const ModelProto& m) {
    size_t total = nodes(m.graph().node());
    for (const auto& f : m.functions())
      if (!selected(f.domain(), f.name())) total = add(total, body(f));
    return total;
  }

 private:
  static constexpr size_t kSaturated = std::numeric_limits<size_t>::max() / 2;
  const std::set<std::pair<std::string, std::string>>& selected_;
  std::map<FunctionId, const FunctionProto*> functions_;
  std::map<const FunctionProto*, size_t> sizes_;

  static size_t add(size_t a, size_t b) { return std::min(a + b, kSaturated); }  // both below kSaturated
  bool selected(const std::string& domain, const std::string& name) const {
    return selected_.count({domain, name}) > 0;
  }
  size_t body(const FunctionProto& f) {
    auto [it, fresh] = sizes_.emplace(&f, 0);
    if (fresh) it->second = nodes(f.node());  // emplace first: the map's nodes stay put
    return it->second;
  }
  size_t nodes(const NodeList& list) {
    size_t k = 0;
    for (const auto& n : list) {
      if (selected(n.domain(), n.op_type()))
        if (auto f = functions_.find(FunctionId::of(n)); f != functions_.end()) {
          k = add(k, body(*f->second));
          continue;
        }
      k = add(k, 1);
      for_each_subgraph(n, [&](const GraphProto& g) { k = add(k, nodes(g.node())); });
    }
    return k;
  }
};

// Limits::max_inlined_nodes and inline_growth: the selection shrinks, greedily, one
// function at a time (the one whose calls staying leave the fewest nodes), until the
// inlined model fits. Returns the functions whose calls stay, in the order dropped.
std::vector<std::pair<std::string, std::string>> fit_inlining(const ModelProto& m,
                                                              std::vector<std::pair<std::string, std::string>>& selected,
                                                              size_t limit) {
  std::set<std::pair<std::string, std::string>> chosen(selected.begin(), selected.end());
  std::vector<std::pair<std::string, std::string>> dropped;
  for (size_t size = InlinedSize(m, chosen).model(m); size > limit && !chosen.empty();) {
    std::optional<std::pair<std::string, std::string>> best;
    for (const auto& id : selected) {
      if (!chosen.count(id)) continue;
      chosen.erase(id);
      const size_t without = InlinedSize(m, chosen).model(m);
      chosen.insert(id);
      if (!best || without < size) {
        best = id;
        size = without;
      }
    }
    chosen.erase(*best);
    dropped.push_back(*best);
  }
  std::erase_if(selected, [&](const auto& id) { return !chosen.count(id); });
  return dropped;
}

void inline_functions(ModelProto& m, const TransformOptions& options, TransformResult& result) {
  const size_t calls_before = count_calls(m);
  std::vector<FunctionProto> kept_aside;  // not inlinable: the inliner must not see them
  std::vector<std::pair<std::string, std::string>> selected;
  std::map<std::pair<std::string, std::string>, std::optional<bool>> selected_by_name;
  const auto all = m.functions();
  m.clear_functions();
  for (FunctionProto f : all) {
    std::string why;
    if (!reconcile_opsets(f, m, why)) {
      Diagnostic d = Diagnostic::make(Severity::Note, "calls of " + FunctionId::of(f).str() + " are not inlined: " + why);
      result.diagnostics.push_back(std::move(d));
      kept_aside.push_back(std::move(f));
      continue;
    }
    // Inlining selects by (domain, name), as ONNX's inliner does: overloads of one name go together, so
    // under the small policy all of them must be small.
    auto& choice = selected_by_name[{f.domain(), f.name()}];
    const bool small = transform::count_nodes(f.node()) <= options.small_limit;
    choice = (choice.value_or(true) && !kept(options, f.domain(), f.name()) &&
              (options.inline_policy == InlinePolicy::All || small));
    *m.add_functions() = std::move(f);
  }
  for (const auto& [id, chosen] : selected_by_name)
    if (*chosen) selected.push_back(id);
  const Limits& limits = options.infer.limits;
  size_t growth;  // inline_growth x nodes before, saturated
  if (__builtin_mul_overflow(result.stats.nodes_before, limits.inline_growth, &growth))
    growth = std::numeric_limits<size_t>::max();
  const size_t limit = std::max(growth, limits.max_inlined_nodes);
  if (auto dropped = fit_inlining(m, selected, limit); !dropped.empty()) {
    std::string names;
    for (const auto& [domain, name] : dropped) names += (names.empty() ? "" : ", ") + FunctionId(domain, name).str();
    result.diagnostics.push_back(Diagnostic::make(
        Severity::Note, "inlining every call would make more than " + std::to_string(limit) +
                            " nodes (--max-inlined-nodes, --max-inline-growth): the calls of " + names + " stay"));
  }
  // Each domain's version, for the functions that stay: calls inlined into them bring ops
  // of domains they may not import (the functions all agree on versions, or the inliner throws).
  std::map<std::string, int64_t> versions;
  for (const auto& o : m.opset_import()) versions.emplace(FunctionId::canonical_domain(o.domain()), o.version());
  for (const auto& f : m.functions())
    for (const auto& o : f.opset_import()) versions.emplace(FunctionId::canonical_domain(o.domain()), o.version());
  transform::inline_selected_functions(m, selected);
  for (auto& f : *m.mutable_functions()) {
    std::set<std::string> used;
    collect_domains(f.node(), used);
    for (const auto& o : f.opset_import()) used.erase(FunctionId::canonical_domain(o.domain()));
    for (const auto& d : used)
      if (auto v = versions.find(d); v != versions.end()) {
        auto* import = f.add_opset_import();
        import->set_domain(d);
        import->set_version(v->second);
      }
  }
  for (auto& f : kept_aside) *m.add_functions() = std::move(f);
  // Functions the inliner removed that a function kept aside still calls come back.
  const auto present = function_ids(m);
  std::set<FunctionId> called;
  std::set<FunctionId> originals;
  for (const auto& f : all) originals.insert(FunctionId::of(f));
  const CallFinder calls(originals);
  for (const auto& f : m.functions()) calls.find(f.node(), called);
  for (const auto& f : all)
    if (called.count(FunctionId::of(f)) && !present.count(FunctionId::of(f))) *m.add_functions() = f;
  remove_unused(m);
  const size_t calls_after = count_calls(m);
  result.stats.counters[Counter::CallsInlined] += calls_before > calls_after ? calls_before - calls_after : 0;
}

// What folding the main graph finds right after inlining, without analysing it again:
// the inlined bodies were folded in their contexts already, and inlining adds no fact, so
// what is left is structural (Constants at the top of the main graph become initializers,
// Identity chains across the old call boundaries collapse, outputs no caller reads die).
// Constants' facts come from their attributes. The next round analyses the result in full
// and finds anything this misses (the rewrites across the bodies inlining brought together
// among it): this only saves it the work.
void fold_inlined_graph(ModelProto& m) {
  GraphProto& g = *m.mutable_graph();
  std::unordered_set<std::string> keep;
  for (const auto& vi : g.input()) keep.insert(vi.name());
  for (const auto& vi : g.output()) keep.insert(vi.name());
  for (const auto& t : g.initializer()) keep.insert(t.name());
  // In place, as fold_body would have it: the nodes that stay are moved, not copied.
  std::vector<bool> kept(static_cast<size_t>(g.node_size()), false);
  for (int i = 0; i < g.node_size(); ++i) {
    NodeProto& n = *g.mutable_node(i);
    if (constants_may_be_initializers(m) && FunctionId::is_default_domain(n.domain()) && n.op_type() == "Constant" &&
        n.output_size() == 1 &&
        !n.output(0).empty()) {
      eval::FoldInput fi;
      fi.op = n.op_type();
      for (const auto& a : n.attribute()) fi.attributes.push_back(&a);
      auto folded = eval::fold(fi);
      if (!folded.empty() && folded[0].has_tensor()) {
        onnx::TensorProto value = *folded[0].to_tensor();
        value.set_name(n.output(0));
        *g.add_initializer() = std::move(value);
        continue;
      }
    }
    transform::fold_subgraphs_without_facts(n);
    kept[static_cast<size_t>(i)] = true;
  }
  transform::keep_nodes(*g.mutable_node(), kept);
  transform::collapse_identities(*g.mutable_node(), keep);
  std::unordered_set<std::string> live;
  for (const auto& vi : g.output()) live.insert(vi.name());
  transform::remove_dead_nodes(*g.mutable_node(), live);
  remove_unused_initializers(g);
  remove_unused(m);
}

// Whether a counter is one of the rewrites after folding (the passes over a folded body).
bool counts_a_rewrite(const CounterInfo& c) {
  return pass_info(c.pass).kind == PassKind::Body && c.pass != Pass::Fold;
}

// What --debug-analysis says of the rewrites: the counts of the rewrites that hold only
// because symbolic dims are at least 1.
std::string assumption_report(const TransformResult& result) {
  if (result.rewrites_assuming_positive_dims.empty()) return "";
  std::string text = "rewrites that assume symbolic dims are at least 1:\n";
  for (const auto& line : result.rewrites_assuming_positive_dims) text += "  " + line + "\n";
  return text;
}

}  // namespace

namespace {

// Runs the inline pass on `m` (the transform's own copy); true when it inlined calls.
Result<bool> inline_stage(ModelProto& m, const TransformOptions& options, TransformResult& result) {
  if (m.functions_size() == 0) return false;
  PhaseClock inlining(result.phases, "inlining", options.infer.on_phase);
  const size_t inlined_before = result.stats.counters[Counter::CallsInlined];
  try {
    inline_functions(m, options, result);
  } catch (const std::exception& e) {
    return Diagnostic::error(std::string("inlining failed: ") + e.what());
  }
  fold_inlined_graph(m);
  return result.stats.counters[Counter::CallsInlined] > inlined_before;
}

// The passes whose counters differ between `before` and `after`, in registry order.
std::string passes_that_counted(const Counters& before, const Counters& after) {
  std::vector<Pass> passes;
  for (const CounterInfo& c : all_counters())
    if (before[c.id] != after[c.id] && std::find(passes.begin(), passes.end(), c.pass) == passes.end())
      passes.push_back(c.pass);
  std::sort(passes.begin(), passes.end());
  std::string names;
  for (Pass p : passes) names += (names.empty() ? "" : ", ") + std::string(pass_info(p).name);
  return names;
}

}  // namespace

std::vector<Pass> default_pipeline(InlinePolicy policy) {
  std::vector<Pass> passes;
  for (const PassInfo& p : all_passes())
    if (p.id != Pass::Inline || policy != InlinePolicy::None) passes.push_back(p.id);
  return passes;
}

Result<TransformResult> specialize(ModelProto& model, const TransformOptions& options) {
  const Dim::MaxTerms terms(options.infer.limits.max_dim_terms);
  // As infer_shapes does: within the limits only, whether the caller validated or not.
  if (Diagnostics deep = check_depths(model, "", options.infer.limits); !deep.empty()) return deep.front();
  for (const auto& id : options.keep)  // (domain, name); clang 14 cannot capture a structured binding
    if (std::none_of(model.functions().begin(), model.functions().end(), [&id](const FunctionProto& f) {
          return FunctionId::canonical_domain(f.domain()) == id.first && f.name() == id.second;
        }))
      return Diagnostic::error("--keep names " + id.first + "::" + id.second + ", which the model does not define");
  TransformResult result;
  // A model the transform is done with: retired (options.retire) or destroyed now.
  const auto discard = [&options](ModelProto& m) {
    if (options.retire) options.retire(std::move(m));
    m = ModelProto();
  };
  const bool explicit_passes = !options.passes.empty();
  const std::vector<Stage> stages =
      stages_of(explicit_passes ? options.passes : default_pipeline(options.inline_policy));
  const auto print_after = [&options](const Stage& stage, const ModelProto& m) {
    if (options.print_after && options.after_pass && stage.contains(*options.print_after))
      options.after_pass(*options.print_after, m);
  };
  result.stats.nodes_before = count_all_nodes(model);
  result.stats.functions_before = static_cast<size_t>(model.functions_size());
  // The first round reads the caller's model, which stays as it was until the end (or on
  // errors); from the first round's result on the rounds work on their own copy.
  ModelProto current;
  ModelProto* input = &model;
  // The round that found its input unchanged: its analysis is the analysis of the result.
  std::unique_ptr<Round> fixed_point;
  if (explicit_passes) {
    // --passes: each stage once, in order, each round analysing its input anew.
    bool specialized = false;
    for (const Stage& stage : stages) {
      if (stage.inlines()) {
        if (input == &model) current = model;
        input = &current;
        auto inlined = inline_stage(current, options, result);
        if (!inlined) return inlined.error();
        if (!stage.has_round()) {
          print_after(stage, current);
          continue;
        }
      }
      ModelProto next;
      Round step(*input, options, stage, result, /*count_specializations=*/stage.specializes() && !specialized,
                 /*take_initializers=*/input != &model, /*try_unchanged=*/false);
      specialized = specialized || stage.specializes();
      auto ran = step.run(next);
      if (!ran) return ran.error();
      if (!*ran) return result;  // errors in result.diagnostics; the model is left as it was
      if (input == &current) discard(current);
      current = std::move(next);
      input = &current;
      print_after(stage, current);
    }
  } else {
    const Stage& round_stage = stages.front();  // specialize, fold, dce and the rewrites
    const bool inlines = stages.size() > 1;     // then inline
    // The hash of the round's input, computed when a round has to compare its result with
    // it (not when it inlined calls or its node or function counts changed: changed for certain).
    std::optional<uint64_t> input_hash;
    // The last round inlined calls: the bodies it brought together carry facts across the
    // old call boundaries, and the next round nearly always finds work, so it goes without
    // the dry run. Should it find none, its result hashes equal to its input below: the same end.
    bool input_just_inlined = false;
    Counters before_last_round;
    for (int round = 0; round < kMaxRounds; ++round) {
      before_last_round = result.stats.counters;
      ModelProto next;
      auto step = std::make_unique<Round>(*input, options, round_stage, result, /*count_specializations=*/round == 0,
                                          /*take_initializers=*/input != &model,
                                          /*try_unchanged=*/!input_just_inlined);
      input_just_inlined = false;
      auto ran = step->run(next);
      if (!ran) return ran.error();
      if (!*ran) return result;  // errors in result.diagnostics; the model is left as it was
      if (step->unchanged()) {
        print_after(round_stage, *input);
        fixed_point = std::move(step);
        break;
      }
      print_after(round_stage, next);
      if (inlines && next.functions_size() > 0) {
        auto inlined = inline_stage(next, options, result);
        if (!inlined) return inlined.error();
        if (*inlined) {
          input_just_inlined = true;
          // The round changed the model: its input (and the analysis of it) can go now
          // rather than after the folding below, which keeps one graph fewer in memory.
          step.reset();
          if (input == &current) discard(current);
        }
        print_after(stages[1], next);
      }
      std::optional<uint64_t> next_hash;
      // Not changed for certain (no calls inlined, as many nodes and functions; the input's
      // initializers may have moved into `next`): compare the hashes.
      const bool same_counts = next.graph().node_size() == input->graph().node_size() &&
                               next.functions_size() == input->functions_size();
      if (step && same_counts) {
        if (!input_hash) input_hash = hash_message(*input);
        next_hash = hash_message(next);
        if (*next_hash == *input_hash) {
          step->give_back(next);
          fixed_point = std::move(step);
          break;
        }
      }
      // (Gone already when the round inlined: it went with the round's analysis.)
      if (step && input == &current) discard(current);
      current = std::move(next);
      input = &current;
      input_hash = next_hash;
    }
    if (!fixed_point) {
      // Each round's changes let the next find more. What the last one did stays (it keeps
      // every output), and the result is analysed once more for its annotation below.
      std::string passes = passes_that_counted(before_last_round, result.stats.counters);
      if (passes.empty()) passes = "dce";  // nothing counted: dead code or functions went
      result.diagnostics.push_back(Diagnostic::make(
          Severity::Warning, "the transform did not reach a fixed point in " + std::to_string(kMaxRounds) +
                                 " rounds: " + passes + " still changed the model in the last round"));
    }
  }
  // Every round analyses the model anew and may find the same things again.
  Diagnostics unique;
  std::set<std::string> seen;
  for (auto& d : result.diagnostics)
    if (seen.insert(d.str()).second) unique.push_back(std::move(d));
  result.diagnostics = std::move(unique);
  if (fixed_point) {
    PhaseClock annotating(result.phases, "annotation", options.infer.on_phase);
    result.annotation = infer::annotate_model(*input, fixed_point->analysis(), options.infer);
    result.annotation.diagnostics = fixed_point->diagnostics();
  } else {  // --passes, or still changing after kMaxRounds: the result has not been analysed yet
    auto annotated = infer_shapes(*input, options.infer);
    if (!annotated) return annotated.error();
    result.annotation = std::move(*annotated);
    add_phases(result.phases, result.annotation.phases);
    infer::merge_assumptions(result.assumptions, result.annotation.assumptions);
  }
  infer::record_assumptions(*input, result.assumptions);
  if (options.infer.debug) result.annotation.debug += counter_lines(result.stats) + assumption_report(result);
  result.stats.calls_kept = count_calls(*input);
  result.stats.nodes_after = count_all_nodes(*input);
  result.stats.functions_after = static_cast<size_t>(input->functions_size());
  if (input != &model) {
    discard(model);
    model = std::move(current);
  }
  // FunctionProto.overload and NodeProto.overload exist from IR version 10.
  if (model.ir_version() < 10 && std::any_of(model.functions().begin(), model.functions().end(),
                                             [](const FunctionProto& f) { return !f.overload().empty(); })) {
    result.annotation.stats.ir_version_raised_from = static_cast<size_t>(model.ir_version());
    model.set_ir_version(10);
  }
  return result;
}

std::string counter_lines(const TransformStats& stats) {
  std::string passes = "passes:";
  for (const PassInfo& p : all_passes()) {
    if (p.kind == PassKind::Body && p.id != Pass::Fold) continue;  // the rewrites: the next line
    std::string counts;
    for (const CounterInfo& c : all_counters())
      if (c.pass == p.id) counts += (counts.empty() ? "" : ", ") + std::string(c.many) + " " + std::to_string(stats.counters[c.id]);
    if (!counts.empty()) passes += " " + std::string(p.name) + " (" + counts + "),";
  }
  passes.back() = '\n';
  std::string rewrites = "rewrites:";
  for (const CounterInfo& c : all_counters())
    if (counts_a_rewrite(c)) rewrites += " " + std::string(c.many) + " " + std::to_string(stats.counters[c.id]) + ",";
  rewrites.back() = '\n';
  return passes + rewrites;
}

std::string summary_line(const TransformStats& s) {
  auto plural = [](size_t n, const char* one, const char* many) { return std::to_string(n) + " " + (n == 1 ? one : many); };
  auto counted = [&s](Counter c) {
    const CounterInfo& info = counter_info(c);
    const size_t n = s.counters[c];
    return std::to_string(n) + " " + std::string(n == 1 ? info.one : info.many);
  };
  const size_t removed = s.nodes_before > s.nodes_after ? s.nodes_before - s.nodes_after : 0;
  std::string line = counted(Counter::IfsFolded) + ", " + counted(Counter::CastLikesFolded) + ", " +
                     counted(Counter::ConstantsFolded) + ", " + plural(removed, "node removed", "nodes removed") + " (" +
                     std::to_string(s.nodes_before) + " -> " + std::to_string(s.nodes_after) + "), functions " +
                     std::to_string(s.functions_before) + " -> " + std::to_string(s.functions_after) + ", " +
                     counted(Counter::Specializations) + " (" + std::to_string(s.counters[Counter::Shared]) + " shared)";
  if (s.counters[Counter::CallsInlined] > 0 || s.calls_kept > 0)
    line += ", " + counted(Counter::CallsInlined) + ", " + plural(s.calls_kept, "call kept", "calls kept");
  // The rewrites after folding: each counter of the rewrite passes that counted something.
  std::string rewrites;
  for (const CounterInfo& c : all_counters())
    if (counts_a_rewrite(c) && s.counters[c.id] > 0)
      rewrites += (rewrites.empty() ? "" : ", ") + std::to_string(s.counters[c.id]) + " " + std::string(c.many);
  if (!rewrites.empty()) line += "; rewrites: " + rewrites;
  return line;
}

}  // namespace shapeprop
