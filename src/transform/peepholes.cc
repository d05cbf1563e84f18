// Small rewrites of one node (and its producer) that the facts decide:
//  - Transpose of a Transpose: one Transpose of the composed permutation, or nothing when
//    it is the identity; a Transpose by the identity permutation: nothing (each perm
//    checked against its input's known rank);
//  - Squeeze of an Unsqueeze of the same axes, and Unsqueeze of a Squeeze: nothing;
//  - Reshape of a Reshape to a constant shape without 0 entries: one Reshape;
//  - Concat of one input: nothing;
//  - Where whose condition is a constant all true (all false), and whose result is no
//    larger than X (Y): X (Y);
//  - Expand by ones, Tile by ones, Slice of everything with steps of 1, and Reshape or
//    Expand to the shape their input has: nothing;
//  - Mul or Div by a constant one that broadcasts nothing: x * 1 and x / 1 are x exactly;
//  - Dropout in inference (no training_mode) whose mask nobody reads: its input.
// "Nothing" means the node's readers read its input (or the node becomes an Identity where
// its output keeps its name).
#include <numeric>

#include "rewrite_support.h"

namespace shapeprop::transform {

namespace {

using onnx::NodeProto;

constexpr int64_t kAxesAsInput = 13;         // Squeeze/Unsqueeze take axes as an input
constexpr int64_t kDropoutTrainingMode = 12;  // Dropout says when it drops

// Every element of the value is `value` (all true for 1, all false for 0, with bools).
bool all_elements_are(const Fact* f, int64_t value) {
  if (!f || !f->is_tensor()) return false;
  if (f->ints) {
    if (f->ints->empty()) return false;
    for (const Dim& d : *f->ints)
      if (d.as_constant() != std::optional<int64_t>(value)) return false;
    return true;
  }
  if (f->reals) {
    if (f->reals->empty()) return false;
    for (double d : *f->reals)
      if (d != static_cast<double>(value)) return false;
    return true;
  }
  return false;
}

std::optional<std::vector<int64_t>> normalized_axes(std::vector<int64_t> axes, size_t rank) {
  for (auto& a : axes) {
    if (a < 0) a += static_cast<int64_t>(rank);
    if (a < 0 || a >= static_cast<int64_t>(rank)) return std::nullopt;
  }
  std::sort(axes.begin(), axes.end());
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end()) return std::nullopt;
  return axes;
}

class Peepholes {
 public:
  explicit Peepholes(BodyRewriter& body) : body_(body) {}

  bool run() {
    return body_.rewrite_each([&](BodyRewriter::NodeId id) {
      const NodeProto& n = body_.node(id);
      if (!FunctionId::is_default_domain(n.domain()) || n.output_size() == 0 || n.output(0).empty() || n.input_size() == 0 ||
          n.input(0).empty())
        return false;
      const std::string& op = n.op_type();
      if (op == "Transpose") return transpose(id);
      if (op == "Squeeze" || op == "Unsqueeze") return squeeze_pair(id);
      if (op == "Reshape") return keeps_shape(id) || reshape_of_reshape(id);
      if (op == "Concat") return single_concat(id);
      if (op == "Where") return constant_where(id);
      if (op == "Expand" || op == "Tile") return keeps_shape(id) || by_ones(id);
      if (op == "Slice") return whole_slice(id);
      if (op == "Mul" || op == "Div") return by_one(id);
      if (op == "Dropout") return inference_dropout(id);
      return false;
    });
  }

 private:
  BodyRewriter& body_;

  // The node's output is `to`: counted under `counter`.
  bool remove(BodyRewriter::NodeId id, const std::string& to, size_t& counter) {
    if (body_.dry()) return true;
    if (!body_.forward(id, to)) return false;
    ++counter;
    return true;
  }

