// ONNX's strict shape inference, as check_model(full_check=true) runs it, without its
// exponential cost in call depth.
//
// ONNX infers a model-local function's body again at every call, and the calls inside it
// again at each of those: a chain of 30 functions that each call the next twice costs
// 2^30 body inferences. Here each function is given to ONNX's InferShapes as an op whose
// inference function runs ONNX's own InferShapeForFunctionNode on the body, memoised on
// the call's input types, input data and attribute values: each body is inferred once
// per distinct call signature, and what ONNX checks of it is unchanged.
#pragma once

#include <cstddef>

#include "onnx/defs/schema.h"
#include "onnx/onnx_pb.h"

namespace shapeprop {

// Runs ONNX's shape inference in strict mode (type checks on, errors thrown, no data
// propagation) on `model`, writing what it infers into it, with ops' schemas from `schemas`
// (ONNX's own registry when null). Throws what ONNX throws. Returns the number of
// function bodies ONNX inferred (distinct call signatures).
size_t strict_infer_shapes(onnx::ModelProto& model, const onnx::ISchemaRegistry* schemas = nullptr);

}  // namespace shapeprop
