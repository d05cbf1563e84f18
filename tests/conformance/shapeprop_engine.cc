// The engine under test: shapeprop's inter-procedural inference (infer_shapes), in its
// default best-effort mode.
#include "engine.h"
#include "shapeprop/infer.h"

namespace shapeprop::conformance {

namespace {

class ShapepropEngine final : public Engine {
 public:
  std::string_view name() const override { return "shapeprop"; }

  EngineResult infer(onnx::ModelProto& model) override {
    try {
      auto result = infer_shapes(model);
      if (!result) return {false, result.error().str()};
      return {};
    } catch (const std::exception& e) {  // a bug of ours: counted as an error, never a crash
      return {false, std::string("exception: ") + e.what()};
    }
  }
};

}  // namespace

std::unique_ptr<Engine> make_shapeprop_engine() { return std::make_unique<ShapepropEngine>(); }

}  // namespace shapeprop::conformance
