// Folding a body by its facts.
//
// Walks the original nodes with the analysis of one context and emits:
//  - for an If whose condition the context decides, the taken branch in its place (its
//    names made unique in the new scope, its initializers made constants, its outputs
//    wired to the If's outputs);
//  - for a node whose outputs are all known constants, those constants (initializers at
//    the top of the main graph, Constant nodes elsewhere);
//  - CastLike as Cast, or nothing when the input already has the type;
//  - Expand and Reshape to the shape their input already has as nothing;
//  - calls retargeted to the specialized function of their context, attribute
//    references replaced by the context's values;
// then, in subgraphs (with BodyTarget::tidy), collapses Identity chains and drops dead
// nodes; at the top level both wait for the mutable body (rewrite_body's tidy).
#include "fold_body.h"

#include <algorithm>
#include <memory>
#include <optional>

#include "ir/names.h"
#include "support/op_names.h"
#include "support/repeated_fields.h"
#include "support/subgraphs.h"
#include "transform/function_dce.h"

namespace shapeprop::transform {

namespace {

using onnx::AttributeProto;
using onnx::GraphProto;
using onnx::NodeProto;

bool is_op(const NodeProto& n, std::string_view op) {
  return FunctionId::is_default_domain(n.domain()) && n.op_type() == op;
}

// Ops whose result is not a function of their inputs: never replaced by a value.
bool is_random(const NodeProto& n) {
  return FunctionId::is_default_domain(n.domain()) && draws_random_numbers(n.op_type());
}

using Names = ir::NameSet;
using Keep = ir::NameSet::Keep;

// The names defined at one scope level, for telling whether a name that an inlined branch
// defines clashes with one already there. Built only when a branch is inlined into the
// level (most levels never are), from what the level starts with: every name defined at
// the level before the first inlined one is among those. It also counts the names the
// subgraphs of the level's nodes define (`nodes`, as written): a branch inlined here may
// not define a name that the subgraph of another node at the level defines, or ONNX's
// scoping breaks (a subgraph after it would define a name the level has already) and
// ONNX Runtime may refuse the model whatever the order.
class LevelNames {
 public:
  LevelNames(std::function<void(Names&)> initial, const NodeList& nodes)
      : initial_(std::move(initial)), nodes_(nodes) {}
  bool contains(const std::string& name) {
    build();
    return names_->contains(name);
  }
  // A name defined at the level (known already, unless a branch was inlined here).
  void add(const std::string& name) {
    if (names_) names_->insert(name);
  }
  // How many times the subgraphs of the level's nodes define `name`.
  uint32_t nested(std::string_view name) {
    if (!nested_) {
      nested_.emplace();
      nested_->add_subgraph_definitions(nodes_);
    }
    return nested_->count(name);
  }

 private:
  void build() {
    if (names_) return;
    names_.emplace();
    initial_(*names_);
  }
  std::function<void(Names&)> initial_;
  const NodeList& nodes_;
  std::optional<Names> names_;
  std::optional<ir::NameCounts> nested_;
};

// One scope being folded (the body, an inlined branch, a subgraph) and the scopes around
// it: its values numbered (`body`, whose operands say which scope a read reaches), what
// the analysis knows of them (`facts`: nullptr for a subgraph the analysis did not enter,
// where nothing is known), and the names the output gives them where those differ from
// their own (a branch inlined into a level defines its values there, renamed apart where
// they clash). Reads take their value's name by value id, so that a rename reaches every
// read of that value, nested ones too, and no other value of the same name.
struct Scope {
  const infer::BodyFacts* facts = nullptr;
  const ir::Body* body = nullptr;
  Scope* outer = nullptr;
  std::vector<std::string> renamed;  // by ValueId; empty where the value keeps its name

  const Scope* reached(const ir::Operand& op) const {
    if (!op.resolved() || op.omitted()) return nullptr;
    const Scope* s = this;
    for (uint32_t d = 0; d < op.depth && s; ++d) s = s->outer;
    return s;
  }
  const Fact* read(const ir::Operand& op) const {
    const Scope* s = reached(op);
    return s && s->facts ? s->facts->fact(op.id) : nullptr;
  }
  // The name a read of `op`, spelt `spelt` in the proto, has in the output.
  const std::string& name_of(const ir::Operand& op, const std::string& spelt) const {
    const Scope* s = reached(op);
    if (!s || op.id >= s->renamed.size() || s->renamed[op.id].empty()) return spelt;
    return s->renamed[op.id];
  }
  void rename(ir::ValueId v, const std::string& name) {
    if (v == ir::kNoValue || !body) return;
    if (renamed.size() <= v) renamed.resize(body->num_values());
    renamed[v] = name;
  }
};

// The scope of `g`, a subgraph (or a taken branch) of a node in `outer`: indexed by the
// analysis where it entered `g`, otherwise here (`owned` keeps that index).
Scope scope_of(const onnx::GraphProto& g, Scope& outer, std::unique_ptr<ir::Body>& owned) {
  Scope s;
  s.facts = outer.facts ? outer.facts->subgraph(g) : nullptr;
  if (s.facts) {
    s.body = &s.facts->body();
  } else {
    owned = std::make_unique<ir::Body>(g, outer.body, nullptr);
    s.body = owned.get();
  }
  s.outer = &outer;
  return s;
}

class Folder {
 public:
  // `all_names` fills in every name of the body (defined or read, at any depth), from
  // which fresh names are kept apart; it runs on the first fresh name, if ever.
  Folder(const BodyTarget& target, std::function<void(Names&)> all_names, Counters& stats,
         PlacedFacts* facts_out = nullptr)
      : target_(target), all_names_(std::move(all_names)), stats_(stats), facts_out_(facts_out) {}

