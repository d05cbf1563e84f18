// onnx-infer-baseline IN.onnx OUT.onnx: ONNX's own C++ shape inference as a user runs it,
// the yardstick of scripts/bench.sh: load, InferShapes with data propagation, save
// (onnx::shape_inference::InferShapes(model_path, save_path, ...), ONNX 1.17).
#include <exception>
#include <iostream>

#include "onnx/defs/schema.h"
#include "onnx/shape_inference/implementation.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: onnx-infer-baseline IN.onnx OUT.onnx\n";
    return 2;
  }
  try {
    onnx::ShapeInferenceOptions options(/*check_type=*/false, /*error_mode=*/0, /*enable_data_propagation=*/true);
    onnx::shape_inference::InferShapes(argv[1], argv[2], onnx::OpSchemaRegistry::Instance(), options);
  } catch (const std::exception& e) {
    std::cerr << "onnx-infer-baseline: " << e.what() << '\n';
    return 1;
  }
  return 0;
}
