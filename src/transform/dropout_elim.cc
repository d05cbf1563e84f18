// Dropout that drops nothing is its input (issue 25, family 4): in inference (no
// training_mode, or a constant false one) and, in training too, with a constant ratio of 0
// (the scale 1/(1-0) is 1). Its mask, where something reads it, is then all true: a
// constant where the input's shape is known and small, else ConstantOfShape(Shape(x),
// true). A mask that is an output of the body stays (the node too). Opset 12 on, where
// training_mode is an input.
#include "rewrite_support.h"

namespace shapeprop::transform {

namespace {

using onnx::NodeProto;
using onnx::TensorProto;

constexpr int64_t kDropoutTrainingMode = 12;  // Dropout takes training_mode as an input
constexpr size_t kMaxMaskConstant = 1024;     // elements of a mask written as a constant

TensorProto all_true(const std::vector<int64_t>& shape, size_t count) {
  TensorProto t;
  t.set_data_type(TensorProto::BOOL);
  for (int64_t d : shape) t.add_dims(d);
  for (size_t k = 0; k < count; ++k) t.add_int32_data(1);
  return t;
}

class DropoutElim {
 public:
  DropoutElim(const MutableBody& body, const RewriteOptions& options) : body_(body), options_(options) {}

  bool match(NodeId id) const {
    const NodeProto& n = body_.node(id);
    if (!FunctionId::is_default_domain(n.domain()) || n.op_type() != "Dropout" ||
        options_.onnx_opset < kDropoutTrainingMode || body_.num_inputs(id) == 0 || body_.input(id, 0) == ir::kNoValue ||
        body_.output(id, 0) == ir::kNoValue)
      return false;
    const ValueId ratio = body_.num_inputs(id) >= 2 ? body_.input(id, 1) : ir::kNoValue;
    const ValueId training = body_.num_inputs(id) >= 3 ? body_.input(id, 2) : ir::kNoValue;
    const bool inference = training == ir::kNoValue || all_elements_are(body_.fact(training), 0);
    const bool ratio_zero = ratio != ir::kNoValue && all_elements_are(body_.fact(ratio), 0);
    if (!inference && !ratio_zero) return false;
    const ValueId mask = body_.output(id, 1);
    if (mask != ir::kNoValue && body_.is_interface(mask)) return false;
    return body_.can_forward(id, body_.input(id, 0)) || (mask != ir::kNoValue && body_.uses(mask) > 0);
  }

 private:
  const MutableBody& body_;
  const RewriteOptions& options_;
};

}  // namespace

bool eliminate_dropouts(PassContext& ctx) {
  if (!ctx.may_hold({"Dropout"})) return false;  // each match starts at one of these
  MutableBody& body = ctx.body();
  const DropoutElim dropouts(body, ctx.options());
  return rewrite_matches(
      ctx, Counter::DropoutsRemoved, [&](NodeId id) { return dropouts.match(id); },
      [&](NodeId id, bool) {
        const ValueId x = body.input(id, 0);
        const ValueId mask = body.output(id, 1);
        if (mask != ir::kNoValue && body.uses(mask) > 0) {
          ValueId ones = ir::kNoValue;
          const auto shape = eval::detail::static_shape(body.fact(x));
          const auto count = shape ? eval::detail::element_count(*shape) : std::nullopt;
          if (count && static_cast<size_t>(*count) <= kMaxMaskConstant) {
            ones = body.add_constant(all_true(*shape, static_cast<size_t>(*count)), "mask");
          } else {
            NodeProto shape_of;
            shape_of.set_op_type("Shape");
            const ValueId s = body.new_value("mask_shape");
            body.insert_before(id, std::move(shape_of), {x}, {s});
            NodeProto fill;
            fill.set_op_type("ConstantOfShape");
            auto* value = fill.add_attribute();
            value->set_name("value");
            value->set_type(onnx::AttributeProto::TENSOR);
            *value->mutable_t() = all_true({1}, 1);
            ones = body.new_value("mask");
            body.insert_before(id, std::move(fill), {s}, {ones});
          }
          body.replace_all_uses(mask, ones);
        }
        body.forward(id, x);
        return true;
      });
}

}  // namespace shapeprop::transform
