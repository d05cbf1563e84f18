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
// then collapses Identity chains. Dead nodes go afterwards (remove_dead_nodes).
#include "fold_body.h"

#include <algorithm>

#include "support/subgraphs.h"

namespace shapeprop::transform {

namespace {

using onnx::AttributeProto;
using onnx::GraphProto;
using onnx::NodeProto;

bool is_op(const NodeProto& n, const char* op) { return FunctionId::is_default_domain(n.domain()) && n.op_type() == op; }

// Ops whose result is not a function of their inputs: never replaced by a value.
bool is_random(const NodeProto& n) {
  static const std::unordered_set<std::string> random = {"RandomNormal", "RandomUniform", "RandomNormalLike",
                                                         "RandomUniformLike", "Bernoulli", "Multinomial"};
  return FunctionId::is_default_domain(n.domain()) && random.count(n.op_type()) > 0;
}

// Scoped renaming: a rename made at one level applies there and in nested subgraphs,
// unless a nested scope defines the name again.
struct Renames {
  const Renames* parent = nullptr;
  std::unordered_map<std::string, std::string> map;

  std::string operator()(const std::string& name) const {
    for (const Renames* r = this; r; r = r->parent) {
      auto it = r->map.find(name);
      if (it != r->map.end()) return it->second;
    }
    return name;
  }
};

void replace_reads(NodeList& nodes, const std::string& from, const std::string& to) {
  for (auto& n : nodes) {
    for (auto& in : *n.mutable_input())
      if (in == from) in = to;
    for_each_subgraph(n, [&](GraphProto& g) {
      replace_reads(*g.mutable_node(), from, to);
      for (auto& o : *g.mutable_output())
        if (o.name() == from) o.set_name(to);
    });
  }
}

size_t count_reads(const NodeList& nodes, const std::string& name) {
  size_t k = 0;
  for (const auto& n : nodes) {
    k += static_cast<size_t>(std::count(n.input().begin(), n.input().end(), name));
    for_each_subgraph(n, [&](const GraphProto& g) {
      k += count_reads(g.node(), name);
      for (const auto& o : g.output()) k += o.name() == name;
    });
  }
  return k;
}

// y = Identity(x): readers of y read x instead. Where y must keep its name (an output),
// x's producer at this level writes y directly when nothing else reads x.
void collapse_identities(NodeList& nodes, const std::unordered_set<std::string>& keep) {
  for (bool changed = true; changed;) {
    changed = false;
    for (int i = 0; i < nodes.size() && !changed; ++i) {
      const NodeProto& n = nodes.Get(i);
      if (!is_op(n, "Identity") || n.input_size() != 1 || n.output_size() != 1 || n.input(0).empty()) continue;
      const std::string x = n.input(0), y = n.output(0);
      if (!keep.count(y)) {
        nodes.erase(nodes.begin() + i);
        replace_reads(nodes, y, x);
        changed = true;
        continue;
      }
      if (keep.count(x) || count_reads(nodes, x) != 1) continue;
      for (int j = i - 1; j >= 0 && !changed; --j) {
        auto* outputs = nodes.Mutable(j)->mutable_output();
        auto it = std::find(outputs->begin(), outputs->end(), x);
        if (it == outputs->end()) continue;
        *it = y;
        nodes.erase(nodes.begin() + i);
        changed = true;
      }
    }
  }
}

class Folder {
 public:
  Folder(const infer::Summary& facts, const BodyTarget& target, std::unordered_set<std::string>& names, TransformStats& stats)
      : facts_(facts), target_(target), names_(names), stats_(stats) {}

