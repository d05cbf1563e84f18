// Min and Max of constants, twice in a row, as one node (issue 25, family 1; issue 38 for
// several constants per node):
//  - Max(Max(x, a), b) is Max(x, max(a, b)); Min(Min(x, a), b) is Min(x, min(a, b));
//  - Min(Max(x, lo), hi) and Max(Min(x, hi), lo) are Clip(x, lo, hi) when lo <= hi; when
//    lo > hi, Min(Max(x, lo), hi) is still Clip(x, lo, hi) from opset 13, whose definition
//    makes Clip with min > max exactly Min(max, Max(input, min)); Max(Min(x, hi), lo) is
//    then lo everywhere but NaN, which no Clip is: left as it is.
// Any operand of each may be a constant, and a node may have several: its bound is the
// tightest (a zero that two constants hold is left: -0.0 and +0.0 compare equal). The
// bounds are numbers of one element (a NaN bound is left alone) of a rank no greater than
// x's (so they broadcast nothing: the result has x's shape), and the inner node is read
// by the outer one only. Clip's bounds must be scalars: a bound of shape [1] goes in as a
// new scalar constant of its value (float, double, int32, int64; other types stay). NaN:
// ONNX's reference implementations of Min, Max (np.minimum, np.maximum) and Clip (np.clip)
// all give NaN for a NaN x, so the rewrite keeps it. Clip where the opset takes x's type:
// float, double, float16 from 11, the integers from 12, bfloat16 from 13.
// Two Mins (or two Maxes) whose constants are not all of one element merge too, into one
// constant: their elementwise min (max) broadcast together, at most 1,024 elements, no NaN
// and no real zero in it; x and the result keep their shapes, as the broadcast is the
// same. A Min under a Max (or the reverse) with such constants is no Clip and stays.
// Two Mins (or two Maxes) of data (a graph input is data, whatever its initializer says),
// the inner one the outer's first operand, merge into one variadic node:
// Min(Min(x, a), b) is Min(x, a, b), which folds its operands pairwise from the left as
// the two nodes did, so it is the same bit for bit (NaN and zeros' signs included), and of
// the same shape (broadcasting is associative).
#include <span>

#include "rewrite_support.h"
#include "tensor_values.h"

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

constexpr int64_t kMaxMerged = 1024;  // elements of a merged constant

// The elementwise max (or min) of tensors broadcast together as ONNX broadcasts; nullopt
// where their dims do not broadcast or the result has more than kMaxMerged elements.
std::optional<Values> reduce_broadcast(const std::vector<Values>& operands, bool max) {
  size_t rank = 0;
  for (const Values& v : operands) rank = std::max(rank, v.dims.size());
  std::vector<int64_t> dims(rank, 1);
  for (const Values& v : operands)
    for (size_t i = 0; i < v.dims.size(); ++i) {
      int64_t& d = dims[rank - v.dims.size() + i];
      if (v.dims[i] == d || v.dims[i] == 1) continue;
      if (d != 1) return std::nullopt;
      d = v.dims[i];
    }
  const auto count = element_count(std::span<const int64_t>(dims));
  if (!count || *count > kMaxMerged) return std::nullopt;
  Values r{operands[0].type, dims, operands[0].real, {}, {}};
  for (int64_t flat = 0; flat < *count; ++flat) {
    std::optional<double> real;
    std::optional<int64_t> integer;
    for (const Values& v : operands) {
      // The element of v that broadcasts to position `flat` of the result.
      int64_t index = 0, rest = flat, stride = 1;
      for (size_t i = rank; i-- > 0;) {
        const int64_t at = rest % dims[i];
        rest /= dims[i];
        const size_t own = i + v.dims.size();
        if (own < rank) continue;  // v has no such axis
        const int64_t d = v.dims[own - rank];
        index += (d == 1 ? 0 : at) * stride;
        stride *= d;
      }
      if (v.real) {
        const double e = v.reals[static_cast<size_t>(index)];
        if (!real || (max ? e > *real : e < *real)) real = e;
      } else {
        const int64_t e = v.ints[static_cast<size_t>(index)];
        if (!integer || (max ? e > *integer : e < *integer)) integer = e;
      }
    }
    if (r.real) r.reals.push_back(*real);
    else r.ints.push_back(*integer);
  }
  return r;
}

class MinMaxToClip {
 public:
  MinMaxToClip(const MutableBody& body, const RewriteOptions& options) : body_(body), options_(options) {}

