// Small rewrites of one node (and its producer) that the facts decide:
//  - Transpose of a Transpose: one Transpose of the composed permutation, or nothing when
//    it is the identity; a Transpose by the identity permutation: nothing (each perm
//    checked against its input's known rank);
//  - Squeeze of an Unsqueeze of the same axes, and Unsqueeze of a Squeeze: nothing;
//    Unsqueeze of an Unsqueeze that only it reads: one Unsqueeze of both sets of axes;
//  - Reshape of a Reshape to a constant shape without 0 entries: one Reshape;
//  - Concat of one input: nothing;
//  - Where whose condition is a constant all true (all false), and whose result is no
//    larger than X (Y): X (Y);
//  - Expand by ones, Tile by ones, Slice of everything with steps of 1, and Reshape or
//    Expand to the shape their input has: nothing;
// "Nothing" means the node's readers read its input (or the node becomes an Identity where
// its output keeps its name). Arithmetic with a neutral element is neutral_ops.cc's,
// Dropout dropout_elim.cc's.
#include <numeric>

#include "rewrite_support.h"

namespace shapeprop::transform {

namespace {

using onnx::NodeProto;

constexpr int64_t kAxesAsInput = 13;         // Squeeze/Unsqueeze take axes as an input

std::optional<std::vector<int64_t>> normalized_axes(std::vector<int64_t> axes, size_t rank) {
  for (auto& a : axes) {
    if (a < 0) a += static_cast<int64_t>(rank);
    if (a < 0 || a >= static_cast<int64_t>(rank)) return std::nullopt;
  }
  std::sort(axes.begin(), axes.end());
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end()) return std::nullopt;
  return axes;
}

// What one peephole does: the node's readers read `to` (Forward), the node reads `to` as
// its data (Bypass), the node becomes Transpose(to) by `perm` (Compose), or
// Unsqueeze(to) of the axes in `perm` (Unsqueeze); counted as `counter`.
struct Fix {
  enum Kind { Forward, Bypass, Compose, Unsqueeze } kind;
  Counter counter;
  ValueId to;
  std::vector<int64_t> perm = {};
};

class Peepholes {
 public:
  Peepholes(const MutableBody& body, const RewriteOptions& options) : body_(body), options_(options) {}

  std::optional<Fix> match(NodeId id) const {
    const NodeProto& n = body_.node(id);
    if (!FunctionId::is_default_domain(n.domain()) || body_.num_outputs(id) == 0 || body_.output(id, 0) == ir::kNoValue ||
        body_.num_inputs(id) == 0 || body_.input(id, 0) == ir::kNoValue)
      return std::nullopt;
    const std::string_view op = n.op_type();  // compared as a view: lengths first
    std::optional<Fix> fix;
    if (op == "Transpose") fix = transpose(id);
    else if (op == "Squeeze" || op == "Unsqueeze") fix = squeeze_pair(id);
    else if (op == "Reshape") fix = first_of(keeps_shape(id), [&] { return reshape_of_reshape(id); });
    else if (op == "Concat") fix = single_concat(id);
    else if (op == "Where") fix = constant_where(id);
    else if (op == "Expand" || op == "Tile") fix = first_of(keeps_shape(id), [&] { return by_ones(id); });
    else if (op == "Slice") fix = whole_slice(id);
    // A forward that would change nothing is no match.
    if (fix && fix->kind == Fix::Forward && !body_.can_forward(id, fix->to)) return std::nullopt;
    return fix;
  }

 private:
  const MutableBody& body_;
  const RewriteOptions& options_;

  template <class Next>
  static std::optional<Fix> first_of(std::optional<Fix> fix, Next&& next) {
    return fix ? fix : next();
  }
  static Fix forward(ValueId to, Counter counter) { return Fix{Fix::Forward, counter, to}; }

  // The Transpose's permutation, when its input's rank is known and the perm is one of
  // that many axes. Anything else fails at run time (a perm of the wrong length, which
  // ONNX 1.17's rule lets through, or a repeated axis), and a rewrite must not make a
  // failing node succeed.
  std::optional<std::vector<int64_t>> permutation(NodeId t) const {
    const auto rank = rank_of(body_.fact(body_.input(t, 0)));
    if (!rank) return std::nullopt;
    std::vector<int64_t> perm(*rank);
    std::iota(perm.rbegin(), perm.rend(), 0);
    if (auto given = ints_attribute(body_.node(t), "perm")) perm = std::move(*given);
    if (perm.size() != *rank) return std::nullopt;
    std::vector<bool> seen(*rank, false);
    for (int64_t k : perm) {
      if (k < 0 || k >= static_cast<int64_t>(*rank) || seen[static_cast<size_t>(k)]) return std::nullopt;
      seen[static_cast<size_t>(k)] = true;
    }
    return perm;
  }

