// Opt-in (only with --passes): HardSigmoid and HardSwish fused from the decompositions
// exporters write (issue 25, family 12):
//   Clip(x + 3, 0, 6) / 6   (or * (1/6))        -> HardSigmoid<alpha = 1/6, beta = 0.5>(x)
//   x * HardSigmoid<1/6, 0.5>(x)                 -> HardSwish(x)           (opset 14 on)
//   x * Clip(x + 3, 0, 6) / 6   (either order)   -> HardSwish(x)
// The fused ops compute max(0, min(1, x/6 + 0.5)) (times x): the same function, rounded
// differently (a division by 6 against a multiplication by 1/6 and an addition of 0.5),
// so the outputs agree to within float rounding, not bit for bit: hence opt-in. NaN goes
// through both forms alike (Clip, min and max propagate it). The constants must be those
// exactly (3, 0, 6, 6 or the float nearest 1/6), scalars or one-element tensors, and every
// value in between must have no other reader.
#include "rewrite_support.h"

namespace shapeprop::transform {

namespace {

using onnx::NodeProto;

constexpr int64_t kHardSwish = 14;

class HardActivations {
 public:
  explicit HardActivations(const MutableBody& body) : body_(body) {}

  // The node is x's HardSigmoid (Div or Mul of a Clip of x + 3): x.
  std::optional<ValueId> hard_sigmoid(NodeId id) const {
    const NodeProto& n = body_.node(id);
    ValueId clip = ir::kNoValue;
    if (is_op(n, "Div") && is_scalar(body_.input(id, 1), 6.0))
      clip = body_.input(id, 0);
    else if (is_op(n, "Mul"))
      clip = other_than(id, [&](ValueId v) { return is_scalar(v, static_cast<double>(1.0f / 6.0f)); });
    return clip == ir::kNoValue ? std::nullopt : relu6_of_shift(clip);
  }

  // HardSigmoid<1/6, 0.5>(x) (the op itself): x.
  std::optional<ValueId> hard_sigmoid_op(ValueId v) const {
    const NodeId p = only_reader_producer(v);
    if (p == kNone || !is_op(body_.node(p), "HardSigmoid") || has_reference(body_.node(p))) return std::nullopt;
    const auto* alpha = attribute(body_.node(p), "alpha");
    const auto* beta = attribute(body_.node(p), "beta");
    if (!alpha || !beta || alpha->f() != 1.0f / 6.0f || beta->f() != 0.5f) return std::nullopt;
    return body_.input(p, 0);
  }

  // The node is x's HardSwish: Mul(x, HardSigmoid(x)), or Div(Mul(x, Clip(x+3, 0, 6)), 6).
  std::optional<ValueId> hard_swish(NodeId id) const {
    const NodeProto& n = body_.node(id);
    if (is_op(n, "Mul") && body_.num_inputs(id) == 2) {
      for (size_t k = 0; k < 2; ++k) {
        const ValueId x = body_.input(id, k), other = body_.input(id, 1 - k);
        if (hard_sigmoid_op(other) == std::optional<ValueId>(x)) return x;
        // x * (Clip(x + 3, 0, 6) / 6), the HardSigmoid not fused yet
        const NodeId p = only_reader_producer(other);
        if (p != kNone && hard_sigmoid(p) == std::optional<ValueId>(x)) return x;
      }
      return std::nullopt;
    }
    if (!is_op(n, "Div") || !is_scalar(body_.input(id, 1), 6.0)) return std::nullopt;
    const NodeId m = only_reader_producer(body_.input(id, 0));
    if (m == kNone || !is_op(body_.node(m), "Mul") || body_.num_inputs(m) != 2) return std::nullopt;
    for (size_t k = 0; k < 2; ++k)
      if (relu6_of_shift(body_.input(m, 1 - k)) == std::optional<ValueId>(body_.input(m, k))) return body_.input(m, k);
    return std::nullopt;
  }

 private:
  const MutableBody& body_;

  // A floating constant of one element equal to `value` (integral constants are not: the
  // fused ops take floating inputs only).
  bool is_scalar(ValueId v, double value) const {
    const Fact* f = body_.fact(v);
    return f && f->reals && one_element_value(f) == static_cast<long double>(value);
  }

  // The producer of v, when v has no other reader and is no body output.
  NodeId only_reader_producer(ValueId v) const {
    if (v == ir::kNoValue || body_.uses(v) != 1) return kNone;
    return body_.producer(v);
  }

  // The one input of a two-input node that is not `is_constant`, when the other is.
  template <class Pred>
  ValueId other_than(NodeId id, Pred&& is_constant) const {
    if (body_.num_inputs(id) != 2) return ir::kNoValue;
    if (is_constant(body_.input(id, 1))) return body_.input(id, 0);
    if (is_constant(body_.input(id, 0))) return body_.input(id, 1);
    return ir::kNoValue;
  }

  // v = Clip(x + 3, 0, 6): x.
  std::optional<ValueId> relu6_of_shift(ValueId v) const {
    const NodeId clip = only_reader_producer(v);
    if (clip == kNone || !is_op(body_.node(clip), "Clip") || body_.num_inputs(clip) != 3 ||
        !is_scalar(body_.input(clip, 1), 0.0) || !is_scalar(body_.input(clip, 2), 6.0))
      return std::nullopt;
    const NodeId add = only_reader_producer(body_.input(clip, 0));
    if (add == kNone || !is_op(body_.node(add), "Add")) return std::nullopt;
    const ValueId x = other_than(add, [&](ValueId c) { return is_scalar(c, 3.0); });
    if (x == ir::kNoValue || !same_known_shape(body_, x, v)) return std::nullopt;
    return x;
  }
};

}  // namespace

bool fuse_hard_activations(PassContext& ctx) {
  MutableBody& body = ctx.body();
  const HardActivations hard(body);
  const bool swish = ctx.options().onnx_opset >= kHardSwish;
  struct Fused {
    ValueId x;
    bool swish;
  };
  return rewrite_matches(
      ctx, Counter::ActivationsFused,
      [&](NodeId id) -> std::optional<Fused> {
        const auto x = swish ? hard.hard_swish(id) : std::nullopt;
        const auto y = x ? x : hard.hard_sigmoid(id);
        if (!y || !same_known_shape(body, *y, body.output(id, 0))) return std::nullopt;
        return Fused{*y, x.has_value()};
      },
      [&](NodeId id, const auto& f) {
        NodeProto op;
        op.set_op_type(f->swish ? "HardSwish" : "HardSigmoid");
        if (!f->swish) {
          auto* alpha = op.add_attribute();
          alpha->set_name("alpha");
          alpha->set_type(onnx::AttributeProto::FLOAT);
          alpha->set_f(1.0f / 6.0f);
          auto* beta = op.add_attribute();
          beta->set_name("beta");
          beta->set_type(onnx::AttributeProto::FLOAT);
          beta->set_f(0.5f);
        }
        body.replace_node(id, std::move(op), {f->x});
        return true;
      });
}

}  // namespace shapeprop::transform