  bool is_min_max(NodeId id) const {
    const NodeProto& n = body_.node(id);
    const std::string_view op = n.op_type();
    return FunctionId::is_default_domain(n.domain()) && (op == "Max" || op == "Min") &&
           body_.num_inputs(id) >= 2 && body_.num_outputs(id) == 1 && body_.output(id, 0) != ir::kNoValue;
  }

  // A Min or Max of x and one or more one-element constants (broadcasting nothing): the
  // bound is the tightest of them, read from the constant that holds it. Where that bound
  // is a zero that another constant holds too, its sign would depend on the order: none.
  std::optional<Bound> bound_of(NodeId id) const {
    const NodeProto& n = body_.node(id);
    if (!is_min_max(id)) return std::nullopt;
    const bool is_max = std::string_view(n.op_type()) == "Max";
    ValueId x = ir::kNoValue;
    std::optional<Bound> bound;
    size_t zeros = 0, rank = 0;
    for (size_t k = 0; k < body_.num_inputs(id); ++k) {
      const ValueId c = body_.input(id, k);
      if (c == ir::kNoValue) return std::nullopt;
      const Fact* cf = body_.fact(c);
      const auto v = one_element_value(cf);
      const auto cr = rank_of(cf);
      if (!v || !cr) {
        if (x != ir::kNoValue) return std::nullopt;  // a second operand that is not a bound
        x = c;
        continue;
      }
      zeros += *v == 0;
      if (!bound || (is_max ? *v > bound->value : *v < bound->value)) bound = Bound{is_max, ir::kNoValue, c, *v, *cr == 0};
      rank = std::max(rank, *cr);
    }
    if (x == ir::kNoValue || !bound) return std::nullopt;  // all constants: const-fold's
    const auto xr = rank_of(body_.fact(x));
    if (!xr || rank > *xr || (bound->value == 0 && zeros > 1)) return std::nullopt;
    bound->x = x;
    return bound;
  }

  // What node `outer` becomes: its op and inputs.
  struct Rewrite {
    std::string op;
    std::vector<ValueId> inputs;
    NodeId inner;
    // Clip's bounds to make as scalar constants (inputs 1, 2), where not scalars already.
    std::optional<TensorProto> lo, hi;
    // The merged constant of two Mins or two Maxes (input 1).
    std::optional<TensorProto> merged;
  };

  std::optional<Rewrite> match(NodeId outer) const {
    const auto out = bound_of(outer);
    if (!out) return merge(outer);
    const NodeId inner = body_.producer(out->x);
    if (inner == kNone || body_.uses(out->x) != 1 || body_.is_interface(out->x)) return std::nullopt;
    const auto in = bound_of(inner);
    if (!in) return merge(outer);
    const Fact* xf = body_.fact(in->x);
    const Fact* of = body_.fact(body_.output(outer, 0));
    if (!xf || !of || xf->elem_type == 0 || xf->elem_type != of->elem_type) return std::nullopt;
    if (in->is_max == out->is_max) {  // the tighter bound of the two
      const bool first = in->is_max ? in->value >= out->value : in->value <= out->value;
      return Rewrite{in->is_max ? "Max" : "Min", {in->x, first ? in->c : out->c}, inner, std::nullopt, std::nullopt, std::nullopt};
    }
    const Bound& lo = in->is_max ? *in : *out;
    const Bound& hi = in->is_max ? *out : *in;
    const int64_t since = clip_opset_for(xf->elem_type);
    // lo > hi: Min(Max(x, lo), hi) is what Clip-13 defines then (all hi, NaN kept);
    // Max(Min(x, hi), lo) is all lo, which no Clip is.
    if (lo.value > hi.value && (!in->is_max || options_.onnx_opset < 13)) return std::nullopt;
    if (since == 0 || options_.onnx_opset < since) return std::nullopt;
    Rewrite r{"Clip", {in->x, lo.c, hi.c}, inner, std::nullopt, std::nullopt, std::nullopt};
    if (!lo.scalar && !(r.lo = scalar_tensor(xf->elem_type, lo.value))) return std::nullopt;
    if (!hi.scalar && !(r.hi = scalar_tensor(xf->elem_type, hi.value))) return std::nullopt;
    return r;
  }