  // Folds the nodes of one scope level. `level` holds the names defined at this level;
  // `inlined` is set when the nodes come from a branch inlined into it, whose names may
  // clash with the level's; `top` when this is the top of the main graph.
  void fold(const NodeList& in, NodeList* out, Renames& renames, std::unordered_set<std::string>& level, bool inlined,
            bool top) {
    for (const NodeProto& n : in) {
      auto branch = facts_.branch_of.find(&n);
      if (is_op(n, "If") && branch != facts_.branch_of.end()) {
        inline_branch(n, branch->second, out, renames, level, top);
        ++stats_.ifs_folded;
      } else if (all_outputs_constant(n) && !is_random(n) && (!is_op(n, "Constant") || (top && target_.main_graph))) {
        emit_constants(n, out, renames, level, inlined, top);
        if (!is_op(n, "Constant")) ++stats_.constants_folded;
        if (is_op(n, "CastLike")) ++stats_.castlikes_folded;
      } else if (is_op(n, "CastLike") && fold_castlike(n, out, renames, level, inlined)) {
        ++stats_.castlikes_folded;
      } else if ((is_op(n, "Expand") || is_op(n, "Reshape")) && keeps_shape(n)) {
        NodeProto id = rewritten(n, "Identity", renames, level, inlined);
        id.mutable_input()->DeleteSubrange(1, id.input_size() - 1);
        id.clear_attribute();
        *out->Add() = std::move(id);
      } else {
        *out->Add() = copy(n, renames, level, inlined);
      }
    }
  }

 private:
  const infer::Summary& facts_;
  const BodyTarget& target_;
  std::unordered_set<std::string>& names_;
  TransformStats& stats_;

  const Fact* fact(const std::string& original) const {
    auto it = facts_.values.find(original);
    return it == facts_.values.end() ? nullptr : &it->second;
  }

  bool all_outputs_constant(const NodeProto& n) const {
    if (n.output_size() == 0) return false;
    for (const auto& o : n.output()) {
      if (o.empty()) return false;
      const Fact* f = fact(o);
      if (!f || !f->to_tensor()) return false;
    }
    return true;
  }

  // Expand/Reshape whose output shape is the input's, dim for dim, with nothing unknown.
  bool keeps_shape(const NodeProto& n) const {
    if (n.input_size() < 1 || n.output_size() != 1) return false;
    const Fact* in = fact(n.input(0));
    const Fact* out = fact(n.output(0));
    if (!in || !out || !in->shape || !out->shape || in->elem_type != out->elem_type) return false;
    if (*in->shape != *out->shape) return false;
    return std::none_of(in->shape->begin(), in->shape->end(), [](const Dim& d) { return d.is_unknown(); });
  }

  std::string fresh(const std::string& base) {
    if (names_.insert(base).second) return base;
    for (int k = 1;; ++k) {
      std::string name = base + "_" + std::to_string(k);
      if (names_.insert(name).second) return name;
    }
  }

  // The name an output defined by this node gets at this level.
  std::string define(const std::string& original, Renames& renames, std::unordered_set<std::string>& level, bool inlined) {
    if (original.empty()) return original;
    std::string name = original;
    if (inlined && level.count(original)) name = fresh(original);
    level.insert(name);
    renames.map[original] = name;
    return name;
  }

  NodeProto rewritten(const NodeProto& n, const char* op, Renames& renames, std::unordered_set<std::string>& level,
                      bool inlined) {
    NodeProto r;
    r.set_name(n.name());
    r.set_op_type(op);
    for (const auto& in : n.input()) r.add_input(in.empty() ? in : renames(in));
    for (const auto& o : n.output()) r.add_output(define(o, renames, level, inlined));
    return r;
  }

