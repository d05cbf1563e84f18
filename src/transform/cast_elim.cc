// Casts that change no value. A Cast to the element type its input already has is its
// input (torchlib's aten_view casts its int64 size to int64). Of two integral Casts in a
// row whose first only widens (int32 -> int64, uint8 -> int16, bool -> any), the first
// goes: every integral conversion depends on the value alone, which the widening kept.
// Chains through floating types stay, even float -> double -> float: where a runtime
// flushes denormals, the round trip changes values.
#include "rewrite_support.h"

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

}  // namespace

bool remove_redundant_casts(BodyRewriter& body) {
  bool changed = false;
  for (auto id = body.first(); id != BodyRewriter::kEnd; id = body.next(id)) {
    const onnx::NodeProto& n = body.node(id);
    if (!is_op(n, "Cast") || n.input_size() != 1 || n.output_size() != 1 || n.input(0).empty()) continue;
    const auto to = int_attribute(n, "to");
    if (!to) continue;
    const Fact* in = body.fact(n.input(0));
    if (in && in->is_tensor() && in->elem_type == *to) {
      if (body.dry()) return true;
      const std::string input = n.input(0);
      if (body.forward(id, input)) {
        ++body.stats().casts_removed;
        changed = true;
      }
      continue;
    }
    const auto first = body.producer(n.input(0));
    if (first == BodyRewriter::kEnd) continue;
    const onnx::NodeProto& p = body.node(first);
    if (!is_op(p, "Cast") || p.input_size() != 1 || p.input(0).empty()) continue;
    const auto middle = int_attribute(p, "to");
    const Fact* source = body.fact(p.input(0));
    if (!middle || !source || !source->is_tensor() || !widens(source->elem_type, *middle) || integral(*to).bits == 0)
      continue;
    if (body.dry()) return true;
    const std::string input = p.input(0);
    if (*to == source->elem_type ? body.forward(id, input) : (body.set_input(id, 0, input), true)) {
      ++body.stats().casts_removed;
      changed = true;
    }
  }
  return changed;
}

}  // namespace shapeprop::transform