  // Folds the nodes of one scope level. `level` holds the names defined at this level;
  // `inlined` is set when the nodes come from a branch inlined into it, whose names may
  // clash with the level's; `top` when this is the top of the main graph.
  void fold(const NodeList& in, Scope& scope, NodeList* out, LevelNames& level, bool inlined, bool top) {
    for (int i = 0; i < in.size(); ++i) {
      const NodeProto& n = in.Get(i);
      const Node node{n, scope.body->nodes()[static_cast<size_t>(i)], scope};
      switch (classify(node, top)) {
        case Rewrite::TakenBranch: {
          inline_branch(node, branch_of(node), out, level, inlined, top);
          ++stats_[Counter::IfsFolded];
          break;
        }
        case Rewrite::Constants:
          emit_constants(node, out, level, inlined, top);
          if (!is_op(n, "Constant")) ++stats_[Counter::ConstantsFolded];
          if (is_op(n, "CastLike")) ++stats_[Counter::CastLikesFolded];
          break;
        case Rewrite::CastLike:
          fold_castlike(node, out, level, inlined);
          ++stats_[Counter::CastLikesFolded];
          break;
        case Rewrite::Identity: {
          ++stats_[Counter::IdentitiesFolded];
          NodeProto id = rewritten(node, "Identity", level, inlined);
          id.mutable_input()->DeleteSubrange(1, id.input_size() - 1);
          id.clear_attribute();
          emit(out, std::move(id));
          break;
        }
        case Rewrite::Copy: {
          if (top && !inlined && take_from_ && take(node, i, out, level)) break;
          // Written in its place: no copy of the copy.
          NodeProto& r = *out->Add();
          copy_into(r, node, level, inlined);
          if (recording()) facts_out_->end_node(r.output_size());
          break;
        }
      }
    }
  }

  // Nodes of the top level that fold() would copy as they are may be taken from `nodes`
  // (the list given to fold) instead: fold() leaves an empty node in their place in its
  // output, and finish_taking() swaps each in once folding no longer reads `nodes`.
  void take_from(NodeList& nodes) { take_from_ = &nodes; }

  // Swaps the nodes take() chose from the list of take_from() into their places in `out`
  // (the list fold() wrote), retargeting calls; those places in the original are left
  // empty. True when `out` is the original list itself: every node taken, none changed by
  // its retargeting.
  bool finish_taking(NodeList& out) {
    bool untouched = taken_.size() == static_cast<size_t>(take_from_->size()) && out.size() == take_from_->size();
    for (Taken& t : taken_) {
      NodeProto& r = *out.Mutable(t.out);
      r.Swap(take_from_->Mutable(t.in));
      if (t.retarget) untouched = retarget(r, std::move(*t.retarget)) && untouched;
    }
    taken_.clear();
    return untouched;
  }

  // The top level being folded, its scope and the names the graph keeps (before fold()).
  void set_top(const NodeList& nodes, Scope& scope, const ir::ValueNames& protected_names) {
    top_nodes_ = &nodes;
    top_scope_ = &scope;
    top_protected_ = &protected_names;
  }

  // True when fold() of these nodes at the top of their body would give them back as they
  // are: every node is a plain copy (no rewrite, no subgraph, no attribute reference, no
  // call to retarget), and with `no_identity` none is an Identity (which the mutable body
  // then collapses). Conservative: a false answer only means "maybe".
  bool leaves_unchanged(const NodeList& in, Scope& scope, bool no_identity) const {
    if (!scope.facts) return false;
    for (int i = 0; i < in.size(); ++i) {
      const NodeProto& n = in.Get(i);
      const Node node{n, scope.body->nodes()[static_cast<size_t>(i)], scope};
      if (classify(node, /*top=*/true) != Rewrite::Copy || (no_identity && is_op(n, "Identity"))) return false;
      if (scope.facts->call_of(static_cast<size_t>(i))) return false;
      for (const auto& a : n.attribute())
        if (a.has_ref_attr_name() || a.has_g() || a.graphs_size() > 0) return false;
    }
    return true;
  }

