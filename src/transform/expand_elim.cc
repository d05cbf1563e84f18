// Opt-in (only with --passes): an Expand whose reader is a broadcasting op that would
// broadcast the unexpanded input to the same result reads that input instead (issue 25,
// family 12). Where the result's shape is the same, so is every element: the op's
// broadcast repeats the input's elements exactly as the Expand did. "The same" is decided
// strictly: the op's broadcast of the unexpanded input with the other operands is
// computed dim by dim where each pair is equal or one of them is 1 (a symbol against a
// number other than 1 decides nothing), and must equal the result's shape as the facts
// have it. It is opt-in because a materialized Expand can be what a backend wants (a
// layout it fuses), not because it is unsound.
#include <algorithm>
#include <unordered_set>

#include "rewrite_support.h"

namespace shapeprop::transform {

namespace {

using onnx::NodeProto;

// The broadcast of two shapes where every pair of dims is equal or has a 1; nullopt
// where that does not decide it.
std::optional<std::vector<Dim>> strict_broadcast(const std::vector<Dim>& a, const std::vector<Dim>& b) {
  std::vector<Dim> out(std::max(a.size(), b.size()));
  for (size_t i = 0; i < out.size(); ++i) {
    const Dim one = Dim::constant(1);
    const Dim& da = i < out.size() - a.size() ? one : a[i - (out.size() - a.size())];
    const Dim& db = i < out.size() - b.size() ? one : b[i - (out.size() - b.size())];
    if (da.as_constant() == std::optional<int64_t>(1))
      out[i] = db;
    else if (db.as_constant() == std::optional<int64_t>(1) || da.equals(db) == true)
      out[i] = da;
    else
      return std::nullopt;
  }
  return out;
}

bool broadcasts(const NodeProto& n) {
  return FunctionId::is_default_domain(n.domain()) &&
         one_of(n.op_type(), {"Add", "Sub", "Mul", "Div", "Pow", "And", "Or", "Xor", "Equal", "Less", "Greater",
                              "LessOrEqual", "GreaterOrEqual", "Where", "BitShift", "Mod", "PRelu"}) &&
         !has_reference(n);
}

}  // namespace

bool remove_broadcast_expands(PassContext& ctx) {
  MutableBody& body = ctx.body();
  for (auto id = body.first(); id != kNone && !ctx.stop(); id = body.next(id)) {
    if (!is_op(body.node(id), "Expand") || body.num_inputs(id) != 2 || body.input(id, 0) == ir::kNoValue) continue;
    const ValueId x = body.input(id, 0), e = body.output(id, 0);
    const std::vector<Dim>* xd = known_dims(body.fact(x));
    if (!xd || e == ir::kNoValue) continue;
    auto readers = body.readers(e);
    std::sort(readers.begin(), readers.end());
    readers.erase(std::unique(readers.begin(), readers.end()), readers.end());
    for (NodeId r : readers) {
      if (body.erased(r) || !broadcasts(body.node(r)) || body.num_outputs(r) != 1) continue;
      const std::vector<Dim>* out = known_dims(body.fact(body.output(r, 0)));
      if (!out) continue;
      // The op's result shape with x in the Expand's place.
      std::optional<std::vector<Dim>> shape = std::vector<Dim>{};
      for (size_t k = 0; k < body.num_inputs(r) && shape; ++k) {
        const ValueId in = body.input(r, k);
        const std::vector<Dim>* d = in == e ? xd : known_dims(body.fact(in));
        shape = d ? strict_broadcast(*shape, *d) : std::nullopt;
      }
      if (!shape || *shape != *out) continue;
      ctx.apply(Counter::ExpandsBypassed, [&] {
        for (size_t k = 0; k < body.num_inputs(r); ++k)
          if (body.input(r, k) == e) body.set_input(r, k, x);
        return true;
      });
      if (ctx.stop()) break;
    }
  }
  return ctx.changed();
}

}  // namespace shapeprop::transform
