// The baseline engine: ONNX's own shape inference.
#include <exception>

#include "engine.h"
#include "onnx/defs/schema.h"
#include "onnx/defs/shape_inference.h"
#include "onnx/shape_inference/implementation.h"

namespace shapeprop::conformance {

namespace {

// The options give ONNX its best showing, so that a comparison with it is fair:
// - check_type=false: type-constraint checking is validation, not inference, and when it
//   fails it throws before the node's inferred output types are recorded, losing them.
// - error_mode=0: a node whose inference fails only leaves its own outputs untyped and the
//   walk goes on; error_mode=1 would discard the whole model's results at the first failure.
//   The price: node-level failures are silent, so they show up as "less precise", not "error".
// - enable_data_propagation=true: Shape/Gather/Concat/... chains feeding Reshape, Expand and
//   the like yield concrete shapes, which ONNX cannot infer without it.
constexpr bool kCheckType = false;
constexpr int kErrorMode = 0;
constexpr bool kDataPropagation = true;

class OnnxEngine final : public Engine {
 public:
  std::string_view name() const override { return "onnx"; }

  EngineResult infer(onnx::ModelProto& model) override {
    const onnx::ShapeInferenceOptions options(kCheckType, kErrorMode, kDataPropagation);
    // Holds the propagated shape values; InferShapes refuses data propagation without it.
    onnx::shape_inference::DataValueMap shape_data;
    try {
      onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(), options, &shape_data);
      return {};
    } catch (const std::exception& e) {
      return {false, e.what()};
    } catch (...) {
      return {false, "unknown exception"};
    }
  }
};

}  // namespace

std::unique_ptr<Engine> make_onnx_engine() { return std::make_unique<OnnxEngine>(); }

}  // namespace shapeprop::conformance