 private:
  const BodyTarget& target_;
  std::function<void(Names&)> all_names_;
  std::optional<Names> names_;
  Counters& stats_;
  PlacedFacts* facts_out_;  // the facts of the top level's nodes and initializers, by place
  int subgraph_depth_ = 0;
  std::vector<const GraphProto*> subgraphs_;  // the subgraphs being folded, the innermost last
  // For each If whose taken branch is being inlined, the outermost first: how many times
  // its subgraphs define each name.
  std::vector<ir::NameCounts> inlining_;
  // The top level and its scope (fold_body sets them), and the names its subgraphs that
  // stay define (kept_subgraph_defines).
  const NodeList* top_nodes_ = nullptr;
  Scope* top_scope_ = nullptr;
  const ir::ValueNames* top_protected_ = nullptr;  // the names the graph keeps
  std::optional<ir::NameCounts> kept_subgraph_names_;

  // A call's specialization: the callee it is retargeted to, and its overload if set.
  struct Retarget {
    std::string callee;
    std::optional<std::string> overload;
  };
  // The nodes chosen to be taken from the original list rather than copied
  // (take_from): their places in the output and in the original, and a call's retargeting.
  struct Taken {
    int out;
    int in;
    std::optional<Retarget> retarget;
  };
  NodeList* take_from_ = nullptr;
  std::vector<Taken> taken_;

  // Whether the facts of what is emitted now are recorded: at the top level only.
  bool recording() const { return facts_out_ && subgraph_depth_ == 0; }
  // Adds a node whose outputs define() named (so recorded) to `out`.
  void emit(NodeList* out, NodeProto n) {
    if (recording()) facts_out_->end_node(n.output_size());
    *out->Add() = std::move(n);
  }

  // A node being folded, with its place in the analysed body (nullptr where nothing is known).
  struct Node {
    const NodeProto& proto;
    const ir::Body::Node& index;
    Scope& scope;

    ir::ValueId output_id(int k) const { return scope.body->outputs_of(index)[static_cast<size_t>(k)]; }
    const ir::Operand& input_operand(int k) const { return scope.body->inputs_of(index)[static_cast<size_t>(k)]; }
    const Fact* output(int k) const {
      const ir::ValueId v = output_id(k);
      return v == ir::kNoValue || !scope.facts ? nullptr : scope.facts->fact(v);
    }
    const Fact* input(int k) const { return k < proto.input_size() ? scope.read(input_operand(k)) : nullptr; }
    // Whether no valid execution runs the node (infer::BodyFacts::State::Invalid: it
    // breaks its type constraints, or reads what such a node computes).
    bool invalid() const {
      if (!scope.facts) return false;
      for (int k = 0; k < proto.output_size(); ++k)
        if (const ir::ValueId v = output_id(k); v != ir::kNoValue && scope.facts->state(v) == infer::BodyFacts::State::Invalid)
          return true;
      return false;
    }
    // The name input k has in the output.
    const std::string& input_name(int k) const { return scope.name_of(input_operand(k), proto.input(k)); }
  };

  // What fold() does with a node.
  enum class Rewrite {
    TakenBranch,  // a decided If: its taken branch in its place
    Constants,    // every output a known constant: the constants
    CastLike,     // CastLike with both types known: Cast, or nothing
    Identity,     // a node whose output is its input: Identity (then collapsed)
    Copy,         // the node itself (renamed, attributes resolved, calls retargeted)
  };

  Rewrite classify(const Node& node, bool top) const {
    const NodeProto& n = node.proto;
    if (!target_.decide) return Rewrite::Copy;
    if (is_op(n, "If") && branch_of(node) >= 0 && taken_branch(n, branch_of(node))) return Rewrite::TakenBranch;
    if (node.invalid()) return Rewrite::Copy;  // nothing its facts decide: it has none
    if (all_outputs_constant(node) && !is_random(n) && (!is_op(n, "Constant") || lifts_constant(node, top)))
      return Rewrite::Constants;
    if (is_op(n, "CastLike") && castlike_foldable(node)) return Rewrite::CastLike;
    if (returns_its_input(n) && keeps_shape(node)) return Rewrite::Identity;
    return Rewrite::Copy;
  }

  // Whether a Constant node becomes an initializer (emit_value): in the main graph, but
  // for the outputs of a subgraph, which its nodes must define.
  bool lifts_constant(const Node& node, bool top) const {
    if (!target_.main_graph) return false;
    if (top) return true;
    return !subgraphs_.empty() && !is_output(*subgraphs_.back(), node.proto.output(0));
  }