 private:
  // The operand of a Min/Max that is not a constant, and the constants' values; nullopt
  // where two operands are not constants, or a constant is not a number decode() holds.
  struct Operands {
    ValueId x = ir::kNoValue;
    std::vector<Values> constants;
  };
  std::optional<Operands> operands_of(NodeId id) const {
    Operands o;
    for (size_t k = 0; k < body_.num_inputs(id); ++k) {
      const ValueId v = body_.input(id, k);
      if (v == ir::kNoValue) return std::nullopt;
      const auto t = body_.constant(v);
      if (!t) {
        if (o.x != ir::kNoValue) return std::nullopt;
        o.x = v;
        continue;
      }
      auto values = decode(*t, kMaxMerged);
      if (!values) return std::nullopt;
      for (double d : values->reals)
        if (std::isnan(d)) return std::nullopt;
      o.constants.push_back(std::move(*values));
    }
    if (o.x == ir::kNoValue || o.constants.empty()) return std::nullopt;
    return o;
  }

  std::optional<Rewrite> merge(NodeId outer) const {
    if (auto r = merge_constants(outer)) return r;
    return merge_operands(outer);
  }

  // The Min or Max of the same op as `outer` that defines its operand `v`, read by
  // `outer` only.
  NodeId same_op_inner(NodeId outer, ValueId v) const {
    if (!is_min_max(outer) || v == ir::kNoValue) return kNone;
    const NodeId inner = body_.producer(v);
    if (inner == kNone || body_.uses(v) != 1 || body_.is_interface(v) || !is_min_max(inner) ||
        body_.node(inner).op_type() != body_.node(outer).op_type())
      return kNone;
    return inner;
  }

  // Min(Min(x, a...), b...) as Min(x, a..., b...), Max alike (see the top of the file).
  std::optional<Rewrite> merge_operands(NodeId outer) const {
    const NodeId inner = same_op_inner(outer, body_.input(outer, 0));
    if (inner == kNone) return std::nullopt;
    Rewrite r{body_.node(outer).op_type(), {}, inner, std::nullopt, std::nullopt, std::nullopt};
    for (size_t k = 0; k < body_.num_inputs(inner); ++k) r.inputs.push_back(body_.input(inner, k));
    for (size_t k = 1; k < body_.num_inputs(outer); ++k) r.inputs.push_back(body_.input(outer, k));
    for (ValueId v : r.inputs)
      if (v == ir::kNoValue) return std::nullopt;
    return r;
  }

  // Min(Min(x, a...), b...) as Min(x, m), m the elementwise min of a... and b... broadcast
  // together (Max alike): the same set of operands at each element, so the same result and
  // the same broadcast shape. Where an element of m is a real zero, its sign could depend
  // on the order (-0.0 and +0.0 compare equal): left.
  std::optional<Rewrite> merge_constants(NodeId outer) const {
    if (!is_min_max(outer)) return std::nullopt;
    const auto out = operands_of(outer);
    if (!out) return std::nullopt;
    const NodeId inner = same_op_inner(outer, out->x);
    if (inner == kNone) return std::nullopt;
    auto in = operands_of(inner);
    if (!in) return std::nullopt;
    const Fact* xf = body_.fact(in->x);
    const Fact* of = body_.fact(body_.output(outer, 0));
    if (!xf || !of || xf->elem_type == 0 || xf->elem_type != of->elem_type) return std::nullopt;
    std::vector<Values> all = std::move(in->constants);
    all.insert(all.end(), out->constants.begin(), out->constants.end());
    for (const Values& v : all)
      if (v.type != xf->elem_type) return std::nullopt;
    auto merged = reduce_broadcast(all, body_.node(outer).op_type() == "Max");
    if (!merged) return std::nullopt;
    for (double d : merged->reals)
      if (d == 0) return std::nullopt;
    Rewrite r{body_.node(outer).op_type(), {in->x, ir::kNoValue}, inner, std::nullopt, std::nullopt, encode(*merged)};
    return r;
  }

  const MutableBody& body_;
  const RewriteOptions& options_;
};

}  // namespace

bool min_max_to_clip(PassContext& ctx) {
  if (!ctx.may_hold({"Min", "Max"})) return false;  // each match starts at one of these
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
        if (r->merged) inputs[1] = body.add_constant(*r->merged, r->op == "Max" ? "max_bound" : "min_bound");
        body.replace_node(id, std::move(node), inputs);
        body.erase(r->inner);
        return true;
      });
}

}  // namespace shapeprop::transform