  static bool is_identity(const std::vector<int64_t>& perm) {
    for (size_t i = 0; i < perm.size(); ++i)
      if (perm[i] != static_cast<int64_t>(i)) return false;
    return true;
  }

  std::optional<Fix> transpose(NodeId id) const {
    if (body_.num_inputs(id) != 1 || body_.num_outputs(id) != 1) return std::nullopt;
    const auto outer = permutation(id);
    if (!outer) return std::nullopt;
    if (is_identity(*outer)) return forward(body_.input(id, 0), Counter::TransposesFolded);
    const auto p = body_.producer(body_.input(id, 0));
    if (p == kNone || !is_op(body_.node(p), "Transpose") || body_.num_inputs(p) != 1) return std::nullopt;
    const auto inner = permutation(p);
    if (!inner || inner->size() != outer->size()) return std::nullopt;
    std::vector<int64_t> composed(outer->size());
    for (size_t i = 0; i < outer->size(); ++i) composed[i] = (*inner)[static_cast<size_t>((*outer)[i])];
    const ValueId x = body_.input(p, 0);
    if (is_identity(composed)) return forward(x, Counter::TransposesFolded);
    return Fix{Fix::Compose, Counter::TransposesFolded, x, std::move(composed)};
  }

  std::optional<std::vector<int64_t>> axes_of(NodeId id) const {
    if (options_.onnx_opset >= kAxesAsInput) {
      if (body_.input(id, 1) == ir::kNoValue) return std::nullopt;
      return constant_ints(body_, body_.input(id, 1));
    }
    return ints_attribute(body_.node(id), "axes");
  }

  // Squeeze(Unsqueeze(x, a), a) and Unsqueeze(Squeeze(x, a), a) are x.
  std::optional<Fix> squeeze_pair(NodeId id) const {
    const bool outer_squeezes = body_.node(id).op_type() == "Squeeze";
    const auto p = body_.producer(body_.input(id, 0));
    if (p == kNone) return std::nullopt;
    if (!outer_squeezes && is_op(body_.node(p), "Unsqueeze")) return unsqueeze_pair(id, p);
    if (!is_op(body_.node(p), outer_squeezes ? "Unsqueeze" : "Squeeze") || body_.input(p, 0) == ir::kNoValue)
      return std::nullopt;
    // Both sets of axes are positions in the larger of the two shapes.
    const auto larger = rank_of(body_.fact(outer_squeezes ? body_.input(id, 0) : body_.input(p, 0)));
    const auto a = axes_of(id), b = axes_of(p);
    if (!larger || !a || !b) return std::nullopt;
    const auto na = normalized_axes(*a, *larger), nb = normalized_axes(*b, *larger);
    if (!na || !nb || *na != *nb) return std::nullopt;
    return forward(body_.input(p, 0), Counter::SqueezesFolded);
  }

  // Unsqueeze(Unsqueeze(x, a1), a2) is Unsqueeze(x, a), where a holds a2 (positions in
  // the result) and each of a1 (positions in the middle shape) moved to the position its
  // dim has in the result: the middle's dims are the result's dims that are not in a2, in
  // order. Only where the middle value has no other reader (else nothing gets smaller).
  std::optional<Fix> unsqueeze_pair(NodeId id, NodeId p) const {
    const ValueId middle = body_.input(id, 0);
    const ValueId x = body_.input(p, 0);
    if (x == ir::kNoValue || body_.uses(middle) != 1) return std::nullopt;
    const auto rank = rank_of(body_.fact(x));
    const auto a1 = axes_of(p), a2 = axes_of(id);
    if (!rank || !a1 || !a2) return std::nullopt;
    const size_t middle_rank = *rank + a1->size(), result_rank = middle_rank + a2->size();
    const auto n1 = normalized_axes(*a1, middle_rank), n2 = normalized_axes(*a2, result_rank);
    if (!n1 || !n2) return std::nullopt;
    std::vector<int64_t> kept;  // the result's positions of the middle's dims
    for (int64_t k = 0; k < static_cast<int64_t>(result_rank); ++k)
      if (!std::binary_search(n2->begin(), n2->end(), k)) kept.push_back(k);
    std::vector<int64_t> axes = *n2;
    for (int64_t a : *n1) axes.push_back(kept[static_cast<size_t>(a)]);
    std::sort(axes.begin(), axes.end());
    return Fix{Fix::Unsqueeze, Counter::SqueezesFolded, x, std::move(axes)};
  }

  // Reshape(Reshape(x, s1), s2) is Reshape(x, s2) when s2 copies nothing from the middle.
  std::optional<Fix> reshape_of_reshape(NodeId id) const {
    if (body_.num_inputs(id) != 2 || body_.input(id, 1) == ir::kNoValue) return std::nullopt;
    const auto p = body_.producer(body_.input(id, 0));
    if (p == kNone || !is_op(body_.node(p), "Reshape") || body_.input(p, 0) == ir::kNoValue) return std::nullopt;
    const auto shape = constant_ints(body_, body_.input(id, 1));
    if (!shape) return std::nullopt;
    const bool allowzero = int_attribute(body_.node(id), "allowzero").value_or(0) != 0;
    if (!allowzero && std::find(shape->begin(), shape->end(), 0) != shape->end()) return std::nullopt;
    return Fix{Fix::Bypass, Counter::ReshapesFolded, body_.input(p, 0)};
  }