  static int branch_of(const Node& node) {
    return node.scope.facts ? node.scope.facts->branch_of(node.scope.body->index_of(node.index)) : -1;
  }

  bool all_outputs_constant(const Node& node) const {
    const NodeProto& n = node.proto;
    if (n.output_size() == 0) return false;
    for (int k = 0; k < n.output_size(); ++k) {
      if (n.output(k).empty()) return false;
      const Fact* f = node.output(k);
      if (!f || !f->has_tensor()) return false;
    }
    return true;
  }

  // Ops whose output is their first input whenever the shapes are equal: Expand and
  // Reshape to the input's own shape; a reduction that keeps every element (no axes with
  // noop_with_empty_axes, or axes of size 1 kept) gives each element back, for the
  // reductions whose value over one element is that element.
  static bool returns_its_input(const NodeProto& n) {
    return FunctionId::is_default_domain(n.domain()) &&
           one_of(n.op_type(), {"Expand", "Reshape", "ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd"});
  }

  // The output's shape is the input's, dim for dim, with nothing unknown.
  bool keeps_shape(const Node& node) const {
    const NodeProto& n = node.proto;
    if (n.input_size() < 1 || n.output_size() != 1) return false;
    const Fact* in = node.input(0);
    const Fact* out = node.output(0);
    if (!in || !out || !in->shape || !out->shape || in->elem_type != out->elem_type) return false;
    if (*in->shape != *out->shape) return false;
    return std::none_of(in->shape->begin(), in->shape->end(), [](const Dim& d) { return d.is_unknown(); });
  }

  std::string fresh(const std::string& base) {
    if (!names_) {
      names_.emplace();
      all_names_(*names_);
    }
    return names_->fresh(base);
  }

  // The name the value `v` of `scope`, spelt `original`, gets at this level, where it is
  // defined now; `fact` is what is known of it.
  std::string define(const std::string& original, ir::ValueId v, Scope& scope, LevelNames& level, bool inlined,
                     const Fact* fact) {
    if (recording()) facts_out_->add_output(fact);
    if (original.empty()) return original;
    std::string name = original;
    if (inlined && (level.contains(original) || defined_elsewhere(original, level))) name = fresh(original);
    level.add(name);
    if (name != original) scope.rename(v, name);
    return name;
  }
  // Whether a subgraph that stays once the top level is folded defines `name`: one of a
  // top-level node's but a decided If's, whose taken branch's nodes count instead.
  bool kept_subgraph_defines(const std::string& name) {
    if (!kept_subgraph_names_) {
      kept_subgraph_names_.emplace();
      if (top_nodes_) count_kept_subgraph_definitions(*top_nodes_, *top_scope_, *kept_subgraph_names_);
    }
    return kept_subgraph_names_->contains(name);
  }
  void count_kept_subgraph_definitions(const NodeList& nodes, Scope& scope, ir::NameCounts& counts) {
    for (int i = 0; i < nodes.size(); ++i) {
      const NodeProto& n = nodes.Get(i);
      if (!has_subgraph(n)) continue;  // nothing to count (and no If to decide)
      const Node node{n, scope.body->nodes()[static_cast<size_t>(i)], scope};
      if (classify(node, /*top=*/true) != Rewrite::TakenBranch) {
        counts.add_subgraph_definitions(node.proto);
        continue;
      }
      const GraphProto* g = taken_branch(node.proto, branch_of(node));
      std::unique_ptr<ir::Body> owned;
      Scope branch = scope_of(*g, scope, owned);
      count_kept_subgraph_definitions(g->node(), branch, counts);
    }
  }

  // Whether a subgraph of a node at the level, other than the If whose branch is being
  // inlined (the innermost, inlining_.back()), defines `name`.
  bool defined_elsewhere(const std::string& name, LevelNames& level) const {
    const uint32_t here = inlining_.empty() ? 0 : inlining_.back().count(name);
    return level.nested(name) > here;
  }
  std::string define_output(const Node& node, int k, LevelNames& level, bool inlined) {
    return define(node.proto.output(k), node.output_id(k), node.scope, level, inlined, node.output(k));
  }

  NodeProto rewritten(const Node& node, const char* op, LevelNames& level, bool inlined) {
    const NodeProto& n = node.proto;
    NodeProto r;
    r.set_name(n.name());
    r.set_op_type(op);
    for (int k = 0; k < n.input_size(); ++k) r.add_input(node.input_name(k));
    for (int k = 0; k < n.output_size(); ++k) r.add_output(define_output(node, k, level, inlined));
    return r;
  }

