// Min and Max of a constant, twice in a row, as one node (issue 25, family 1):
//  - Max(Max(x, a), b) is Max(x, max(a, b)); Min(Min(x, a), b) is Min(x, min(a, b));
//  - Min(Max(x, lo), hi) and Max(Min(x, hi), lo) are Clip(x, lo, hi) when lo <= hi (when
//    lo > hi the pair gives hi, resp. lo, everywhere: left as it is).
// Either operand of each may be the constant. Only two-input Min/Max whose constant is a
// scalar (so it broadcasts nothing) and a number (a NaN bound is left alone), and an inner
// node read by the outer one only. NaN: ONNX's reference implementations of Min, Max
// (np.minimum, np.maximum) and Clip (np.clip) all give NaN for a NaN x, so the rewrite
// keeps it. Clip where the opset takes x's type: float, double, float16 from 11, the
// integers from 12, bfloat16 from 13.
#include "rewrite_support.h"

namespace shapeprop::transform {

namespace {

using onnx::NodeProto;
using onnx::TensorProto;

// The opset from which Clip takes elements of type `t` (0: never).
int64_t clip_opset_for(int32_t t) {
  switch (t) {
    case TensorProto::FLOAT:
    case TensorProto::DOUBLE:
    case TensorProto::FLOAT16: return 11;
    case TensorProto::BFLOAT16: return 13;
    default: return is_integral_type(t) && t != TensorProto::BOOL ? 12 : 0;
  }
}

// A Min or Max of x and a scalar constant.
struct Bound {
  bool is_max;
  ValueId x;
  ValueId c;
  long double value;
};

class MinMaxToClip {
 public:
  MinMaxToClip(const MutableBody& body, const RewriteOptions& options) : body_(body), options_(options) {}

  std::optional<Bound> bound_of(NodeId id) const {
    const NodeProto& n = body_.node(id);
    if (!FunctionId::is_default_domain(n.domain()) || (n.op_type() != "Max" && n.op_type() != "Min") ||
        body_.num_inputs(id) != 2 || body_.num_outputs(id) != 1 || body_.output(id, 0) == ir::kNoValue)
      return std::nullopt;
    for (size_t k = 0; k < 2; ++k) {
      const ValueId c = body_.input(id, k);
      const ValueId x = body_.input(id, 1 - k);
      if (c == ir::kNoValue || x == ir::kNoValue) return std::nullopt;
      if (auto v = scalar_value(body_.fact(c))) return Bound{n.op_type() == "Max", x, c, *v};
    }
    return std::nullopt;
  }

  // What node `outer` becomes: its op and inputs.
  struct Rewrite {
    std::string op;
    std::vector<ValueId> inputs;
    NodeId inner;
  };

  std::optional<Rewrite> match(NodeId outer) const {
    const auto out = bound_of(outer);
    if (!out) return std::nullopt;
    const NodeId inner = body_.producer(out->x);
    if (inner == kNone || body_.uses(out->x) != 1 || body_.is_interface(out->x)) return std::nullopt;
    const auto in = bound_of(inner);
    if (!in) return std::nullopt;
    const Fact* xf = body_.fact(in->x);
    const Fact* of = body_.fact(body_.output(outer, 0));
    if (!xf || !of || xf->elem_type == 0 || xf->elem_type != of->elem_type) return std::nullopt;
    if (in->is_max == out->is_max) {  // the tighter bound of the two
      const bool first = in->is_max ? in->value >= out->value : in->value <= out->value;
      return Rewrite{in->is_max ? "Max" : "Min", {in->x, first ? in->c : out->c}, inner};
    }
    const Bound& lo = in->is_max ? *in : *out;
    const Bound& hi = in->is_max ? *out : *in;
    const int64_t since = clip_opset_for(xf->elem_type);
    if (lo.value > hi.value || since == 0 || options_.onnx_opset < since) return std::nullopt;
    return Rewrite{"Clip", {in->x, lo.c, hi.c}, inner};
  }

 private:
  const MutableBody& body_;
  const RewriteOptions& options_;
};

}  // namespace

bool min_max_to_clip(PassContext& ctx) {
  MutableBody& body = ctx.body();
  const MinMaxToClip rewriter(body, ctx.options());
  return rewrite_matches(
      ctx, Counter::MinMaxMerged, [&](NodeId id) { return rewriter.match(id); },
      [&](NodeId id, const auto& r) {
        NodeProto node;
        node.set_op_type(r->op);
        body.replace_node(id, std::move(node), r->inputs);
        body.erase(r->inner);
        return true;
      });
}

}  // namespace shapeprop::transform
