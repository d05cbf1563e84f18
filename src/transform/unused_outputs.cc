// Optional outputs nobody reads dropped from their node (issue 25, family 8), for the ops
// whose results do not depend on which outputs are present, and only where the schema at
// the body's opset marks the output optional. Not every op with optional outputs is such
// an op: BatchNormalization's outputs choose its mode before opset 14 (more than one is
// training), and from 14 on its inference function requires exactly 3 outputs in training
// and 1 in inference, so it has nothing to drop. A node none of whose outputs is read is
// dce's; an output that is a body output stays.
#include <array>

#include "infer/onnx_bridge.h"
#include "rewrite_support.h"

namespace shapeprop::transform {

namespace {

struct Droppable {
  std::string_view op;
  unsigned outputs;  // those that may go: bit k for output k
};

// Ops whose outputs are independent of each other's presence (ONNX's operator docs; ONNX
// Runtime's kernels compute each present output the same way).
constexpr std::array<Droppable, 8> kDroppable = {{
    {"Dropout", 0b10},                 // mask
    {"MaxPool", 0b10},                 // Indices
    {"LayerNormalization", 0b110},     // Mean, InvStdDev
    {"LSTM", 0b111},                   // Y, Y_h, Y_c
    {"GRU", 0b11},                     // Y, Y_h
    {"RNN", 0b11},                     // Y, Y_h
    {"Unique", 0b1110},                // indices, inverse_indices, counts
    {"SoftmaxCrossEntropyLoss", 0b10}, // log_prob
}};

const Droppable* droppable(const onnx::NodeProto& n) {
  if (!FunctionId::is_default_domain(n.domain())) return nullptr;
  for (const auto& d : kDroppable)
    if (d.op == n.op_type()) return &d;
  return nullptr;
}

}  // namespace

bool drop_unused_outputs(PassContext& ctx) {
  MutableBody& body = ctx.body();
  const int64_t opset = ctx.options().onnx_opset;
  for (auto id = body.first(); id != kNone && !ctx.stop(); id = body.next(id)) {
    const onnx::NodeProto& n = body.node(id);
    const Droppable* d = droppable(n);
    if (!d) continue;
    bool read = false;
    for (size_t k = 0; k < body.num_outputs(id); ++k) read = read || body.uses(body.output(id, k)) > 0;
    if (!read) continue;
    const onnx::OpSchema* schema = infer::find_schema(n.op_type(), "", static_cast<int>(opset));
    if (!schema) continue;
    for (size_t k = 0; k < body.num_outputs(id); ++k) {
      const ValueId v = body.output(id, k);
      if ((d->outputs >> k & 1u) == 0 || v == ir::kNoValue || body.uses(v) > 0 || k >= schema->outputs().size() ||
          schema->outputs()[k].GetOption() != onnx::OpSchema::Optional)
        continue;
      ctx.apply(Counter::OutputsDropped, [&] { return body.drop_output(id, k); });
      if (ctx.stop()) break;
    }
  }
  return ctx.changed();
}

}  // namespace shapeprop::transform