  static bool castlike_foldable(const Node& node) {
    const NodeProto& n = node.proto;
    if (n.input_size() != 2 || n.output_size() != 1) return false;
    const Fact* x = node.input(0);
    const Fact* like = node.input(1);
    return x && like && !x->other && !like->other && x->elem_type != 0 && like->elem_type != 0;
  }

  // CastLike whose types castlike_foldable() knows: Cast to the like's type, or Identity.
  void fold_castlike(const Node& node, NodeList* out, LevelNames& level, bool inlined) {
    const NodeProto& n = node.proto;
    const Fact* x = node.input(0);
    const Fact* like = node.input(1);
    if (x->elem_type == like->elem_type) {
      NodeProto id = rewritten(node, "Identity", level, inlined);
      id.mutable_input()->RemoveLast();
      emit(out, std::move(id));
      ++stats_[Counter::CastLikesRemoved];
      return;
    }
    ++stats_[Counter::CastLikesToCast];
    NodeProto cast = rewritten(node, "Cast", level, inlined);
    cast.mutable_input()->RemoveLast();
    auto* to = cast.add_attribute();
    to->set_name("to");
    to->set_type(AttributeProto::INT);
    to->set_i(like->elem_type);
    for (const auto& a : n.attribute())
      if (a.name() == "saturate") *cast.add_attribute() = a;
    emit(out, std::move(cast));
  }

  void emit_constants(const Node& node, NodeList* out, LevelNames& level, bool inlined, bool top) {
    const NodeProto& n = node.proto;
    for (int k = 0; k < n.output_size(); ++k)
      emit_value(define_output(node, k, level, inlined), node.output_id(k), node.scope, *node.output(k)->to_tensor(),
                 node.output(k), out, top);
  }

  // Emits the constant `value` (known as `fact`) under `name`, the name define() gave the
  // value `v` of `scope`: in the main graph an initializer, elsewhere (a function body) a
  // Constant node. An initializer's name is in scope in every subgraph (and ONNX Runtime makes
  // a Constant node at the top one), so where a subgraph that stays defines the name too,
  // the initializer takes a fresh name: the value's, or, for a name the graph keeps (an
  // output), an Identity's input. A constant a subgraph computes goes to the main graph
  // under a fresh name too (a branch that runs no node for it, as onnxscript's folding
  // leaves it), but for the subgraph's own outputs, which its nodes must define.
  void emit_value(const std::string& name, ir::ValueId v, Scope& scope, onnx::TensorProto value, const Fact* fact,
                  NodeList* out, bool top) {
    if (!target_.main_graph || (!top && (subgraphs_.empty() || is_output(*subgraphs_.back(), name)))) {
      // (A Constant node that stays; lifts_constant() said so beforehand.)
      emit(out, constant_node(name, std::move(value)));
      return;
    }
    if (!top) {
      const std::string stored = fresh(name);
      if (facts_out_) facts_out_->add_initializer(fact);
      value.set_name(stored);
      *target_.main_graph->add_initializer() = std::move(value);
      scope.rename(v, stored);
      return;
    }
    const bool clashes = kept_subgraph_defines(name);
    const std::string stored = clashes ? fresh(name) : name;
    if (recording()) facts_out_->last_output_is_initializer();
    value.set_name(stored);
    *target_.main_graph->add_initializer() = std::move(value);
    if (!clashes) return;
    const bool kept = top_protected_ && std::find(top_protected_->begin(), top_protected_->end(), name) != top_protected_->end();
    if (!kept) {
      scope.rename(v, stored);
      return;
    }
    NodeProto id;
    id.set_op_type("Identity");
    id.add_input(stored);
    id.add_output(name);
    if (recording()) facts_out_->add_output(fact);
    emit(out, std::move(id));
  }

  static bool is_output(const GraphProto& g, const std::string& name) {
    return std::any_of(g.output().begin(), g.output().end(), [&name](const auto& o) { return o.name() == name; });
  }

  // The branch graph an If node holds itself (not through an attribute reference).
  static const GraphProto* taken_branch(const NodeProto& n, int taken) {
    const char* which = taken == 0 ? "then_branch" : "else_branch";
    for (const auto& a : n.attribute())
      if (a.name() == which && a.has_g()) return &a.g();
    return nullptr;
  }

