// The round: analyse, specialize each reached function per distinct context, fold, remove
// dead code (round.h).
#include "transform/round.h"

#include <algorithm>
#include <chrono>
#include <deque>
#include <map>
#include <set>
#include <tuple>

#include "infer/analysis_record.h"
#include "infer/annotate.h"
#include "infer/onnx_bridge.h"
#include "ir/body.h"
#include "shapeprop/dim.h"
#include "support/proto_hash.h"
#include "support/subgraphs.h"
#include "transform/function_dce.h"
#include "transform/inline.h"

namespace shapeprop::transform {

Result<bool> Round::run(ModelProto& out) {
  PhaseClock analysing(result_.phases, "analysis", options_.infer.on_phase);
  if (!calls_) {
    auto calls = CallGraph::build(model_);
    if (!calls) return calls.error();
    calls_ = std::move(*calls);
  }
  analysis_ = std::make_unique<infer::Analyzer>(model_, *calls_, options_.infer);
  infer::Analyzer& analysis = *analysis_;
  analysis.run();
  diagnostics_ = analysis.take_diagnostics();
  infer::merge_assumptions(result_.assumptions, analysis.assumptions());
  analysing.stop();
  for (const auto& d : diagnostics_) result_.diagnostics.push_back(d);
  if (has_errors(result_.diagnostics)) return false;
  // Before anything below writes the model (start_from, the fold taking its nodes) or
  // shows it (after_pass).
  if (options_.infer.before_writing)
    if (Status go_on = options_.infer.before_writing(); !go_on) return go_on.error();
  if (try_unchanged_ && changes_nothing(analysis)) {
    unchanged_ = true;
    for (Pass p : watched_) options_.after_pass(p, model_);
    return true;
  }

  PhaseClock specializing(result_.phases, "specialization", options_.infer.on_phase);
  // The stage's time outside its body passes (copying bodies, naming and sharing
  // specializations) is its module pass's.
  const auto writing = std::chrono::steady_clock::now();
  const double body_passes_before = result_.pass_times.total();
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
    std::vector<std::vector<BodyAfter>> bodies_after;  // with watched passes
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
        if (!watched_.empty()) bodies_after.push_back(std::move(body_after_));
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
      if (!watched_.empty()) functions_after_.emplace_back(out.functions_size(), std::move(bodies_after[k]));
      *out.add_functions() = std::move(bodies[k]);
    }
  }

  fold_main_graph(analysis, out);
  restore_missing_functions(out);
  if (!watched_.empty()) print_watched(out);
  if (stage_.specializes() || stage_.dce) {
    PassClock clock(stage_.dce ? &result_.pass_times : nullptr, Pass::Dce);
    remove_unused(out);
  }
  if (stage_.module) {
    const double spent = std::chrono::duration<double>(std::chrono::steady_clock::now() - writing).count() -
                         (result_.pass_times.total() - body_passes_before);
    result_.pass_times.add(*stage_.module, std::max(spent, 0.0));
  }
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

void Round::give_back(ModelProto& out) {
  if (take_initializers_) model_.mutable_graph()->mutable_initializer()->Swap(out.mutable_graph()->mutable_initializer());
}

bool Round::changes_nothing(const infer::Analyzer& analysis) const {
  const GraphProto& g = model_.graph();
  if (model_.functions_size() > 0 || g.value_info_size() > 0) return false;
  transform::BodyTarget target;
  if (constants_may_be_initializers(model_))
    target.main_graph = const_cast<GraphProto*>(&g);  // read only: nothing is emitted
  if (!transform::fold_changes_nothing(g.node(), analysis.graph().facts, target)) return false;
  // Nor would any rewrite apply (a dry run only matches: the nodes are only read).
  const transform::RewriteOptions options = rewrite_options(onnx_opset(model_.opset_import()), {});
  Counters unused;
  if (transform::rewrite_body(const_cast<NodeList&>(g.node()), transform::PlacedFacts::of_analysed(analysis.graph().facts), target,
                              interface_names(g), stage_.rewrites, options, /*dry=*/true, unused)
          .changed)
    return false;
  std::set<std::string> used{""};
  collect_domains(g.node(), used);
  for (const auto& o : model_.opset_import())
    if (!used.count(FunctionId::canonical_domain(o.domain()))) return false;
  return true;
}