  std::optional<Fix> single_concat(NodeId id) const {
    if (body_.num_inputs(id) != 1 || body_.num_outputs(id) != 1) return std::nullopt;
    return forward(body_.input(id, 0), Counter::ConcatsFolded);
  }

  bool same_known_shape(ValueId a, ValueId b) const { return transform::same_known_shape(body_, a, b); }

  std::optional<Fix> constant_where(NodeId id) const {
    if (body_.num_inputs(id) != 3 || body_.num_outputs(id) != 1 || body_.input(id, 1) == ir::kNoValue ||
        body_.input(id, 2) == ir::kNoValue)
      return std::nullopt;
    const Fact* c = body_.fact(body_.input(id, 0));
    size_t chosen;
    if (all_elements_are(c, 1))
      chosen = 1;
    else if (all_elements_are(c, 0))
      chosen = 2;
    else
      return std::nullopt;
    if (!same_known_shape(body_.output(id, 0), body_.input(id, chosen))) return std::nullopt;
    return forward(body_.input(id, chosen), Counter::WheresFolded);
  }

  // Reshape, Expand or Tile whose result has the shape of its input, dim for dim.
  std::optional<Fix> keeps_shape(NodeId id) const {
    if (body_.num_outputs(id) != 1 || !same_known_shape(body_.output(id, 0), body_.input(id, 0))) return std::nullopt;
    const auto counter = body_.node(id).op_type() == "Reshape" ? Counter::ReshapesFolded : Counter::ExpandsFolded;
    return forward(body_.input(id, 0), counter);
  }

  // Expand(x, ones) with no more ones than x has dims; Tile(x, ones).
  std::optional<Fix> by_ones(NodeId id) const {
    if (body_.num_inputs(id) != 2 || body_.num_outputs(id) != 1 || body_.input(id, 1) == ir::kNoValue) return std::nullopt;
    const auto ones = constant_ints(body_, body_.input(id, 1));
    if (!ones || std::any_of(ones->begin(), ones->end(), [](int64_t v) { return v != 1; })) return std::nullopt;
    if (body_.node(id).op_type() == "Expand") {
      const auto rank = rank_of(body_.fact(body_.input(id, 0)));
      if (!rank || ones->size() > *rank) return std::nullopt;
    }
    return forward(body_.input(id, 0), Counter::ExpandsFolded);
  }

  // Slice whose result has its input's shape, with steps of 1: all of it, in order.
  std::optional<Fix> whole_slice(NodeId id) const {
    if (body_.num_outputs(id) != 1 || body_.num_inputs(id) < 3) return std::nullopt;
    if (body_.num_inputs(id) >= 5 && body_.input(id, 4) != ir::kNoValue) {
      const auto steps = constant_ints(body_, body_.input(id, 4));
      if (!steps || std::any_of(steps->begin(), steps->end(), [](int64_t s) { return s != 1; })) return std::nullopt;
    }
    if (!same_known_shape(body_.output(id, 0), body_.input(id, 0))) return std::nullopt;
    return forward(body_.input(id, 0), Counter::ExpandsFolded);
  }
};

}  // namespace

bool apply_peepholes(PassContext& ctx) {
  MutableBody& body = ctx.body();
  const Peepholes peepholes(body, ctx.options());
  for (auto id = body.first(); id != kNone && !ctx.stop(); id = body.next(id)) {
    const auto fix = peepholes.match(id);
    if (!fix) continue;
    ctx.apply(fix->counter, [&] {
      switch (fix->kind) {
        case Fix::Forward: return body.forward(id, fix->to);
        case Fix::Bypass: body.set_input(id, 0, fix->to); return true;
        case Fix::Compose: {
          NodeProto t;
          t.set_op_type("Transpose");
          set_ints_attribute(t, "perm", fix->perm);
          body.replace_node(id, std::move(t), {fix->to});
          return true;
        }
        case Fix::Unsqueeze: {
          NodeProto u;
          u.set_op_type("Unsqueeze");
          if (ctx.options().onnx_opset >= kAxesAsInput) {
            body.replace_node(id, std::move(u), {fix->to, body.add_constant(int64_vector(fix->perm), "axes")});
          } else {
            set_ints_attribute(u, "axes", fix->perm);
            body.replace_node(id, std::move(u), {fix->to});
          }
          return true;
        }
      }
      return false;
    });
  }
  return ctx.changed();
}

}  // namespace shapeprop::transform