  bool fold_castlike(const NodeProto& n, NodeList* out, Renames& renames, std::unordered_set<std::string>& level,
                     bool inlined) {
    if (n.input_size() != 2 || n.output_size() != 1) return false;
    const Fact* x = fact(n.input(0));
    const Fact* like = fact(n.input(1));
    if (!x || !like || x->other || like->other || x->elem_type == 0 || like->elem_type == 0) return false;
    if (x->elem_type == like->elem_type) {
      NodeProto id = rewritten(n, "Identity", renames, level, inlined);
      id.mutable_input()->RemoveLast();
      *out->Add() = std::move(id);
      return true;
    }
    NodeProto cast = rewritten(n, "Cast", renames, level, inlined);
    cast.mutable_input()->RemoveLast();
    auto* to = cast.add_attribute();
    to->set_name("to");
    to->set_type(AttributeProto::INT);
    to->set_i(like->elem_type);
    for (const auto& a : n.attribute())
      if (a.name() == "saturate") *cast.add_attribute() = a;
    *out->Add() = std::move(cast);
    return true;
  }

  void emit_constants(const NodeProto& n, NodeList* out, Renames& renames, std::unordered_set<std::string>& level,
                      bool inlined, bool top) {
    for (const auto& o : n.output()) emit_value(o, *fact(o)->to_tensor(), out, renames, level, inlined, top);
  }

  // Defines `original` as the constant `value`: an initializer at the top of the main
  // graph, a Constant node elsewhere.
  void emit_value(const std::string& original, onnx::TensorProto value, NodeList* out, Renames& renames,
                  std::unordered_set<std::string>& level, bool inlined, bool top) {
    const std::string name = define(original, renames, level, inlined);
    if (top && target_.main_graph) {
      value.set_name(name);
      *target_.main_graph->add_initializer() = std::move(value);
      return;
    }
    value.clear_name();
    NodeProto c;
    c.set_op_type("Constant");
    c.add_output(name);
    auto* a = c.add_attribute();
    a->set_name("value");
    a->set_type(AttributeProto::TENSOR);
    *a->mutable_t() = std::move(value);
    *out->Add() = std::move(c);
  }

  // The taken branch in the If's place. Its initializers become constants; its outputs
  // are wired to the If's outputs through Identity nodes, which collapse afterwards.
  void inline_branch(const NodeProto& n, int taken, NodeList* out, Renames& renames, std::unordered_set<std::string>& level,
                     bool top) {
    const char* which = taken == 0 ? "then_branch" : "else_branch";
    const GraphProto* g = nullptr;
    for (const auto& a : n.attribute())
      if (a.name() == which && a.has_g()) g = &a.g();
    Renames inner{&renames, {}};
    for (const auto& t : g->initializer()) emit_value(t.name(), t, out, inner, level, /*inlined=*/true, top);
    fold(g->node(), out, inner, level, /*inlined=*/true, top);
    for (int i = 0; i < n.output_size() && i < g->output_size(); ++i) {
      if (n.output(i).empty()) continue;
      NodeProto id;
      id.set_op_type("Identity");
      id.add_input(inner(g->output(i).name()));
      id.add_output(define(n.output(i), renames, level, /*inlined=*/false));
      *out->Add() = std::move(id);
    }
  }

  NodeProto copy(const NodeProto& n, Renames& renames, std::unordered_set<std::string>& level, bool inlined) {
    NodeProto r = n;
    for (auto& in : *r.mutable_input())
      if (!in.empty()) in = renames(in);
    r.clear_attribute();
    for (const auto& a : n.attribute()) {
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
      if (a.has_g()) fold_subgraph(a.g(), copy->mutable_g(), renames);
      for (int i = 0; i < a.graphs_size(); ++i) fold_subgraph(a.graphs(i), copy->mutable_graphs(i), renames);
    }
    for (auto& o : *r.mutable_output()) o = define(o, renames, level, inlined);
    auto call = facts_.call_of.find(&n);
    if (call != facts_.call_of.end() && target_.callee_name) {
      r.set_op_type(target_.callee_name(call->second));
      r.clear_attribute();  // the specialization holds the context's attribute values
    }
    return r;
  }