  // The Transpose's permutation, when its input's rank is known and the perm is one of
  // that many axes. Anything else fails at run time (a perm of the wrong length, which
  // ONNX 1.17's rule lets through, or a repeated axis), and a rewrite must not make a
  // failing node succeed.
  std::optional<std::vector<int64_t>> permutation(const NodeProto& t) const {
    const auto rank = rank_of(body_.fact(t.input(0)));
    if (!rank) return std::nullopt;
    std::vector<int64_t> perm(*rank);
    std::iota(perm.rbegin(), perm.rend(), 0);
    if (auto given = ints_attribute(t, "perm")) perm = std::move(*given);
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

  bool transpose(BodyRewriter::NodeId id) {
    const NodeProto& n = body_.node(id);
    if (n.input_size() != 1 || n.output_size() != 1) return false;
    const auto outer = permutation(n);
    if (!outer) return false;
    if (is_identity(*outer)) return remove(id, n.input(0), body_.stats().transposes_folded);
    const auto p = body_.producer(n.input(0));
    if (p == BodyRewriter::kEnd || !is_op(body_.node(p), "Transpose") || body_.node(p).input_size() != 1) return false;
    const NodeProto& inner_node = body_.node(p);
    const auto inner = permutation(inner_node);
    if (!inner || inner->size() != outer->size()) return false;
    std::vector<int64_t> composed(outer->size());
    for (size_t i = 0; i < outer->size(); ++i) composed[i] = (*inner)[static_cast<size_t>((*outer)[i])];
    const std::string x = inner_node.input(0);
    if (is_identity(composed)) return remove(id, x, body_.stats().transposes_folded);
    if (body_.dry()) return true;
    NodeProto t;
    t.set_op_type("Transpose");
    t.add_input(x);
    t.add_output(n.output(0));
    set_ints_attribute(t, "perm", composed);
    body_.replace_node(id, std::move(t));
    ++body_.stats().transposes_folded;
    return true;
  }

  std::optional<std::vector<int64_t>> axes_of(const NodeProto& n) const {
    if (body_.options().onnx_opset >= kAxesAsInput) {
      if (n.input_size() < 2 || n.input(1).empty()) return std::nullopt;
      return constant_ints(body_, n.input(1));
    }
    return ints_attribute(n, "axes");
  }

  // Squeeze(Unsqueeze(x, a), a) and Unsqueeze(Squeeze(x, a), a) are x.
  bool squeeze_pair(BodyRewriter::NodeId id) {
    const NodeProto& n = body_.node(id);
    const bool outer_squeezes = n.op_type() == "Squeeze";
    const auto p = body_.producer(n.input(0));
    if (p == BodyRewriter::kEnd) return false;
    const NodeProto& inner = body_.node(p);
    if (!is_op(inner, outer_squeezes ? "Unsqueeze" : "Squeeze") || inner.input_size() == 0 || inner.input(0).empty())
      return false;
    // Both sets of axes are positions in the larger of the two shapes.
    const auto larger = rank_of(body_.fact(outer_squeezes ? n.input(0) : inner.input(0)));
    const auto a = axes_of(n), b = axes_of(inner);
    if (!larger || !a || !b) return false;
    const auto na = normalized_axes(*a, *larger), nb = normalized_axes(*b, *larger);
    if (!na || !nb || *na != *nb) return false;
    return remove(id, inner.input(0), body_.stats().squeezes_folded);
  }

  // Reshape(Reshape(x, s1), s2) is Reshape(x, s2) when s2 copies nothing from the middle.
  bool reshape_of_reshape(BodyRewriter::NodeId id) {
    const NodeProto& n = body_.node(id);
    if (n.input_size() != 2 || n.input(1).empty()) return false;
    const auto p = body_.producer(n.input(0));
    if (p == BodyRewriter::kEnd || !is_op(body_.node(p), "Reshape") || body_.node(p).input(0).empty()) return false;
    const auto shape = constant_ints(body_, n.input(1));
    if (!shape) return false;
    const bool allowzero = int_attribute(n, "allowzero").value_or(0) != 0;
    if (!allowzero && std::find(shape->begin(), shape->end(), 0) != shape->end()) return false;
    if (body_.dry()) return true;
    body_.set_input(id, 0, body_.node(p).input(0));
    ++body_.stats().reshapes_folded;
    return true;
  }

  bool single_concat(BodyRewriter::NodeId id) {
    const NodeProto& n = body_.node(id);
    if (n.input_size() != 1 || n.output_size() != 1) return false;
    return remove(id, n.input(0), body_.stats().concats_folded);
  }

  bool same_known_shape(const std::string& a, const std::string& b) const {
    const std::vector<Dim>* da = known_dims(body_.fact(a));
    const std::vector<Dim>* db = known_dims(body_.fact(b));
    const Fact* fa = body_.fact(a);
    const Fact* fb = body_.fact(b);
    return da && db && *da == *db && fa->elem_type == fb->elem_type && fa->elem_type != 0;
  }

  bool constant_where(BodyRewriter::NodeId id) {
    const NodeProto& n = body_.node(id);
    if (n.input_size() != 3 || n.output_size() != 1 || n.input(1).empty() || n.input(2).empty()) return false;
    const Fact* c = body_.fact(n.input(0));
    int chosen;
    if (all_elements_are(c, 1))
      chosen = 1;
    else if (all_elements_are(c, 0))
      chosen = 2;
    else
      return false;
    if (!same_known_shape(n.output(0), n.input(chosen))) return false;
    return remove(id, n.input(chosen), body_.stats().wheres_folded);
  }

  // Reshape, Expand or Tile whose result has the shape of its input, dim for dim.
  bool keeps_shape(BodyRewriter::NodeId id) {
    const NodeProto& n = body_.node(id);
    if (n.output_size() != 1 || !same_known_shape(n.output(0), n.input(0))) return false;
    size_t& counter = n.op_type() == "Reshape" ? body_.stats().reshapes_folded : body_.stats().expands_folded;
    return remove(id, n.input(0), counter);
  }

  // Expand(x, ones) with no more ones than x has dims; Tile(x, ones).
  bool by_ones(BodyRewriter::NodeId id) {
    const NodeProto& n = body_.node(id);
    if (n.input_size() != 2 || n.output_size() != 1 || n.input(1).empty()) return false;
    const auto ones = constant_ints(body_, n.input(1));
    if (!ones || std::any_of(ones->begin(), ones->end(), [](int64_t v) { return v != 1; })) return false;
    if (n.op_type() == "Expand") {
      const auto rank = rank_of(body_.fact(n.input(0)));
      if (!rank || ones->size() > *rank) return false;
    }
    return remove(id, n.input(0), body_.stats().expands_folded);
  }

  // Slice whose result has its input's shape, with steps of 1: all of it, in order.
  bool whole_slice(BodyRewriter::NodeId id) {
    const NodeProto& n = body_.node(id);
    if (n.output_size() != 1 || n.input_size() < 3) return false;
    if (n.input_size() >= 5 && !n.input(4).empty()) {
      const auto steps = constant_ints(body_, n.input(4));
      if (!steps || std::any_of(steps->begin(), steps->end(), [](int64_t s) { return s != 1; })) return false;
    }
    if (!same_known_shape(n.output(0), n.input(0))) return false;
    return remove(id, n.input(0), body_.stats().expands_folded);
  }

  // x * 1, 1 * x, x / 1, where the one broadcasts nothing.
  bool by_one(BodyRewriter::NodeId id) {
    const NodeProto& n = body_.node(id);
    if (n.input_size() != 2 || n.output_size() != 1 || n.input(1).empty()) return false;
    for (int k = 1; k >= 0; --k) {
      if (k == 0 && n.op_type() == "Div") break;  // 1 / x is not x
      const std::string& one = n.input(k);
      const std::string& x = n.input(1 - k);
      const Fact* f = body_.fact(one);
      if (!all_elements_are(f, 1)) continue;
      const Fact* xf = body_.fact(x);
      const Fact* of = body_.fact(n.output(0));
      if (!xf || !of || xf->elem_type == 0 || xf->elem_type != of->elem_type) continue;
      const bool scalar = f->shape && f->shape->empty();
      if (!scalar && !same_known_shape(n.output(0), x)) continue;
      return remove(id, x, body_.stats().neutral_ops_removed);
    }
    return false;
  }

  bool inference_dropout(BodyRewriter::NodeId id) {
    const NodeProto& n = body_.node(id);
    if (body_.options().onnx_opset < kDropoutTrainingMode) return false;
    if (n.input_size() >= 3 && !n.input(2).empty()) {
      if (!all_elements_are(body_.fact(n.input(2)), 0)) return false;
    }
    if (n.output_size() > 1 && !n.output(1).empty() && body_.uses(n.output(1)) > 0) return false;
    if (n.output_size() > 1 && !n.output(1).empty() && body_.is_protected(n.output(1))) return false;
    return remove(id, n.input(0), body_.stats().neutral_ops_removed);
  }
};

}  // namespace

bool apply_peepholes(BodyRewriter& body) { return Peepholes(body).run(); }

}  // namespace shapeprop::transform
