// Concat inputs known to be empty along the axis are dropped (issue 25, family 5): they add
// nothing to the result, whose shape and type stay. When one input is left, the node is
// that input (a one-input Concat gives it back). At least one input always stays, so a
// Concat of empties only stays a Concat.
#include "rewrite_support.h"

namespace shapeprop::transform {

namespace {

using onnx::NodeProto;

class ConcatEmpties {
 public:
  explicit ConcatEmpties(const MutableBody& body) : body_(body) {}

  // The inputs the node keeps, when it drops some.
  std::optional<std::vector<ValueId>> match(NodeId id) const {
    const NodeProto& n = body_.node(id);
    if (!FunctionId::is_default_domain(n.domain()) || n.op_type() != "Concat" || body_.num_inputs(id) < 2 ||
        body_.num_outputs(id) != 1 || body_.output(id, 0) == ir::kNoValue)
      return std::nullopt;
    const auto axis = int_attribute(n, "axis");
    const auto rank = rank_of(body_.fact(body_.output(id, 0)));
    if (!axis || !rank || *axis < -static_cast<int64_t>(*rank) || *axis >= static_cast<int64_t>(*rank))
      return std::nullopt;
    const size_t a = static_cast<size_t>(*axis < 0 ? *axis + static_cast<int64_t>(*rank) : *axis);
    std::vector<ValueId> kept;
    for (size_t k = 0; k < body_.num_inputs(id); ++k) {
      const ValueId v = body_.input(id, k);
      if (v == ir::kNoValue) return std::nullopt;
      if (!empty_along(v, a, *rank)) kept.push_back(v);
    }
    if (kept.size() == body_.num_inputs(id)) return std::nullopt;
    if (kept.empty()) kept.push_back(body_.input(id, 0));
    if (kept.size() == body_.num_inputs(id)) return std::nullopt;
    return kept;
  }

 private:
  const MutableBody& body_;

  bool empty_along(ValueId v, size_t axis, size_t rank) const {
    const Fact* f = body_.fact(v);
    if (!f || !f->is_tensor() || !f->shape || f->shape->size() != rank) return false;
    return (*f->shape)[axis].as_constant() == std::optional<int64_t>(0);
  }
};

}  // namespace

bool drop_empty_concat_inputs(PassContext& ctx) {
  if (!ctx.may_hold({"Concat"})) return false;  // each match starts at one of these
  MutableBody& body = ctx.body();
  const ConcatEmpties concat(body);
  return rewrite_matches(
      ctx, Counter::ConcatsShortened,
      [&](NodeId id) {
        auto kept = concat.match(id);
        if (kept && kept->size() == 1 && !body.can_forward(id, kept->front())) kept.reset();
        return kept;
      },
      [&](NodeId id, const auto& kept) {
        if (kept->size() == 1) return body.forward(id, kept->front());
        NodeProto node = body.node(id);  // the op and its axis
        body.replace_node(id, std::move(node), *kept);
        return true;
      });
}

}  // namespace shapeprop::transform
