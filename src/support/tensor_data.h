// Reading and writing the data of a TensorProto.
#pragma once

#include <cstdint>

#include "onnx/onnx_pb.h"

namespace shapeprop {

// The tensor with raw_data decoded into the typed field ONNX's parser fills
// (int32_data for every type narrower than 32 bits, float16 as bit patterns).
onnx::TensorProto typed_tensor(const onnx::TensorProto& tensor);

float half_to_float(uint16_t bits);
uint16_t float_to_half(float value);
float bfloat16_to_float(uint16_t bits);
uint16_t float_to_bfloat16(float value);

}  // namespace shapeprop
