#include "tensor_values.h"

#include <cstring>

#include "support/tensor_data.h"

namespace shapeprop::transform {

using onnx::TensorProto;

bool is_real_type(int32_t t) {
  return t == TensorProto::FLOAT || t == TensorProto::DOUBLE || t == TensorProto::FLOAT16 || t == TensorProto::BFLOAT16;
}

bool is_int_type(int32_t t) {
  switch (t) {
    case TensorProto::INT64: case TensorProto::INT32: case TensorProto::INT16: case TensorProto::INT8:
    case TensorProto::UINT32: case TensorProto::UINT16: case TensorProto::UINT8: case TensorProto::BOOL:
      return true;
    default: return false;
  }
}

std::optional<Values> decode(const TensorProto& t, int64_t max_elements) {
  if (t.data_location() == TensorProto::EXTERNAL || !(is_real_type(t.data_type()) || is_int_type(t.data_type())))
    return std::nullopt;
  const auto elements = element_count(t.dims());
  if (!elements || *elements > max_elements) return std::nullopt;
  Values v;
  v.type = t.data_type();
  v.dims.assign(t.dims().begin(), t.dims().end());
  const int64_t count = *elements;
  v.real = is_real_type(v.type);
  if (t.has_raw_data()) {
    // Read in place, element by element, as typed_tensor() would give them (the raw
    // data's whole elements, little-endian as ONNX stores them).
    const std::string& raw = t.raw_data();
    auto take = [&]<class E>(E, auto& out, auto convert) {
      if (static_cast<int64_t>(raw.size() / sizeof(E)) != count) return false;
      out.resize(static_cast<size_t>(count));
      for (size_t i = 0; i < out.size(); ++i) {
        E e;
        std::memcpy(&e, raw.data() + i * sizeof(E), sizeof(E));
        out[i] = convert(e);
      }
      return true;
    };
    auto same = [](auto e) { return e; };
    bool ok = false;
    switch (v.type) {
      case TensorProto::FLOAT: ok = take(float{}, v.reals, same); break;
      case TensorProto::DOUBLE: ok = take(double{}, v.reals, same); break;
      case TensorProto::FLOAT16: ok = take(uint16_t{}, v.reals, half_to_float); break;
      case TensorProto::BFLOAT16: ok = take(uint16_t{}, v.reals, bfloat16_to_float); break;
      case TensorProto::INT64: ok = take(int64_t{}, v.ints, same); break;
      case TensorProto::INT32: ok = take(int32_t{}, v.ints, same); break;
      case TensorProto::INT16: ok = take(int16_t{}, v.ints, same); break;
      case TensorProto::INT8: ok = take(int8_t{}, v.ints, same); break;
      case TensorProto::UINT32: ok = take(uint32_t{}, v.ints, same); break;
      case TensorProto::UINT16: ok = take(uint16_t{}, v.ints, same); break;
      default: ok = take(uint8_t{}, v.ints, same); break;  // uint8, bool
    }
    return ok ? std::optional<Values>(std::move(v)) : std::nullopt;
  }
  // The typed field the element type is stored in, read as the raw data is above.
  auto take = [&](const auto& field, auto& out, auto convert) {
    if (field.size() != count) return false;
    out.resize(static_cast<size_t>(count));
    for (size_t i = 0; i < out.size(); ++i) out[i] = convert(field.Get(static_cast<int>(i)));
    return true;
  };
  auto same = [](auto e) { return e; };
  auto half = [](int32_t e) { return half_to_float(static_cast<uint16_t>(e)); };
  auto bfloat = [](int32_t e) { return bfloat16_to_float(static_cast<uint16_t>(e)); };
  bool ok = false;
  switch (v.type) {
    case TensorProto::FLOAT: ok = take(t.float_data(), v.reals, same); break;
    case TensorProto::DOUBLE: ok = take(t.double_data(), v.reals, same); break;
    case TensorProto::FLOAT16: ok = take(t.int32_data(), v.reals, half); break;
    case TensorProto::BFLOAT16: ok = take(t.int32_data(), v.reals, bfloat); break;
    case TensorProto::INT64: ok = take(t.int64_data(), v.ints, same); break;
    case TensorProto::UINT32: ok = take(t.uint64_data(), v.ints, [](uint64_t e) { return static_cast<int64_t>(e); }); break;
    default: ok = take(t.int32_data(), v.ints, same); break;
  }
  return ok ? std::optional<Values>(std::move(v)) : std::nullopt;
}

TensorProto encode(const Values& v) {
  TensorProto t;
  t.set_data_type(v.type);
  for (int64_t d : v.dims) t.add_dims(d);
  // Each field sized once and written in place.
  auto fill = [n = static_cast<int>(v.size())](auto* field, const auto& from, auto convert) {
    field->Resize(n, {});
    auto* out = field->mutable_data();
    for (int i = 0; i < n; ++i) out[i] = convert(from[static_cast<size_t>(i)]);
  };
  switch (v.type) {
    case TensorProto::FLOAT: fill(t.mutable_float_data(), v.reals, [](double e) { return static_cast<float>(e); }); break;
    case TensorProto::DOUBLE: fill(t.mutable_double_data(), v.reals, [](double e) { return e; }); break;
    case TensorProto::FLOAT16:
      fill(t.mutable_int32_data(), v.reals, [](double e) { return static_cast<int32_t>(float_to_half(static_cast<float>(e))); });
      break;
    case TensorProto::BFLOAT16:
      fill(t.mutable_int32_data(), v.reals,
           [](double e) { return static_cast<int32_t>(float_to_bfloat16(static_cast<float>(e))); });
      break;
    case TensorProto::INT64: fill(t.mutable_int64_data(), v.ints, [](int64_t e) { return e; }); break;
    case TensorProto::UINT32: fill(t.mutable_uint64_data(), v.ints, [](int64_t e) { return static_cast<uint64_t>(e); }); break;
    default: fill(t.mutable_int32_data(), v.ints, [](int64_t e) { return static_cast<int32_t>(e); }); break;
  }
  return t;
}

}  // namespace shapeprop::transform