  // Folds `original` into `g` (a copy of it, whose nodes are replaced).
  void fold_subgraph(const GraphProto& original, GraphProto* g, Renames& outer) {
    Renames inner{&outer, {}};
    std::unordered_set<std::string> level;
    for (const auto& in : original.input()) {
      inner.map[in.name()] = in.name();
      level.insert(in.name());
    }
    for (const auto& t : original.initializer()) {
      inner.map[t.name()] = t.name();
      level.insert(t.name());
    }
    for (const auto& n : original.node())
      for (const auto& o : n.output()) level.insert(o);
    NodeList folded;
    fold(original.node(), &folded, inner, level, /*inlined=*/false, /*top=*/false);
    for (auto& o : *g->mutable_output()) o.set_name(inner(o.name()));
    std::unordered_set<std::string> keep;
    for (const auto& o : g->output()) keep.insert(o.name());
    for (const auto& in : g->input()) keep.insert(in.name());
    collapse_identities(folded, keep);
    g->mutable_node()->Swap(&folded);
    g->clear_value_info();  // the final annotation writes it anew
  }
};

}  // namespace

NodeList fold_body(const NodeList& nodes, const infer::Summary& facts, const BodyTarget& target,
                   const std::unordered_set<std::string>& protected_names, std::unordered_set<std::string>& scope_names,
                   TransformStats& stats) {
  Folder folder(facts, target, scope_names, stats);
  Renames renames;
  std::unordered_set<std::string> level(protected_names.begin(), protected_names.end());
  for (const auto& n : nodes)
    for (const auto& o : n.output()) level.insert(o);
  NodeList out;
  folder.fold(nodes, &out, renames, level, /*inlined=*/false, /*top=*/true);
  collapse_identities(out, protected_names);
  return out;
}

void collect_reads(const NodeList& nodes, std::unordered_set<std::string>& reads) {
  for (const auto& n : nodes) {
    for (const auto& in : n.input())
      if (!in.empty()) reads.insert(in);
    for_each_subgraph(n, [&](const GraphProto& g) {
      collect_reads(g.node(), reads);
      for (const auto& o : g.output()) reads.insert(o.name());
    });
  }
}

void collect_names(const NodeList& nodes, std::unordered_set<std::string>& names) {
  for (const auto& n : nodes) {
    for (const auto& in : n.input()) names.insert(in);
    for (const auto& o : n.output()) names.insert(o);
    for_each_subgraph(n, [&](const GraphProto& g) {
      for (const auto& vi : g.input()) names.insert(vi.name());
      for (const auto& vi : g.output()) names.insert(vi.name());
      for (const auto& t : g.initializer()) names.insert(t.name());
      collect_names(g.node(), names);
    });
  }
}

size_t remove_dead_nodes(NodeList& nodes, const std::unordered_set<std::string>& live) {
  std::unordered_set<std::string> needed = live;
  std::vector<bool> keep(static_cast<size_t>(nodes.size()), false);
  size_t removed = 0;
  for (int i = nodes.size() - 1; i >= 0; --i) {
    NodeProto& n = *nodes.Mutable(i);
    const bool used = std::any_of(n.output().begin(), n.output().end(), [&](const std::string& o) { return needed.count(o) > 0; });
    if (!used) continue;
    keep[static_cast<size_t>(i)] = true;
    for_each_subgraph(n, [&](GraphProto& g) {
      std::unordered_set<std::string> outputs;
      for (const auto& o : g.output()) outputs.insert(o.name());
      removed += remove_dead_nodes(*g.mutable_node(), outputs);
      collect_reads(g.node(), needed);
      needed.insert(outputs.begin(), outputs.end());
    });
    for (const auto& in : n.input()) needed.insert(in);
  }
  NodeList kept;
  for (int i = 0; i < nodes.size(); ++i) {
    if (keep[static_cast<size_t>(i)])
      *kept.Add() = std::move(*nodes.Mutable(i));
    else
      removed += count_nodes(nodes.Get(i));
  }
  nodes.Swap(&kept);
  return removed;
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