  // The taken branch in the If's place. Its initializers become constants; its outputs
  // are wired to the If's outputs through Identity nodes, which collapse afterwards.
  // `inlined`: the If itself stands in a branch inlined into the level, so that its
  // outputs, like every name that branch defines, may clash with the level's.
  void inline_branch(const Node& node, int taken, NodeList* out, LevelNames& level, bool inlined, bool top) {
    const NodeProto& n = node.proto;
    const GraphProto* g = taken_branch(n, taken);
    std::unique_ptr<ir::Body> owned;
    Scope branch = scope_of(*g, node.scope, owned);
    inlining_.emplace_back();
    inlining_.back().add_subgraph_definitions(n);
    for (const auto& t : g->initializer()) {
      const ir::ValueId v = branch.body->find(t.name());
      emit_value(define(t.name(), v, branch, level, /*inlined=*/true, nullptr), v, branch, t, nullptr, out, top);
    }
    fold(g->node(), branch, out, level, /*inlined=*/true, top);
    inlining_.pop_back();
    const auto results = branch.body->outputs();
    for (int i = 0; i < n.output_size() && i < g->output_size(); ++i) {
      if (n.output(i).empty()) continue;
      NodeProto id;
      id.set_op_type("Identity");
      id.add_input(branch.name_of(results[static_cast<size_t>(i)], g->output(i).name()));
      id.add_output(define_output(node, i, level, inlined));
      emit(out, std::move(id));
    }
  }

  // Where a node of the body being folded calls a function the target renames (a
  // specialization): the name it calls instead.
  std::optional<Retarget> retarget_of(const Node& node) const {
    const infer::CallContext* call =
        node.scope.facts ? node.scope.facts->call_of(node.scope.body->index_of(node.index)) : nullptr;
    if (!call || !target_.callee_name) return std::nullopt;
    std::string callee = target_.callee_name(call);
    if (callee.empty()) return std::nullopt;
    return Retarget{std::move(callee), target_.callee_overload ? std::optional(target_.callee_overload(call)) : std::nullopt};
  }
  // Points a call at its specialization, which holds the context's attribute values (so
  // the call's go). False when that changed the node.
  static bool retarget(NodeProto& r, Retarget to) {
    const bool same = to.callee == r.op_type() && to.overload.value_or(r.overload()) == r.overload() && r.attribute_size() == 0;
    r.set_op_type(std::move(to.callee));
    if (to.overload) r.set_overload(std::move(*to.overload));
    r.clear_attribute();
    return same;
  }

  // copy_into for a node of the top level (node `i` of the list given to take_from) when
  // the copy would equal the original but for a call's retargeting: an empty node takes its
  // place in `out`, which finish_taking fills. False (nothing done) otherwise, the node
  // then copied as before; true also when its outputs turn out renamed, the copy then made
  // here (define_output names each output once).
  bool take(const Node& node, int i, NodeList* out, LevelNames& level) {
    const NodeProto& n = node.proto;
    for (const auto& a : n.attribute())
      if (a.has_ref_attr_name() || a.has_g() || a.graphs_size() > 0) return false;
    for (int k = 0; k < n.input_size(); ++k)
      if (node.input_name(k) != n.input(k)) return false;
    std::vector<std::string> outputs;
    outputs.reserve(static_cast<size_t>(n.output_size()));
    bool renamed = false;
    for (int k = 0; k < n.output_size(); ++k) {
      outputs.push_back(define_output(node, k, level, /*inlined=*/false));
      renamed = renamed || outputs.back() != n.output(k);
    }
    std::optional<Retarget> to = retarget_of(node);
    NodeProto& r = *out->Add();
    if (renamed) {  // copy_into's copy, the outputs already named
      r = n;
      for (int k = 0; k < r.output_size(); ++k) r.set_output(k, std::move(outputs[static_cast<size_t>(k)]));
      if (to) retarget(r, std::move(*to));
    } else {
      taken_.push_back(Taken{out->size() - 1, i, std::move(to)});
    }
    if (recording()) facts_out_->end_node(n.output_size());
    return true;
  }

  void copy_into(NodeProto& r, const Node& node, LevelNames& level, bool inlined) {
    const NodeProto& n = node.proto;
    r = n;
    for (int k = 0; k < r.input_size(); ++k)
      if (const std::string& name = node.input_name(k); name != n.input(k)) r.set_input(k, name);
    const bool rewrite_attributes = std::any_of(n.attribute().begin(), n.attribute().end(), [](const AttributeProto& a) {
      return a.has_ref_attr_name() || a.has_g() || a.graphs_size() > 0;
    });
    if (rewrite_attributes) r.clear_attribute();
    for (const auto& a : n.attribute()) {
      if (!rewrite_attributes) break;
      if (a.has_ref_attr_name()) {
        // A reference takes the context's value (a specialized body has no attributes).
        if (!target_.attributes) {
          *r.add_attribute() = a;
          continue;
        }
        for (const auto& v : *target_.attributes)
          if (v.name() == a.ref_attr_name()) {
            AttributeProto value = v;
            value.set_name(a.name());
            *r.add_attribute() = std::move(value);
          }
        continue;
      }
      // Subgraphs are folded from the original (the facts name its nodes), each in its
      // own scope nested in this one.
      AttributeProto* copy = r.add_attribute();
      *copy = a;
      if (a.has_g()) fold_subgraph(a.g(), copy->mutable_g(), node.scope);
      for (int i = 0; i < a.graphs_size(); ++i) fold_subgraph(a.graphs(i), copy->mutable_graphs(i), node.scope);
    }
    for (int k = 0; k < r.output_size(); ++k)
      r.set_output(k, define_output(node, k, level, inlined));
    if (auto to = retarget_of(node)) retarget(r, std::move(*to));
  }

