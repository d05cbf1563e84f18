// Visiting the shapes a TypeProto holds, however deeply nested (sequence, optional, map).
#pragma once

#include "onnx/onnx_pb.h"

namespace shapeprop {

// Calls fn(TensorShapeProto&) for every shape present in `t` (tensor and sparse tensor
// types, inside sequences, optionals and map values).
template <class Type, class Fn>
void for_each_shape(Type& t, Fn&& fn) {
  switch (t.value_case()) {
    case onnx::TypeProto::kTensorType:
      if (t.tensor_type().has_shape()) {
        if constexpr (std::is_const_v<Type>)
          fn(t.tensor_type().shape());
        else
          fn(*t.mutable_tensor_type()->mutable_shape());
      }
      break;
    case onnx::TypeProto::kSparseTensorType:
      if (t.sparse_tensor_type().has_shape()) {
        if constexpr (std::is_const_v<Type>)
          fn(t.sparse_tensor_type().shape());
        else
          fn(*t.mutable_sparse_tensor_type()->mutable_shape());
      }
      break;
    case onnx::TypeProto::kSequenceType:
      if constexpr (std::is_const_v<Type>)
        for_each_shape(t.sequence_type().elem_type(), fn);
      else
        for_each_shape(*t.mutable_sequence_type()->mutable_elem_type(), fn);
      break;
    case onnx::TypeProto::kOptionalType:
      if constexpr (std::is_const_v<Type>)
        for_each_shape(t.optional_type().elem_type(), fn);
      else
        for_each_shape(*t.mutable_optional_type()->mutable_elem_type(), fn);
      break;
    case onnx::TypeProto::kMapType:
      if constexpr (std::is_const_v<Type>)
        for_each_shape(t.map_type().value_type(), fn);
      else
        for_each_shape(*t.mutable_map_type()->mutable_value_type(), fn);
      break;
    default:
      break;
  }
}

}  // namespace shapeprop
