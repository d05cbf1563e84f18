// TensorProto data: raw bytes to typed fields, and 16-bit float conversions.
#include "support/tensor_data.h"

#include <cmath>
#include <cstring>

namespace shapeprop {
namespace {

template <class Element, class Field, class Add>
void decode_raw(const std::string& raw, Field* field, Add add) {
  const size_t n = raw.size() / sizeof(Element);
  field->Reserve(static_cast<int>(n));
  for (size_t i = 0; i < n; ++i) {
    Element e;
    std::memcpy(&e, raw.data() + i * sizeof(Element), sizeof(Element));  // little-endian, as ONNX stores it
    add(field, e);
  }
}

}  // namespace

onnx::TensorProto typed_tensor(const onnx::TensorProto& tensor) {
  using onnx::TensorProto;
  TensorProto out = tensor;
  if (!tensor.has_raw_data()) return out;
  out.clear_raw_data();
  const std::string& raw = tensor.raw_data();
  auto to_i32 = [](auto* f, auto v) { f->Add(static_cast<int32_t>(v)); };
  auto to_i64 = [](auto* f, auto v) { f->Add(static_cast<int64_t>(v)); };
  auto to_u64 = [](auto* f, auto v) { f->Add(static_cast<uint64_t>(v)); };
  auto same = [](auto* f, auto v) { f->Add(v); };
  switch (tensor.data_type()) {
    case TensorProto::FLOAT:
    case TensorProto::COMPLEX64: decode_raw<float>(raw, out.mutable_float_data(), same); break;
    case TensorProto::DOUBLE:
    case TensorProto::COMPLEX128: decode_raw<double>(raw, out.mutable_double_data(), same); break;
    case TensorProto::INT64: decode_raw<int64_t>(raw, out.mutable_int64_data(), to_i64); break;
    case TensorProto::UINT64: decode_raw<uint64_t>(raw, out.mutable_uint64_data(), to_u64); break;
    case TensorProto::UINT32: decode_raw<uint32_t>(raw, out.mutable_uint64_data(), to_u64); break;
    case TensorProto::INT32: decode_raw<int32_t>(raw, out.mutable_int32_data(), to_i32); break;
    case TensorProto::INT16: decode_raw<int16_t>(raw, out.mutable_int32_data(), to_i32); break;
    case TensorProto::INT8: decode_raw<int8_t>(raw, out.mutable_int32_data(), to_i32); break;
    case TensorProto::UINT16:
    case TensorProto::FLOAT16:
    case TensorProto::BFLOAT16: decode_raw<uint16_t>(raw, out.mutable_int32_data(), to_i32); break;
    default:  // uint8, bool, float8 variants, and int4/uint4 (two per byte, kept packed)
      decode_raw<uint8_t>(raw, out.mutable_int32_data(), to_i32);
      break;
  }
  return out;
}

float half_to_float(uint16_t h) {
  const uint32_t sign = (h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1f;
  const uint32_t mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);  // inf, nan
  } else if (exp != 0) {
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  } else if (mant == 0) {
    bits = sign;
  } else {  // subnormal half: normalise
    float f = std::ldexp(static_cast<float>(mant), -24);
    return sign ? -f : f;
  }
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

uint16_t float_to_half(float value) {
  uint32_t x;
  std::memcpy(&x, &value, sizeof x);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t abs = x & 0x7fffffffu;
  if (abs >= 0x7f800000u) return static_cast<uint16_t>(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0));
  if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds to inf
  if (abs < 0x38800000u) {  // subnormal or zero in half
    const float f = std::fabs(value) * 16777216.0f;  // 2^24
    return static_cast<uint16_t>(sign | static_cast<uint16_t>(std::nearbyint(f)));
  }
  // Normal: round to nearest even on the 13 dropped bits.
  uint32_t rounded = abs + 0xfffu + ((abs >> 13) & 1u);
  return static_cast<uint16_t>(sign | ((rounded - 0x38000000u) >> 13));
}

float bfloat16_to_float(uint16_t bits) {
  const uint32_t x = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &x, sizeof f);
  return f;
}

uint16_t float_to_bfloat16(float value) {
  uint32_t x;
  std::memcpy(&x, &value, sizeof x);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);  // quiet nan
  return static_cast<uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

}  // namespace shapeprop
