// Min and Max of a constant, twice in a row, as one node (issue 25, family 1):
//  - Max(Max(x, a), b) is Max(x, max(a, b)); Min(Min(x, a), b) is Min(x, min(a, b));
//  - Min(Max(x, lo), hi) and Max(Min(x, hi), lo) are Clip(x, lo, hi) when lo <= hi; when
//    lo > hi, Min(Max(x, lo), hi) is still Clip(x, lo, hi) from opset 13, whose definition
//    makes Clip with min > max exactly Min(max, Max(input, min)); Max(Min(x, hi), lo) is
//    then lo everywhere but NaN, which no Clip is: left as it is.
// Either operand of each may be the constant. Only two-input Min/Max whose constant is a
// number of one element (a NaN bound is left alone) of a rank no greater than x's (so it
// broadcasts nothing: the result has x's shape), and an inner node read by the outer one
// only. Clip's bounds must be scalars: a bound of shape [1] (or [1,1], ...) goes in as a
// new scalar constant of its value (float, double, int32, int64; other types stay). NaN: ONNX's reference implementations of Min, Max
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
  bool scalar;  // c has rank 0
};

// A scalar tensor of type `t` holding `v` (a value read from a constant of type t).
std::optional<TensorProto> scalar_tensor(int32_t t, long double v) {
  TensorProto p;
  p.set_data_type(t);
  switch (t) {
    case TensorProto::FLOAT: p.add_float_data(static_cast<float>(v)); break;
    case TensorProto::DOUBLE: p.add_double_data(static_cast<double>(v)); break;
    case TensorProto::INT32: p.add_int32_data(static_cast<int32_t>(v)); break;
    case TensorProto::INT64: p.add_int64_data(static_cast<int64_t>(v)); break;
    default: return std::nullopt;
  }
  return p;
}

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
      const Fact* cf = body_.fact(c);
      const auto v = one_element_value(cf);
      const auto cr = rank_of(cf);
      const auto xr = rank_of(body_.fact(x));
      if (v && cr && xr && *cr <= *xr) return Bound{n.op_type() == "Max", x, c, *v, *cr == 0};
    }
    return std::nullopt;
  }

  // What node `outer` becomes: its op and inputs.
  struct Rewrite {
    std::string op;
    std::vector<ValueId> inputs;
    NodeId inner;
    // Clip's bounds to make as scalar constants (inputs 1, 2), where not scalars already.
    std::optional<TensorProto> lo, hi;
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
      return Rewrite{in->is_max ? "Max" : "Min", {in->x, first ? in->c : out->c}, inner, std::nullopt, std::nullopt};
    }
    const Bound& lo = in->is_max ? *in : *out;
    const Bound& hi = in->is_max ? *out : *in;
    const int64_t since = clip_opset_for(xf->elem_type);
    // lo > hi: Min(Max(x, lo), hi) is what Clip-13 defines then (all hi, NaN kept);
    // Max(Min(x, hi), lo) is all lo, which no Clip is.
    if (lo.value > hi.value && (!in->is_max || options_.onnx_opset < 13)) return std::nullopt;
    if (since == 0 || options_.onnx_opset < since) return std::nullopt;
    Rewrite r{"Clip", {in->x, lo.c, hi.c}, inner, std::nullopt, std::nullopt};
    if (!lo.scalar && !(r.lo = scalar_tensor(xf->elem_type, lo.value))) return std::nullopt;
    if (!hi.scalar && !(r.hi = scalar_tensor(xf->elem_type, hi.value))) return std::nullopt;
    return r;
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
        std::vector<ValueId> inputs = r->inputs;
        if (r->lo) inputs[1] = body.add_constant(*r->lo, "clip_min");
        if (r->hi) inputs[2] = body.add_constant(*r->hi, "clip_max");
        body.replace_node(id, std::move(node), inputs);
        body.erase(r->inner);
        return true;
      });
}

}  // namespace shapeprop::transform
