// Arithmetic by a neutral element, removed where the result is its other operand exactly,
// bit for bit, for every value of it (NaN, infinities and signed zeros included):
//  - Add(x, 0), Add(0, x), Sub(x, 0) for integers;
//  - Add(x, -0.0), Add(-0.0, x), Sub(x, +0.0) for floats;
//  - Mul(x, 1), Mul(1, x), Div(x, 1), Pow(x, 1) (pow(x, 1) is x, NaN included);
//  - And(x, true), Or(x, false), Xor(x, false), either way round;
//  - Where(c, x, x).
// Add(x, +0.0) and Sub(x, -0.0) (zeros of either sign, a bias of zeros) are x but where x
// is -0.0, which they make +0.0. They go only where no output can tell (ZeroSigns below):
// every value computed from theirs is then the same number either way, a zero's sign
// aside, and -0.0 equals +0.0. The neutral operand is known from the facts, or is a stored
// constant of any size (a bias of zeros, a weight of ones, past the elements a fact
// keeps). Only where the node's output has x's element type, and x's shape: the neutral
// operand is a scalar, or the output's shape is known equal to x's (so it broadcasts
// nothing). The node's readers then read x (or the node becomes an Identity where its
// output keeps its name).
#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "rewrite_support.h"
#include "tensor_values.h"

namespace shapeprop::transform {

namespace {

using onnx::NodeProto;

// What a neutral operand must be: all its elements this integer (integral types, bools)
// or this real with this sign (floating types, where +0.0 and -0.0 differ).
enum class ZeroSign : uint8_t { kAny, kNegative, kPositive };
struct Neutral {
  int64_t value;
  ZeroSign zero_sign = ZeroSign::kAny;  // floats: the sign a zero must have

