// Two clamps in a row as one: Relu(Relu(x)), Relu(Clip(x, a, b)), Clip(Relu(x), c, d) and
// Clip(Clip(x, a, b), c, d) become one Clip (or Relu) of x. Relu is the clamp to [0, +inf),
// a Clip's absent bound an infinite one. Clamping to [a, b] then to [c, d] (each with its
// lower end at most its upper) is clamping to [clamp(a), clamp(b)], clamp the one to
// [c, d]: where the intervals meet, that is [max(a, c), min(b, d)]; where they do not, the
// pair gives c (b < c) or d (a > d) everywhere, and so does a Clip to [c, c] or [d, d]
// (ONNX's Clip is Min(max, Max(x, min)), which gives max where min > max, so the bounds
// must be the same value, not max(a, c) and min(b, d)). NaN: whatever a Clip kernel gives
// for a NaN, the pair and the fused clamp agree, since both start from the same Max or Min
// of x and the outer clamp maps any bound of the inner one into the fused interval.
// Clips of opset 11 and later (bounds as inputs) only, with constant scalar bounds; the
// inner node's output must have no other reader (the pair then becomes one node). The
// fused node reuses the bound values it keeps; a zero of Relu becomes a constant of x's
// type where it bounds a Clip.
#include "rewrite_support.h"

namespace shapeprop::transform {

namespace {

using onnx::NodeProto;

constexpr int64_t kClipBoundsAsInputs = 11;
constexpr int64_t kReluOfIntegers = 14;  // Relu takes integer types from opset 14

// One end of a clamp: a finite value (and the value id holding it, kNoValue for Relu's
// zero), or none (infinite).
struct End {
  std::optional<long double> value;
  ValueId id = ir::kNoValue;
};

struct Clamp {
  End lo, hi;
};

class ClipFusion {
 public:
  ClipFusion(const MutableBody& body, const RewriteOptions& options) : body_(body), options_(options) {}

  // The clamp node `id` is, with its data input.
  std::optional<std::pair<Clamp, ValueId>> clamp_of(NodeId id) const {
    const NodeProto& n = body_.node(id);
    if (!FunctionId::is_default_domain(n.domain()) || body_.num_outputs(id) != 1 || body_.output(id, 0) == ir::kNoValue ||
        body_.num_inputs(id) == 0 || body_.input(id, 0) == ir::kNoValue)
      return std::nullopt;
    if (std::string_view(n.op_type()) == "Relu")
      return std::make_pair(Clamp{End{0.0L, ir::kNoValue}, End{}}, body_.input(id, 0));
    if (n.op_type() != "Clip" || options_.onnx_opset < kClipBoundsAsInputs || n.attribute_size() != 0)
      return std::nullopt;
    Clamp c;
    for (size_t k = 1; k <= 2; ++k) {
      const ValueId b = body_.input(id, k);
      if (b == ir::kNoValue) continue;
      auto v = scalar_value(body_.fact(b));
      if (!v) return std::nullopt;  // a bound that is data
      (k == 1 ? c.lo : c.hi) = End{v, b};
    }
    return std::make_pair(c, body_.input(id, 0));
  }

  struct Fusion {
    ValueId x;
    NodeId inner;
    Clamp fused;
  };

  std::optional<Fusion> match(NodeId outer) const {
    const auto out = clamp_of(outer);
    if (!out) return std::nullopt;
    const ValueId mid = out->second;
    const NodeId inner = body_.producer(mid);
    if (inner == kNone || body_.uses(mid) != 1 || body_.is_interface(mid)) return std::nullopt;
    const auto in = clamp_of(inner);
    if (!in) return std::nullopt;
    const Fact* xf = body_.fact(in->second);
    const Fact* of = body_.fact(body_.output(outer, 0));
    if (!xf || !of || xf->elem_type == 0 || xf->elem_type != of->elem_type) return std::nullopt;
    const Clamp& i = in->first;
    const Clamp& o = out->first;
    if (empty(i) || empty(o)) return std::nullopt;
    Clamp f;
    f.lo = tighter(i.lo, o.lo, /*larger=*/true);
    f.hi = tighter(i.hi, o.hi, /*larger=*/false);
    if (empty(f)) {  // disjoint: the end of [c, d] nearer [a, b], everywhere
      const End& end = i.hi.value && o.lo.value && *i.hi.value < *o.lo.value ? o.lo : o.hi;
      f.lo = f.hi = end;
    }
    return Fusion{in->second, inner, f};
  }

 private:
  const MutableBody& body_;
  const RewriteOptions& options_;

  static bool empty(const Clamp& c) { return c.lo.value && c.hi.value && *c.lo.value > *c.hi.value; }

  // The larger (lower ends) or smaller (upper ends) of two ends; an infinite end loses.
  static End tighter(const End& a, const End& b, bool larger) {
    if (!a.value) return b;
    if (!b.value) return a;
    if (*a.value == *b.value) return a.id != ir::kNoValue ? a : b;  // keep a value that exists
    return (*a.value > *b.value) == larger ? a : b;
  }
};

}  // namespace

bool fuse_clips(PassContext& ctx) {
  if (!ctx.may_hold({"Relu", "Clip"})) return false;  // each match starts at one of these
  MutableBody& body = ctx.body();
  const ClipFusion fusion(body, ctx.options());
  return rewrite_matches(
      ctx, Counter::ClampsFused, [&](NodeId id) { return fusion.match(id); },
      [&](NodeId id, const auto& f) {
        NodeProto node;
        std::vector<ValueId> inputs{f->x};
        const int32_t t = body.fact(f->x)->elem_type;
        const bool relu = f->fused.lo.value && *f->fused.lo.value == 0 && !f->fused.hi.value &&
                          (is_floating_type(t) || ctx.options().onnx_opset >= kReluOfIntegers);
        if (relu) {
          node.set_op_type("Relu");
        } else {
          node.set_op_type("Clip");
          End lo = f->fused.lo;
          End hi = f->fused.hi;
          if (lo.value && lo.id == ir::kNoValue) {  // Relu's zero, as a constant of x's type
            const Fact zero = is_integral_type(t) ? Fact::int_tensor(t, {}, {Dim::constant(0)}) : Fact::real_tensor(t, {}, {0.0});
            lo.id = body.add_constant(*zero.to_tensor(), "zero");
            if (hi.value && hi.id == ir::kNoValue) hi.id = lo.id;  // both Relu's zero (disjoint)
          }
          inputs.push_back(lo.id);
          if (hi.value) inputs.push_back(hi.id);
          while (inputs.size() > 1 && inputs.back() == ir::kNoValue) inputs.pop_back();
        }
        body.replace_node(id, std::move(node), inputs);
        body.erase(f->inner);
        return true;
      });
}

}  // namespace shapeprop::transform