transform::RewriteOptions Round::rewrite_options(int64_t opset, transform::RewriteOptions::Where where) const {
  transform::RewriteOptions o;
  o.assume_positive_dims = options_.infer.assume_positive_dims;
  o.onnx_opset = opset;
  o.where = std::move(where);
  o.notes = &result_.rewrites_assuming_positive_dims;
  return o;
}

void Round::start_from(ModelProto& out) {
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

void Round::record_specializations(const infer::Analyzer& analysis) {
  result_.functions = infer::describe_contexts(analysis);
  auto entry = result_.functions.begin();
  for (const auto& [f, contexts] : analysis.live_contexts()) {
    for (size_t i = 0; i < contexts.size(); ++i)
      entry->contexts[i].specialization = FunctionId(f->domain(), name_of_[contexts[i]], f->overload()).str();
    ++entry;
  }
}

std::function<std::string(const infer::CallContext*)> Round::callee_names() {
  return [this](const infer::CallContext* c) {
    auto it = name_of_.find(c);
    if (it != name_of_.end()) return it->second;
    return kept(options_, c->function.domain, c->function.name) ? std::string() : c->function.name;
  };
}

std::function<std::string(const infer::CallContext*)> Round::callee_overloads() {
  if (options_.naming != Naming::Overloads) return nullptr;
  return [this](const infer::CallContext* c) {
    auto it = overload_of_.find(c);
    return it != overload_of_.end() ? it->second : c->function.overload;
  };
}

transform::BodyRun Round::rewrite(NodeList& nodes, const transform::PlacedFacts& facts,
                                  const transform::BodyTarget& target, const ir::ValueNames& interface,
                                  const transform::RewriteOptions& options) {
  if (stage_.rewrites.empty() && !stage_.dce) return {};
  const auto run = transform::rewrite_body(nodes, facts, target, interface, stage_.rewrites, options,
                                           /*dry=*/false, result_.stats.counters, /*tidy=*/stage_.dce, watch());
  if (run.still_changing)
    result_.diagnostics.push_back(Diagnostic::make(
        Severity::Warning, "the rewrites of " + options.where.str() + " did not settle: pass " +
                               std::string(pass_info(*run.still_changing).name) + " still changed it in the last round"));
  return run;
}

namespace {

// Every name `nodes` read or define, those of their subgraphs too.
void collect_names(const NodeList& nodes, std::vector<std::string>& names) {
  for (const auto& n : nodes) {
    for (const auto& i : n.input()) names.push_back(i);
    for (const auto& o : n.output()) names.push_back(o);
    for_each_subgraph(n, [&names](const GraphProto& g) {
      for (const auto& vi : g.input()) names.push_back(vi.name());
      for (const auto& t : g.initializer()) names.push_back(t.name());
      collect_names(g.node(), names);
    });
  }
}

}  // namespace

void Round::rewrite_subgraphs(NodeList& nodes, const infer::BodyFacts& facts,
                              const std::function<const Fact*(std::string_view)>& outer,
                              const std::vector<std::string>& reserved, const transform::RewriteOptions& options) {
  if (stage_.rewrites.empty()) return;
  // The analysed node behind each node of the level that has subgraphs, by its first
  // output's name (folding and the rewrites keep a node's outputs' names, or the node goes).
  const ir::Body& level = facts.body();
  std::vector<const onnx::NodeProto*> analysed(level.num_values(), nullptr);  // by its first output
  bool any = false;
  for (const auto& n : level.nodes()) {
    const auto outs = level.outputs_of(n);
    if (!has_subgraph(*n.proto) || outs.empty() || outs[0] == ir::kNoValue) continue;
    analysed[outs[0]] = n.proto;
    any = true;
  }
  if (!any) return;
  for (auto& node : nodes) {
    if (!has_subgraph(node) || node.output_size() == 0) continue;
    const ir::ValueId first = level.find(node.output(0));
    const onnx::NodeProto* was_node = first == ir::kNoValue ? nullptr : analysed[first];
    if (!was_node) continue;
    for (auto& attribute : *node.mutable_attribute()) {
      if (attribute.type() != onnx::AttributeProto::GRAPH || !attribute.has_g()) continue;
      const onnx::AttributeProto* was = nullptr;
      for (const auto& a : was_node->attribute())
        if (a.name() == attribute.name() && a.has_g()) was = &a;
      const infer::BodyFacts* walk = was ? facts.subgraph(was->g()) : nullptr;
      // Not where ONNX's inference failed on a node (BodyFacts::note_inference_failed):
      // a rewrite there (a split into a sequence become a Split and a Squeeze) would let
      // a runtime that infers the branch at load see the failure, and refuse a model
      // that runs when the branch is not taken.
      if (!walk || walk->inference_failed()) continue;
      GraphProto& g = *attribute.mutable_g();
      NodeList& inner = *g.mutable_node();
      // A name the subgraph defines has the fact its walk gave it; one it reads from
      // around it, the enclosing scope's.
      auto own = [walk](std::string_view name) -> const Fact* {
        const ir::ValueId v = walk->body().find(name);
        return v == ir::kNoValue ? nullptr : walk->fact(v);
      };
      ir::MutableBody::FactSource source;
      source.output = [&inner, &own](size_t i, size_t k) { return own(inner.Get(static_cast<int>(i)).output(static_cast<int>(k))); };
      std::function<const Fact*(std::string_view)> around = [&own, &outer, walk](std::string_view name) -> const Fact* {
        if (walk->body().find(name) != ir::kNoValue) return own(name);
        return outer(name);
      };
      source.outer = around;
      ir::ValueNames interface;
      for (const auto& vi : g.input()) interface.push_back(vi.name());
      for (const auto& vi : g.output()) interface.push_back(vi.name());
      transform::BodyTarget target;  // constants as Constant nodes
      const auto run = transform::rewrite_body(inner, source, target, interface, stage_.rewrites, options, /*dry=*/false,
                                               result_.stats.counters, /*tidy=*/stage_.dce, {}, &reserved);
      if (run.still_changing)
        result_.diagnostics.push_back(Diagnostic::make(
            Severity::Warning, "the rewrites of a subgraph of " + options.where.str() + " did not settle: pass " +
                                   std::string(pass_info(*run.still_changing).name) + " still changed it in the last round"));
      rewrite_subgraphs(inner, *walk, around, reserved, options);
    }
  }
}

transform::BodyTarget Round::body_target() {
  transform::BodyTarget target;
  target.callee_name = callee_names();
  target.callee_overload = callee_overloads();
  target.decide = stage_.fold;
  target.tidy = stage_.dce;
  return target;
}

FunctionProto Round::fold_function(const FunctionProto& f, const infer::Summary& facts, const infer::CallContext& context) {
  FunctionProto body;
  body.set_domain(f.domain());
  if (f.has_overload()) body.set_overload(f.overload());
  if (f.has_doc_string()) body.set_doc_string(f.doc_string());
  *body.mutable_opset_import() = f.opset_import();
  *body.mutable_input() = f.input();
  *body.mutable_output() = f.output();
  ir::ValueNames io(f.input().begin(), f.input().end());
  io.insert(io.end(), f.output().begin(), f.output().end());
  transform::BodyTarget target = body_target();
  target.attributes = &context.attributes;
  transform::PlacedFacts placed(&facts.facts);
  NodeList nodes;
  {
    PassClock clock(stage_.fold ? &result_.pass_times : nullptr, Pass::Fold);
    nodes = transform::fold_body(f.node(), facts.facts, target, io, result_.stats.counters, &placed);
  }
  if (!watched_.empty()) {
    body_after_.assign(watched_.size(), BodyAfter());
    take(Pass::Specialize, nodes);
    take(Pass::Fold, nodes);
  }
  transform::RewriteOptions::Where where(
      std::function<std::string()>([&f, &context] { return "function " + FunctionId::of(f).str() + " " + context.str(); }));
  int64_t opset = onnx_opset(f.opset_import());
  if (opset == 0) opset = onnx_opset(model_.opset_import());
  const auto options = rewrite_options(opset, std::move(where));
  rewrite(nodes, placed, target, io, options);
  if (!stage_.rewrites.empty() && std::any_of(nodes.begin(), nodes.end(), [](const auto& n) { return has_subgraph(n); })) {
    std::vector<std::string> reserved(io.begin(), io.end());
    collect_names(nodes, reserved);
    rewrite_subgraphs(nodes, facts.facts, placed.source().outer, reserved, options);
  }
  body.mutable_node()->Swap(&nodes);
  return body;
}

void Round::fold_main_graph(const infer::Analyzer& analysis, ModelProto& out) {
  const GraphProto& g = model_.graph();
  GraphProto& target_graph = *out.mutable_graph();
  ir::ValueNames keep = interface_names(g);
  for (const auto& t : target_graph.initializer()) keep.push_back(t.name());
  transform::BodyTarget target = body_target();
  if (constants_may_be_initializers(model_)) target.main_graph = &target_graph;
  transform::PlacedFacts placed(&analysis.graph().facts, static_cast<size_t>(target_graph.initializer_size()));
  NodeList nodes;
  NodeList* taken_from = nullptr;  // the input's nodes, when the fold takes them (spent_input)
  bool whole = false;          // the fold took the input's list whole
  bool untouched = false;      // the fold took every node as it was
  {
    PassClock clock(stage_.fold ? &result_.pass_times : nullptr, Pass::Fold);
    // An input the round may spend gives its nodes to the result instead of copies of
    // them. Not where a node holds a subgraph: those are rewritten after the graph, their
    // facts looked up by the names the analysis views in the input's nodes (which the
    // graph's rewrites may rename or erase); the rewrites' MutableBody reads those views
    // only as it is built, before any change.
    const bool spend = take_initializers_ && g.node_size() > 0 &&
                       std::none_of(g.node().begin(), g.node().end(), [](const NodeProto& n) { return has_subgraph(n); });
    if (spend) taken_from = model_.mutable_graph()->mutable_node();
    // A graph that folding would give back as it is (a round after inlining, as a rule) is
    // taken (or copied) as it is, its facts read from the analysis by place: what
    // fold_body would record, without its work per node and name.
    if (transform::fold_gives_back(g.node(), analysis.graph().facts, target)) {
      if (taken_from) {
        nodes.Swap(taken_from);
        whole = true;
      } else {
        nodes = g.node();
      }
      placed = transform::PlacedFacts::of_analysed(analysis.graph().facts);
    } else {
      nodes = transform::fold_body(g.node(), analysis.graph().facts, target, keep, result_.stats.counters, &placed, taken_from,
                                   &untouched);
    }
    untouched = untouched || whole;
    spent_input_ = taken_from != nullptr;
  }
  if (!watched_.empty()) {
    body_after_.assign(watched_.size(), BodyAfter());
    main_being_written_ = &target_graph;
    take(Pass::Specialize, nodes);
    take(Pass::Fold, nodes);
  }
  const auto options = rewrite_options(onnx_opset(model_.opset_import()), transform::RewriteOptions::Where("graph '" + g.name() + "'"));
  const transform::BodyRun run = rewrite(nodes, placed, target, interface_names(g), options);
  if (spent_input_ && untouched && !run.nodes_changed && (whole || nodes.size() == taken_from->size())) {
    // Nothing changed the nodes the fold took: the input takes them back (its analysis
    // views their names), and the result a copy, so that a round that changed nothing is
    // found so (by the comparison with its input) as without the taking.
    if (whole) {
      nodes.Swap(taken_from);
    } else {
      for (int i = 0; i < nodes.size(); ++i) taken_from->Mutable(i)->Swap(nodes.Mutable(i));
    }
    nodes = *taken_from;
    spent_input_ = false;
  }
  if (!stage_.rewrites.empty() && std::any_of(nodes.begin(), nodes.end(), [](const auto& n) { return has_subgraph(n); })) {
    // (Not `keep`: it views initializers the rewrites may have removed.)
    const ir::ValueNames io = interface_names(g);
    std::vector<std::string> reserved(io.begin(), io.end());
    for (const auto& t : target_graph.initializer()) reserved.push_back(t.name());
    collect_names(nodes, reserved);
    // What the subgraphs read from the graph: the analysis's facts by name, and for an
    // initializer folding or the rewrites made (a constant a subgraph's folding hoisted),
    // its value, so that a rewrite there sees it is a constant.
    // (Looked for one by one: few names reach that far.)
    const auto source = placed.source();
    std::deque<Fact> made;
    const std::function<const Fact*(std::string_view)> outer = [&](std::string_view name) -> const Fact* {
      if (const Fact* f = source.outer(name)) return f;
      const auto& inputs = target_graph.input();
      if (std::any_of(inputs.begin(), inputs.end(), [name](const auto& in) { return in.name() == name; })) return nullptr;
      for (const auto& t : target_graph.initializer())
        if (t.name() == name) return &made.emplace_back(Fact::of_tensor(t));
      return nullptr;
    };
    rewrite_subgraphs(nodes, analysis.graph().facts, outer, reserved, options);
  }
  target_graph.mutable_node()->Swap(&nodes);
  if (!watched_.empty()) {
    main_after_ = std::move(body_after_);
    main_being_written_ = nullptr;
  }
  // (A model whose constants stay nodes has the rewrites tidy no initializer.)
  if (stage_.dce && !run.initializers_tidied) {
    PassClock clock(&result_.pass_times, Pass::Dce);
    remove_unused_initializers(target_graph);
  }
}

void Round::take(Pass pass, const NodeList& nodes) {
  auto it = std::find(watched_.begin(), watched_.end(), pass);
  if (it == watched_.end()) return;
  BodyAfter& after = body_after_[static_cast<size_t>(it - watched_.begin())];
  after.nodes = nodes;
  if (main_being_written_) after.initializers = main_being_written_->initializer();
  after.taken = true;
}

transform::PassWatch Round::watch() {
  transform::PassWatch w;
  w.times = &result_.pass_times;
  if (!watched_.empty()) w.after_first = [this](Pass p, const ir::MutableBody& body) { take(p, body.copy_nodes()); };
  return w;
}

void Round::print_watched(ModelProto& out) {
  // Each body as it was after the pass swapped into `out` for the print, then back.
  GraphProto& g = *out.mutable_graph();
  for (size_t i = 0; i < watched_.size(); ++i) {
    const auto swap_bodies = [&] {
      if (i < main_after_.size() && main_after_[i].taken) {
        g.mutable_node()->Swap(&main_after_[i].nodes);
        g.mutable_initializer()->Swap(&main_after_[i].initializers);
      }
      for (auto& [index, after] : functions_after_)
        if (after[i].taken) out.mutable_functions(index)->mutable_node()->Swap(&after[i].nodes);
    };
    swap_bodies();
    options_.after_pass(watched_[i], out);
    swap_bodies();
  }
}

void Round::restore_missing_functions(ModelProto& out) {
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

}  // namespace shapeprop::transform
