// The inline stage (inline_stage.h): the policy's choice of calls, the opsets
// reconciled, ONNX's inliner, and the folding after it.
#include "transform/inline_stage.h"

#include <algorithm>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "eval/fold.h"
#include "infer/onnx_bridge.h"
#include "ir/body.h"
#include "ir/mutable_body.h"
#include "ir/names.h"
#include "shapeprop/expand_ops.h"
#include "shapeprop/phases.h"
#include "support/subgraphs.h"
#include "transform/fold_body.h"
#include "transform/function_dce.h"
#include "transform/inline.h"

namespace shapeprop::transform {

namespace {

using onnx::FunctionProto;
using onnx::GraphProto;
using onnx::ModelProto;
using onnx::NodeProto;

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
  InlinedSize(const ModelProto& m, const std::set<std::pair<std::string, std::string>>& selected) {
    for (const auto& f : m.functions()) functions_.insert_or_assign(FunctionId::of(f), &f);  // the last, as before
    for (const auto& [domain, name] : selected) {
      selected_.emplace(domain, name);
      selected_function_names_.insert(name);
    }
  }

  // The main graph with the selected calls expanded, plus each function that stays.
  size_t model(const ModelProto& m) {
    size_t total = nodes(m.graph().node());
    for (const auto& f : m.functions())
      if (!selected(f.domain(), f.name())) total = add(total, body(f));
    return total;
  }

  // At least model(m), without a look at the main graph's calls: each node of it (to any
  // depth) counted as the largest selected body.
  size_t bound(const ModelProto& m) {
    size_t largest = 1;
    size_t total = 0;
    for (const auto& f : m.functions()) {
      if (selected(f.domain(), f.name()))
        largest = std::max(largest, body(f));
      else
        total = add(total, body(f));
    }
    size_t main;
    if (__builtin_mul_overflow(transform::count_nodes(m.graph().node()), largest, &main)) main = kSaturated;
    return add(total, std::min(main, kSaturated));
  }

 private:
  static constexpr size_t kSaturated = std::numeric_limits<size_t>::max() / 2;
  // Views of the caller's selection (which outlives this), looked up without copies: the
  // size is measured once per function the fit drops, over every call of the model.
  std::set<std::pair<std::string_view, std::string_view>> selected_;
  std::unordered_map<FunctionId, const FunctionProto*, FunctionId::Hash, FunctionId::Equal> functions_;
  std::map<const FunctionProto*, size_t> sizes_;
  // The selected functions' names (views of selected_'s): most nodes are ops no selected
  // function is named after, told apart without building a (domain, name) pair.
  std::unordered_set<std::string_view> selected_function_names_;

  static size_t add(size_t a, size_t b) { return std::min(a + b, kSaturated); }  // both below kSaturated
  bool selected(std::string_view domain, std::string_view name) const {
    return selected_function_names_.contains(name) && selected_.contains({domain, name});
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
        if (auto f = functions_.find(FunctionId::View::of(n)); f != functions_.end()) {
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
  if (InlinedSize(m, chosen).bound(m) <= limit) return dropped;  // far within, as most models are
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
    // The bodies of expanded ONNX ops (shapeprop/expand_ops.h) go whatever the policy.
    choice = (choice.value_or(true) && !kept(options, f.domain(), f.name()) &&
              (options.inline_policy == InlinePolicy::All || (options.inline_policy == InlinePolicy::Small && small) ||
               f.domain() == kExpandedDomain));
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
  // The calls inlined go where the caller keeps what the transform is done with, if it does
  // (TransformOptions::retire): 6,284 at L=128, whose destruction was 1.5% of the run.
  std::vector<std::unique_ptr<onnx::NodeProto>> spent_calls;
  transform::inline_selected_functions(m, selected, options.retire ? &spent_calls : nullptr);
  if (!spent_calls.empty()) {
    ModelProto spent;
    auto& nodes = *spent.mutable_graph()->mutable_node();
    nodes.Reserve(static_cast<int>(spent_calls.size()));
    for (auto& n : spent_calls) nodes.AddAllocated(n.release());
    options.retire(std::move(spent));
  }
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
// among it): this only saves it the work. Identity chains and dead nodes are left to that
// round where one follows (`tidy` false), which removes them anyway.
void fold_inlined_graph(ModelProto& m, bool tidy) {
  GraphProto& g = *m.mutable_graph();
  ir::ValueNames keep = interface_names(g);
  for (const auto& t : g.initializer()) keep.push_back(t.name());
  // In place, as fold_body would have it: the nodes that stay are moved, not copied. A
  // Constant whose name a subgraph defines too stays a node, as there.
  // (Decided before any subgraph is tidied: the names view the subgraphs' strings.)
  std::vector<bool> may_move(static_cast<size_t>(g.node_size()), false);
  {
    ir::NameCounts subgraph_names;
    subgraph_names.add_subgraph_definitions(g.node());
    for (int i = 0; i < g.node_size(); ++i) {
      const NodeProto& n = g.node(i);
      may_move[static_cast<size_t>(i)] =
          constants_may_be_initializers(m) && FunctionId::is_default_domain(n.domain()) &&
          std::string_view(n.op_type()) == "Constant" && n.output_size() == 1 && !n.output(0).empty() &&
          !subgraph_names.contains(n.output(0));
    }
  }
  std::vector<bool> kept(static_cast<size_t>(g.node_size()), false);
  for (int i = 0; i < g.node_size(); ++i) {
    NodeProto& n = *g.mutable_node(i);
    if (may_move[static_cast<size_t>(i)]) {
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
  if (tidy) transform::tidy_nodes(*g.mutable_node(), keep, /*remove_dead=*/true);
  remove_unused_initializers(g);
  remove_unused(m);
}

}  // namespace

Result<bool> inline_stage(ModelProto& m, const TransformOptions& options, TransformResult& result, bool round_follows) {
  if (m.functions_size() == 0) return false;
  PhaseClock inlining(result.phases, "inlining", options.infer.on_phase);
  const size_t inlined_before = result.stats.counters[Counter::CallsInlined];
  try {
    inline_functions(m, options, result);
  } catch (const std::exception& e) {
    return Diagnostic::error(std::string("inlining failed: ") + e.what());
  }
  const bool inlined = result.stats.counters[Counter::CallsInlined] > inlined_before;
  fold_inlined_graph(m, /*tidy=*/!(inlined && round_follows));
  return inlined;
}

}  // namespace shapeprop::transform