  bool sign_fits(double d) const {
    return value != 0 || zero_sign == ZeroSign::kAny || std::signbit(d) == (zero_sign == ZeroSign::kNegative);
  }
};

// Every element is `n`: with floats, zeros of the required sign only.
bool all_neutral(const Fact* f, Neutral n) {
  if (!all_elements_are(f, n.value)) return false;
  if (!f->reals) return true;
  return std::all_of(f->reals->begin(), f->reals->end(), [&](double d) { return n.sign_fits(d); });
}

// What a stored neutral operand may hold at most: a norm's weight or a bias, not a matrix
// decoded for every MatMul operand.
constexpr int64_t kMaxNeutralElements = int64_t{1} << 20;

// The same of a stored constant (an initializer, a Constant node) whose elements the fact
// does not hold: larger than its caps (a bias of zeros, a norm's weight of ones).
bool all_neutral(const onnx::TensorProto* t, Neutral n) {
  const auto v = t ? decode(*t, kMaxNeutralElements) : std::nullopt;
  if (!v || v->size() == 0) return false;
  if (!v->real) return std::all_of(v->ints.begin(), v->ints.end(), [&](int64_t e) { return e == n.value; });
  return std::all_of(v->reals.begin(), v->reals.end(),
                     [&](double d) { return d == static_cast<double>(n.value) && n.sign_fits(d); });
}

// How a node's output follows from one input, where that input changes only in the signs
// of its zeros: the same (a comparison, a shape, a cast to an integer), the same but for
// the signs of its own zeros, or possibly another number (1 / x: -inf for +inf).
enum class ZeroRead : uint8_t { kSame, kSignsOnly, kObservable };

// "Signs only" holds of what is computed by +, -, *, by division of x and by functions
// continuous at 0: where the result is not a zero it is the same number, since x + +-0 is
// x for every x that is not a zero, +-0 * y is a zero (or NaN for both) and so on; a sum
// that is a zero (a MatMul's, a mean's) may only change its sign. So are moves, gathers
// and pads of elements, and the norms, whose divisors are computed from squares and an
// epsilon. Division *by* x, Reciprocal, pow(x, y) with y < 0 (or not known) and anything not listed
// (other domains, calls, subgraphs, a cast to strings) may tell.
ZeroRead zero_read(const onnx::NodeProto& n, size_t slot, const MutableBody& body, NodeId id) {
  const auto same = [](std::string_view op) {
    return one_of(op, {"Shape", "Size", "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "IsNaN", "IsInf"});
  };
  // Elementwise or linear in every input.
  const auto any_slot = [](std::string_view op) {
    return one_of(op, {"Add", "Sub", "Mul", "Neg", "Abs", "Relu", "LeakyRelu", "Elu", "Selu", "Celu", "Gelu",
                       "Erf", "Tanh", "Sigmoid", "HardSigmoid", "HardSwish", "Exp", "Sin", "Cos", "Max", "Min",
                       "Sum", "Mean", "Identity", "MatMul", "Gemm", "Conv", "ConvTranspose", "Einsum",
                       "LayerNormalization", "Transpose", "Concat", "Flatten", "DepthToSpace", "SpaceToDepth"});
  };
  // Read by their data input only (the others are shapes, indices, axes or bounds).
  const auto first_slot = [](std::string_view op) {
    return one_of(op, {"Reshape", "Squeeze", "Unsqueeze", "Expand", "Slice", "Gather", "GatherElements",
                       "GatherND", "Tile", "Split", "Clip", "Div", "Dropout", "ReduceSum", "ReduceMean",
                       "ReduceMax", "ReduceMin", "Softmax", "LogSoftmax", "BatchNormalization",
                       "InstanceNormalization", "MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool",
                       "Resize"});
  };
  if (!FunctionId::is_default_domain(n.domain()) || has_subgraph(n)) return ZeroRead::kObservable;
  const std::string_view op = n.op_type();  // compared as a view: lengths first
  if (same(op)) return ZeroRead::kSame;
  if (any_slot(op) || (slot == 0 && first_slot(op))) return ZeroRead::kSignsOnly;
  if (op == "Where" && slot > 0) return ZeroRead::kSignsOnly;
  if (op == "Pad" && slot != 1) return ZeroRead::kSignsOnly;  // the data, the constant value
  if (op == "Pow" && slot == 1) return ZeroRead::kSame;       // pow(y, +-0) is 1, NaN y included
  // pow(+-0, y) is a zero for y > 0 (its sign kept for odd integers), 1 for y = 0, NaN for
  // a NaN y; only y < 0 tells (+-inf): a base read with exponents known none negative
  // (GELU's x^3, a norm's x^2) changes only in its zeros' signs.
  if (op == "Pow" && slot == 0 && body.num_inputs(id) == 2) {
    const Fact* y = body.fact(body.input(id, 1));
    if (y && y->reals && std::none_of(y->reals->begin(), y->reals->end(), [](double d) { return d < 0; }))
      return ZeroRead::kSignsOnly;
    if (y && y->ints && std::all_of(y->ints->begin(), y->ints->end(), [](const Dim& d) {
          return d.as_constant().value_or(-1) >= 0;
        }))
      return ZeroRead::kSignsOnly;
  }
  if (op == "CastLike" && slot == 1) return ZeroRead::kSame;  // only its type is read
  if ((op == "Cast" || op == "CastLike") && slot == 0) {
    const Fact* out = body.fact(body.output(id, 0));
    if (!out || out->elem_type == 0 || out->elem_type == onnx::TensorProto::STRING) return ZeroRead::kObservable;
    return is_floating_type(out->elem_type) ? ZeroRead::kSignsOnly : ZeroRead::kSame;
  }
  return ZeroRead::kObservable;
}

// Which values of the body no output can tell the signs of the zeros of: every reader
// gives the same output, or the same but for its zeros' signs and no output can tell
// those. A main graph's output may hold a zero of either sign (they compare equal); a
// function's output may not (its caller is not looked at). Computed once, backwards over
// the nodes in their order; a value not reached is taken as told.
//
// Stays true while the pass forwards Adds: a forwarded Add's readers read x instead, the
// same readers with one Add (signs only) less between.
class ZeroSigns {
 public:
  explicit ZeroSigns(const MutableBody& body) : body_(body) {}

  bool unobservable(ValueId v) {
    if (!swept_) sweep();
    const auto it = unobservable_.find(v);
    return it != unobservable_.end() && it->second;
  }

 private:
  const MutableBody& body_;
  bool swept_ = false;
  std::unordered_map<ValueId, bool> unobservable_;

  void sweep() {
    swept_ = true;
    std::vector<NodeId> order;
    for (NodeId id = body_.first(); id != kNone; id = body_.next(id)) order.push_back(id);
    for (auto it = order.rbegin(); it != order.rend(); ++it)
      for (size_t k = 0; k < body_.num_outputs(*it); ++k)
        if (const ValueId v = body_.output(*it, k); v != ir::kNoValue) unobservable_[v] = compute(v);
  }

  bool compute(ValueId v) const {
    if (body_.is_interface(v) && !body_.main_graph()) return false;
    for (NodeId r : body_.readers(v)) {
      bool read_here = false;
      for (size_t k = 0; k < body_.num_inputs(r); ++k) {
        if (body_.input(r, k) != v) continue;
        read_here = true;
        switch (zero_read(body_.node(r), k, body_, r)) {
          case ZeroRead::kSame:
            break;
          case ZeroRead::kSignsOnly:
            for (size_t o = 0; o < body_.num_outputs(r); ++o) {
              const ValueId out = body_.output(r, o);
              if (out == ir::kNoValue) continue;
              const auto known = unobservable_.find(out);
              if (known == unobservable_.end() || !known->second) return false;
            }
            break;
          case ZeroRead::kObservable:
            return false;
        }
      }
      if (!read_here) return false;  // read inside a subgraph
    }
    return true;
  }
};

class NeutralOps {
 public:
  explicit NeutralOps(const MutableBody& body) : body_(body), zero_signs_(body) {}

  // The operand the node's output equals, if it does.
  std::optional<ValueId> match(NodeId id) {
    const NodeProto& n = body_.node(id);
    if (!FunctionId::is_default_domain(n.domain()) || body_.num_outputs(id) != 1 || body_.output(id, 0) == ir::kNoValue)
      return std::nullopt;
    const std::string_view op = n.op_type();  // compared as a view: lengths first
    if (op == "Where") return same_branches(id);
    if (body_.num_inputs(id) != 2 || body_.input(id, 0) == ir::kNoValue || body_.input(id, 1) == ir::kNoValue)
      return std::nullopt;
    const Fact* x0 = body_.fact(body_.input(id, 0));
    if (!x0 || x0->elem_type == 0) return std::nullopt;
    const bool floating = is_floating_type(x0->elem_type);
    if (!floating) {
      if (op == "Add") return either(id, {0});
      if (op == "Sub") return right(id, {0});
    }
    if (op == "Add" || op == "Sub") {
      const bool add = op == "Add";
      const Neutral exact{0, add ? ZeroSign::kNegative : ZeroSign::kPositive};
      // A zero of either sign first: most Adds have none, and neither the exact sign nor
      // the sweep of the body that tells whether signs are observable is then looked at.
      auto x = add ? either(id, {0}) : right(id, {0});
      if (!x) return std::nullopt;
      if (auto exact_x = add ? either(id, exact) : right(id, exact)) return exact_x;
      if (!zero_signs_.unobservable(body_.output(id, 0))) return std::nullopt;
      return x;
    }
    if (op == "Mul") return either(id, {1});
    if (op == "Div" || op == "Pow") return right(id, {1});
    if (op == "And") return either(id, {1});
    if (op == "Or" || op == "Xor") return either(id, {0});
    return std::nullopt;
  }

 private:
  const MutableBody& body_;
  ZeroSigns zero_signs_;

  // x op e, or e op x for a commutative op.
  std::optional<ValueId> either(NodeId id, Neutral e) const {
    if (auto x = with_neutral(id, /*x_at=*/0, e)) return x;
    return with_neutral(id, /*x_at=*/1, e);
  }
  std::optional<ValueId> right(NodeId id, Neutral e) const { return with_neutral(id, /*x_at=*/0, e); }

  std::optional<ValueId> with_neutral(NodeId id, size_t x_at, Neutral e) const {
    const ValueId x = body_.input(id, x_at);
    const ValueId other = body_.input(id, 1 - x_at);
    const Fact* of = body_.fact(other);
    if (!all_neutral(of, e) && (!of || of->has_elements() || !all_neutral(body_.stored_constant(other), e)))
      return std::nullopt;
    return gives_back(id, x, of);
  }

  // Where(c, x, x): x, where c broadcasts nothing.
  std::optional<ValueId> same_branches(NodeId id) const {
    if (body_.num_inputs(id) != 3 || body_.input(id, 1) == ir::kNoValue || body_.input(id, 1) != body_.input(id, 2))
      return std::nullopt;
    return gives_back(id, body_.input(id, 1), nullptr);
  }

  // The output is x (its type and shape), with `neutral` (if given) broadcasting nothing.
  std::optional<ValueId> gives_back(NodeId id, ValueId x, const Fact* neutral) const {
    const ValueId out = body_.output(id, 0);
    const Fact* xf = body_.fact(x);
    const Fact* outf = body_.fact(out);
    if (!xf || !outf || xf->elem_type == 0 || xf->elem_type != outf->elem_type) return std::nullopt;
    const bool scalar = neutral && neutral->shape && neutral->shape->empty();
    if (!scalar && !same_known_shape(body_, out, x)) return std::nullopt;
    if (!body_.can_forward(id, x)) return std::nullopt;
    return x;
  }
};

}  // namespace

bool remove_neutral_ops(PassContext& ctx) {
  MutableBody& body = ctx.body();
  NeutralOps neutral(body);
  return rewrite_matches(
      ctx, Counter::NeutralOpsRemoved, [&](NodeId id) { return neutral.match(id); },
      [&](NodeId id, const auto& x) { return body.forward(id, *x); });
}

}  // namespace shapeprop::transform
