// Casts that change no value. A Cast to the element type its input already has is its
// input (torchlib's aten_view casts its int64 size to int64). Of two Casts in a row whose
// first is exact (every value of its input type is one of its output type: an integral
// widening, float16 or bfloat16 to float or double, float to double, an integer type to a
// floating type wide enough for all its values), the first goes where the second then
// computes what it did: it casts back (x for every x, -0.0, infinities and subnormals
// included; NaN stays NaN), or to a floating type (one rounding of the same value), or
// to an integral type from an integral middle, or from an integer through a float to an
// integral type that holds all its values. float8, float4 and 2/4-bit types stay
// (their Casts saturate and round by attributes); so does a floating middle before an
// integral type (out of range is the kernel's choice, which may depend on the source).
// ONNX Runtime's CPU Casts keep subnormals (tests/golden/rewrite/cast_elim_float.onnxtxt
// feeds them); a session that sets denormals as zero flushes them in every op anyway.
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

// The IEEE-style floating types whose Casts round to nearest even and ignore `saturate`
// and `round_mode`: bits of significand (the implicit one included) and the exponent
// range of the normal numbers; 0 bits for others.
struct FloatingType {
  int precision = 0;
  int min_exponent = 0;
  int max_exponent = 0;
};

FloatingType floating(int64_t type) {
  switch (type) {
    case TensorProto::FLOAT16: return {11, -14, 15};
    case TensorProto::BFLOAT16: return {8, -126, 127};
    case TensorProto::FLOAT: return {24, -126, 127};
    case TensorProto::DOUBLE: return {53, -1022, 1023};
    default: return {};
  }
}

// Every value of integral `from` is a value of integral `to`.
bool widens(int64_t from, int64_t to) {
  const IntegralType a = integral(from), b = integral(to);
  if (a.bits == 0 || b.bits == 0) return false;
  if (a.is_signed && !b.is_signed) return false;
  return a.is_signed == b.is_signed ? b.bits >= a.bits : b.bits > a.bits;
}

// Every value of `from` is a value of `to`, so that a Cast from `from` to `to` is exact:
// an integral widening, a float whose significand, normal range and smallest subnormal
// fit (the subnormals of `from` are then normals or subnormals of `to`), or an integer
// whose magnitudes need no more bits than the float's significand.
bool exact(int64_t from, int64_t to) {
  if (widens(from, to)) return true;
  const FloatingType b = floating(to);
  if (b.precision == 0) return false;
  const IntegralType i = integral(from);
  if (i.bits != 0) return (i.is_signed ? i.bits - 1 : i.bits) <= b.precision;
  const FloatingType a = floating(from);
  return a.precision != 0 && a.precision <= b.precision && a.min_exponent >= b.min_exponent &&
         a.max_exponent <= b.max_exponent && a.min_exponent - a.precision >= b.min_exponent - b.precision;
}

// Whether `Cast<to>(Cast<middle>(y))` computes `Cast<to>(y)` for every y of type
// `source`, given that the first Cast is exact: the second then casts y's own value.
bool bypassable(int64_t source, int64_t middle, int64_t to) {
  if (floating(to).precision != 0) return true;
  if (integral(to).bits == 0) return false;
  if (integral(middle).bits != 0) return true;
  return integral(source).bits != 0 && (to == source || widens(source, to));
}

// What a Cast's readers read instead: its input (the Cast changes nothing), or, for
// the second of two Casts whose first is exact, the first one's input, read by the
// second Cast (`keep_second`) unless the second casts back to that input's type.
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
  if (!middle || !source || !source->is_tensor() || !exact(source->elem_type, *middle)) return std::nullopt;
  if (*to != source->elem_type && !bypassable(source->elem_type, *middle, *to)) return std::nullopt;
  if (*to == source->elem_type) return body.can_forward(id, y) ? std::optional<Bypass>(Bypass{y, false}) : std::nullopt;
  return Bypass{y, true};
}

}  // namespace

bool remove_redundant_casts(PassContext& ctx) {
  if (!ctx.may_hold({"Cast"})) return false;  // each match starts at one of these
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
