// A constant's elements as the passes that compute with them hold them (const-fold,
// conv-bn): floating types as doubles, integral ones (and bool) as int64, decoded from a
// TensorProto's typed fields or raw data and encoded back in the typed fields.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <vector>

#include "eval/fold_support.h"
#include "onnx/onnx_pb.h"

namespace shapeprop::transform {

struct Values {
  int32_t type = 0;
  std::vector<int64_t> dims;
  bool real = false;
  std::vector<double> reals;
  std::vector<int64_t> ints;

  size_t size() const { return real ? reals.size() : ints.size(); }
};

// float, double, float16, bfloat16: held as doubles.
bool is_real_type(int32_t t);
// The integral types held as int64 (uint64 may not fit, so it is not among them).
bool is_int_type(int32_t t);

// The elements of a tensor of these dims; nullopt for a negative dim or a product past
// int64 (dims from a model or from the facts may be anything).
using eval::detail::element_count;
inline std::optional<int64_t> element_count(const google::protobuf::RepeatedField<int64_t>& dims) {
  return element_count(std::span<const int64_t>(dims.data(), static_cast<size_t>(dims.size())));
}

// The tensor's elements; nullopt for another element type, external data, data that does
// not match the dims, or more than `max_elements` elements (checked before decoding).
std::optional<Values> decode(const onnx::TensorProto& t,
                             int64_t max_elements = std::numeric_limits<int64_t>::max());
// A tensor holding `v` in its typed field (no name).
onnx::TensorProto encode(const Values& v);

}  // namespace shapeprop::transform
