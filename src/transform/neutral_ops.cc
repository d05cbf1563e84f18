// Arithmetic by a neutral element, removed where the result is its other operand exactly,
// bit for bit, for every value of it (NaN, infinities and signed zeros included):
//  - Add(x, 0), Add(0, x), Sub(x, 0) for integers;
//  - Add(x, -0.0), Add(-0.0, x), Sub(x, +0.0) for floats. Not Add(x, +0.0) nor
//    Sub(x, -0.0): -0.0 + +0.0 is +0.0, so those change x = -0.0;
//  - Mul(x, 1), Mul(1, x), Div(x, 1), Pow(x, 1) (pow(x, 1) is x, NaN included);
//  - And(x, true), Or(x, false), Xor(x, false), either way round;
//  - Where(c, x, x).
// The neutral operand is known from the facts, or is a stored constant of any size (a bias
// of zeros, a weight of ones, past the elements a fact keeps). Only where the node's
// output has x's element type, and x's shape: the neutral operand is a scalar, or the
// output's shape is known equal to x's (so it broadcasts nothing).
// The node's readers then read x (or the node becomes an Identity where its output keeps
// its name).
#include <algorithm>
#include <cmath>

#include "rewrite_support.h"
#include "tensor_values.h"

namespace shapeprop::transform {

namespace {

using onnx::NodeProto;

// What a neutral operand must be: all its elements this integer (integral types, bools)
// or this real with this sign (floating types, where +0.0 and -0.0 differ).
struct Neutral {
  int64_t value;
  bool negative_zero = false;  // floats: the zero must be -0.0 (else +0.0)
};

// Every element is `n`: with floats, zeros of the required sign only.
bool all_neutral(const Fact* f, Neutral n) {
  if (!all_elements_are(f, n.value)) return false;
  if (!f->reals || n.value != 0) return true;
  for (double d : *f->reals)
    if (std::signbit(d) != n.negative_zero) return false;
  return true;
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
  return std::all_of(v->reals.begin(), v->reals.end(), [&](double d) {
    return d == static_cast<double>(n.value) && (n.value != 0 || std::signbit(d) == n.negative_zero);
  });
}

class NeutralOps {
 public:
  explicit NeutralOps(const MutableBody& body) : body_(body) {}

  // The operand the node's output equals, if it does.
  std::optional<ValueId> match(NodeId id) const {
    const NodeProto& n = body_.node(id);
    if (!FunctionId::is_default_domain(n.domain()) || body_.num_outputs(id) != 1 || body_.output(id, 0) == ir::kNoValue)
      return std::nullopt;
    const std::string& op = n.op_type();
    if (op == "Where") return same_branches(id);
    if (body_.num_inputs(id) != 2 || body_.input(id, 0) == ir::kNoValue || body_.input(id, 1) == ir::kNoValue)
      return std::nullopt;
    const Fact* x0 = body_.fact(body_.input(id, 0));
    if (!x0 || x0->elem_type == 0) return std::nullopt;
    const bool floating = is_floating_type(x0->elem_type);
    if (op == "Add") return floating ? either(id, {0, /*negative_zero=*/true}) : either(id, {0});
    if (op == "Sub") return floating ? right(id, {0, /*negative_zero=*/false}) : right(id, {0});
    if (op == "Mul") return either(id, {1});
    if (op == "Div" || op == "Pow") return right(id, {1});
    if (op == "And") return either(id, {1});
    if (op == "Or" || op == "Xor") return either(id, {0});
    return std::nullopt;
  }

 private:
  const MutableBody& body_;

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
  const NeutralOps neutral(body);
  return rewrite_matches(
      ctx, Counter::NeutralOpsRemoved, [&](NodeId id) { return neutral.match(id); },
      [&](NodeId id, const auto& x) { return body.forward(id, *x); });
}

}  // namespace shapeprop::transform
