// Casts that change no value. A Cast to the element type its input already has is its
// input (torchlib's aten_view casts its int64 size to int64). Of two integral Casts in a
// row whose first only widens (int32 -> int64, uint8 -> int16, bool -> any), the first
// goes: every integral conversion depends on the value alone, which the widening kept.
// Chains through floating types stay, even float -> double -> float: where a runtime
// flushes denormals, the round trip changes values.
#include "rewrite_support.h"

#include <optional>

namespace shapeprop::transform {

namespace {

using onnx::TensorProto;

// Bits, and signedness, of an integral type (bool as one unsigned bit); 0 for others.
struct IntegralType {
  int bits = 0;
  bool is_signed = false;
};

IntegralType integral(int64_t type) {
  switch (type) {
    case TensorProto::BOOL: return {1, false};
    case TensorProto::UINT8: return {8, false};
    case TensorProto::INT8: return {8, true};
    case TensorProto::UINT16: return {16, false};
    case TensorProto::INT16: return {16, true};
    case TensorProto::UINT32: return {32, false};
    case TensorProto::INT32: return {32, true};
    case TensorProto::UINT64: return {64, false};
    case TensorProto::INT64: return {64, true};
    default: return {};
  }
}

// Every value of `from` is a value of `to`.
bool widens(int64_t from, int64_t to) {
  const IntegralType a = integral(from), b = integral(to);
  if (a.bits == 0 || b.bits == 0) return false;
  if (a.is_signed && !b.is_signed) return false;
  return a.is_signed == b.is_signed ? b.bits >= a.bits : b.bits > a.bits;
}

// What a Cast's readers read instead: its input (the Cast changes nothing), or, for
// the second of two integral Casts, the first one's input, read by the second Cast
// (`keep_second`) unless the second casts back to that input's type.
struct Bypass {
  ValueId input;
  bool keep_second;
};

std::optional<Bypass> match(const MutableBody& body, NodeId id) {
  const onnx::NodeProto& n = body.node(id);
  if (!is_op(n, "Cast") || body.num_inputs(id) != 1 || body.num_outputs(id) != 1 || body.input(id, 0) == ir::kNoValue)
    return std::nullopt;
  const auto to = int_attribute(n, "to");
  if (!to) return std::nullopt;
  const ValueId x = body.input(id, 0);
  const Fact* in = body.fact(x);
  if (in && in->is_tensor() && in->elem_type == *to)
    return body.can_forward(id, x) ? std::optional<Bypass>(Bypass{x, false}) : std::nullopt;
  const auto first = body.producer(x);
  if (first == kNone) return std::nullopt;
  const onnx::NodeProto& p = body.node(first);
  if (!is_op(p, "Cast") || body.num_inputs(first) != 1 || body.input(first, 0) == ir::kNoValue) return std::nullopt;
  const auto middle = int_attribute(p, "to");
  const ValueId y = body.input(first, 0);
  const Fact* source = body.fact(y);
  if (!middle || !source || !source->is_tensor() || !widens(source->elem_type, *middle) || integral(*to).bits == 0)
    return std::nullopt;
  if (*to == source->elem_type) return body.can_forward(id, y) ? std::optional<Bypass>(Bypass{y, false}) : std::nullopt;
  return Bypass{y, true};
}

}  // namespace

bool remove_redundant_casts(PassContext& ctx) {
  MutableBody& body = ctx.body();
  return rewrite_matches(
      ctx, Counter::CastsRemoved, [&](NodeId id) { return match(body, id); },
      [&](NodeId id, const auto& m) {
        if (!m->keep_second) return body.forward(id, m->input);
        body.set_input(id, 0, m->input);
        return true;
      });
}

}  // namespace shapeprop::transform
