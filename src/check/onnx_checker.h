// ONNX's model checker with a context of our own (schema registry, the model's folder, the
// opset compatibility switch). ONNX's check_model(const ModelProto&, CheckerContext&) is
// the entry point that takes one; it is exported by 1.16/1.17's checker.cc (though no
// header declares it) and file-local from 1.18 on, so it cannot be linked against every
// ONNX. Its body is short and calls only exported pieces (check_graph,
// check_model_local_functions): onnx_check_model is that body, written after
// onnx/checker.cc (the same in 1.17.0 and 1.21.0), so that every ONNX checks alike.
#pragma once

#include "onnx/checker.h"

namespace shapeprop {

// Throws onnx::checker::ValidationError as ONNX's check_model does.
void onnx_check_model(const onnx::ModelProto& model, onnx::checker::CheckerContext& ctx);

}  // namespace shapeprop