  // Folds `original` into `g` (a copy of it, whose nodes are replaced).
  void fold_subgraph(const GraphProto& original, GraphProto* g, Scope& outer) {
    std::unique_ptr<ir::Body> owned;
    Scope scope = scope_of(original, outer, owned);
    // A subgraph where ONNX's inference failed on a node (BodyFacts::note_inference_failed)
    // is copied as it is, as the rewrites leave it (Round::rewrite_subgraphs): its values
    // folded to constants would let a runtime that infers the subgraph at load see the
    // failure (a fuzz finding: a branch's Expand to a Cast constant, folded, made ONNX
    // Runtime's inference of an Add in it fail), where the model given runs when the
    // branch is not taken.
    if (scope.facts && scope.facts->inference_failed()) scope.facts = nullptr;
    LevelNames level([&original](Names& names) {
      for (const auto& in : original.input()) names.insert_lasting(in.name());
      for (const auto& t : original.initializer()) names.insert_lasting(t.name());
      for (const auto& n : original.node())
        for (const auto& o : n.output()) names.insert_lasting(o);
    }, original.node());
    NodeList folded;
    ++subgraph_depth_;
    subgraphs_.push_back(&original);
    fold(original.node(), scope, &folded, level, /*inlined=*/false, /*top=*/false);
    subgraphs_.pop_back();
    --subgraph_depth_;
    const auto results = scope.body->outputs();
    for (int i = 0; i < g->output_size(); ++i) {
      auto& o = *g->mutable_output(i);
      o.set_name(scope.name_of(results[static_cast<size_t>(i)], original.output(i).name()));
    }
    // Its own subgraphs were tidied as they were folded (the innermost first), so what they
    // still read is what keeps this level's nodes.
    if (target_.tidy) tidy_nodes(folded, interface_names(*g), /*remove_dead=*/true);
    g->mutable_node()->Swap(&folded);
    g->clear_value_info();  // the final annotation writes it anew
  }
};

}  // namespace

void tidy_nodes(NodeList& nodes, const ir::ValueNames& keep, bool remove_dead) {
  const bool has_identity = std::any_of(nodes.begin(), nodes.end(), [](const NodeProto& n) { return is_op(n, "Identity"); });
  if (!has_identity && !remove_dead) return;
  ir::MutableBody body(nodes, {}, nullptr, keep);
  if (has_identity) body.collapse_identities();
  if (remove_dead) body.remove_dead_nodes();
  body.commit();
}

NodeList fold_body(const NodeList& nodes, const infer::BodyFacts& facts, const BodyTarget& target,
                   const ir::ValueNames& protected_names, Counters& stats,
                   PlacedFacts* facts_out, NodeList* take_from, bool* untouched) {
  Folder folder(
      target,
      [&](Names& names) {
        for (std::string_view name : protected_names) names.insert_lasting(name);
        names.insert_all(nodes, Keep::Views);
      },
      stats, facts_out);
  Scope top{&facts, &facts.body(), nullptr, {}};
  LevelNames level([&](Names& names) {
    for (std::string_view name : protected_names) names.insert_lasting(name);
    for (const auto& n : nodes)
      for (const auto& o : n.output()) names.insert_lasting(o);
  }, nodes);
  NodeList out;
  folder.set_top(nodes, top, protected_names);
  if (take_from) folder.take_from(*take_from);
  folder.fold(nodes, top, &out, level, /*inlined=*/false, /*top=*/true);
  const bool all_taken = take_from && folder.finish_taking(out);
  if (untouched) *untouched = all_taken;
  return out;
}

PlacedFacts PlacedFacts::of_analysed(const infer::BodyFacts& analysis) {
  PlacedFacts facts(&analysis, SIZE_MAX);  // every initializer is the body's own
  facts.analysed_nodes_ = true;
  return facts;
}

void PlacedFacts::end_node(int outputs) {
  // define() records each output of a node before the node is emitted; should a count
  // ever disagree, what is not recorded is unknown (nullptr), never another's fact.
  pending_.resize(static_cast<size_t>(outputs), nullptr);
  outputs_.insert(outputs_.end(), pending_.begin(), pending_.end());
  starts_.push_back(outputs_.size());
  pending_.clear();
}

void PlacedFacts::last_output_is_initializer() {
  added_.push_back(pending_.empty() ? nullptr : pending_.back());
  if (!pending_.empty()) pending_.pop_back();
}

const Fact* PlacedFacts::by_name(std::string_view name) const {
  if (!analysis_) return nullptr;
  const ir::ValueId v = analysis_->body().find(name);
  return v == ir::kNoValue ? nullptr : analysis_->fact(v);
}

ir::MutableBody::FactSource PlacedFacts::source() const {
  ir::MutableBody::FactSource source;
  if (analysed_nodes_) {
    source.output = [this](size_t i, size_t k) -> const Fact* {
      const auto nodes = analysis_->body().nodes();
      if (i >= nodes.size()) return nullptr;
      const auto outs = analysis_->body().outputs_of(nodes[i]);
      return k < outs.size() && outs[k] != ir::kNoValue ? analysis_->fact(outs[k]) : nullptr;
    };
  } else {
    source.output = [this](size_t i, size_t k) -> const Fact* {
      return i + 1 < starts_.size() && starts_[i] + k < starts_[i + 1] ? outputs_[starts_[i] + k] : nullptr;
    };
  }
  source.initializer = [this](size_t index, std::string_view name) -> const Fact* {
    if (index < first_added_) return by_name(name);
    return index - first_added_ < added_.size() ? added_[index - first_added_] : nullptr;
  };
  source.outer = [this](std::string_view name) { return by_name(name); };
  return source;
}

void fold_subgraphs_without_facts(NodeProto& node) {
  // What fold_subgraph does where nothing is known: every node is kept as it is (its own
  // subgraphs first), then Identity chains collapse, dead nodes go, and value_info goes
  // (the final annotation writes it).
  for (auto& a : *node.mutable_attribute()) {
    if (a.has_ref_attr_name()) continue;
    auto fold = [](GraphProto& g) {
      for (auto& n : *g.mutable_node()) fold_subgraphs_without_facts(n);
      tidy_nodes(*g.mutable_node(), interface_names(g), /*remove_dead=*/true);
      g.clear_value_info();
    };
    if (a.has_g()) fold(*a.mutable_g());
    for (auto& g : *a.mutable_graphs()) fold(g);
  }
}

namespace {

// Folder::leaves_unchanged at the top of a body, for a caller that folds nothing.
bool top_level_unchanged(const NodeList& nodes, const infer::BodyFacts& facts, const BodyTarget& target,
                         bool no_identity) {
  Counters unused;
  const Folder folder(target, [](Names&) {}, unused);
  Scope top{&facts, &facts.body(), nullptr, {}};
  return folder.leaves_unchanged(nodes, top, no_identity);
}

}  // namespace

bool fold_gives_back(const NodeList& nodes, const infer::BodyFacts& facts, const BodyTarget& target) {
  return top_level_unchanged(nodes, facts, target, /*no_identity=*/false);
}

bool fold_changes_nothing(const NodeList& nodes, const infer::BodyFacts& facts, const BodyTarget& target) {
  if (!top_level_unchanged(nodes, facts, target, /*no_identity=*/true)) return false;
  // No dead node either (the nodes hold no subgraph: leaves_unchanged made sure), by the
  // analysis's value ids: a node is live when a later one, or the graph's outputs, read it.
  const ir::Body& body = facts.body();
  std::vector<bool> needed(body.num_values(), false);
  auto need = [&](const ir::Operand& o) {
    if (o.resolved() && o.depth == 0 && o.id != ir::kNoValue) needed[o.id] = true;
  };
  for (const ir::Operand& o : body.outputs()) need(o);
  const auto indexed = body.nodes();
  for (size_t i = indexed.size(); i-- > 0;) {
    const auto outputs = body.outputs_of(indexed[i]);
    if (std::none_of(outputs.begin(), outputs.end(), [&](ir::ValueId v) { return v != ir::kNoValue && needed[v]; }))
      return false;
    for (const ir::Operand& o : body.inputs_of(indexed[i])) need(o);
  }
  // Nor an initializer that nothing reads (one that is also a graph input stays).
  const auto initializers = body.initializers();
  return std::all_of(initializers.begin(), initializers.end(), [&](ir::ValueId v) { return needed[v]; });
}

void keep_nodes(NodeList& nodes, const std::vector<bool>& keep) {
  keep_in_order(nodes, [&keep](const NodeProto&, int i) { return keep[static_cast<size_t>(i)]; });
}

size_t count_nodes(const onnx::NodeProto& node) {
  size_t k = 1;
  for_each_subgraph(node, [&k](const GraphProto& g) { k += count_nodes(g.node()); });
  return k;
}

size_t count_nodes(const NodeList& nodes) {
  size_t k = 0;
  for (const auto& n : nodes) k += count_nodes(n);
  return k;
}

}  // namespace shapeprop::transform
