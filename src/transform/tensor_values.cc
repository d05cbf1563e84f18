#include "tensor_values.h"

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
  const TensorProto typed = t.has_raw_data() ? typed_tensor(t) : t;
  v.real = is_real_type(v.type);
  auto take = [&](const auto& field, auto convert) {
    if (field.size() != count) return false;
    for (auto e : field) convert(e);
    return true;
  };
  bool ok = false;
  switch (v.type) {
    case TensorProto::FLOAT: ok = take(typed.float_data(), [&](float e) { v.reals.push_back(e); }); break;
    case TensorProto::DOUBLE: ok = take(typed.double_data(), [&](double e) { v.reals.push_back(e); }); break;
    case TensorProto::FLOAT16:
      ok = take(typed.int32_data(), [&](int32_t e) { v.reals.push_back(half_to_float(static_cast<uint16_t>(e))); });
      break;
    case TensorProto::BFLOAT16:
      ok = take(typed.int32_data(), [&](int32_t e) { v.reals.push_back(bfloat16_to_float(static_cast<uint16_t>(e))); });
      break;
    case TensorProto::INT64: ok = take(typed.int64_data(), [&](int64_t e) { v.ints.push_back(e); }); break;
    case TensorProto::UINT32: ok = take(typed.uint64_data(), [&](uint64_t e) { v.ints.push_back(static_cast<int64_t>(e)); }); break;
    default: ok = take(typed.int32_data(), [&](int32_t e) { v.ints.push_back(e); }); break;
  }
  return ok ? std::optional<Values>(std::move(v)) : std::nullopt;
}

TensorProto encode(const Values& v) {
  TensorProto t;
  t.set_data_type(v.type);
  for (int64_t d : v.dims) t.add_dims(d);
  for (size_t i = 0; i < v.size(); ++i) {
    switch (v.type) {
      case TensorProto::FLOAT: t.add_float_data(static_cast<float>(v.reals[i])); break;
      case TensorProto::DOUBLE: t.add_double_data(v.reals[i]); break;
      case TensorProto::FLOAT16: t.add_int32_data(float_to_half(static_cast<float>(v.reals[i]))); break;
      case TensorProto::BFLOAT16: t.add_int32_data(float_to_bfloat16(static_cast<float>(v.reals[i]))); break;
      case TensorProto::INT64: t.add_int64_data(v.ints[i]); break;
      case TensorProto::UINT32: t.add_uint64_data(static_cast<uint64_t>(v.ints[i])); break;
      default: t.add_int32_data(static_cast<int32_t>(v.ints[i])); break;
    }
  }
  return t;
}

}  // namespace shapeprop::transform
