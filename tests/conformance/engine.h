// Pluggable type-inference engines for the conformance driver (shapeprop-conformance).
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "onnx/onnx_pb.h"

namespace shapeprop::conformance {

// Whether inference ran. A run that completes but infers little is still `ok`; the
// driver judges precision by comparing types, not through this result.
struct EngineResult {
  bool ok = true;
  std::string error;  // why inference failed, when !ok
};

class Engine {
 public:
  virtual ~Engine() = default;
  virtual std::string_view name() const = 0;
  // Infers types in place: must fill model.graph().output(i).type() where it can.
  // Must not add, remove or reorder graph outputs; the driver matches them by index.
  virtual EngineResult infer(onnx::ModelProto& model) = 0;
};

// ONNX's own onnx::shape_inference::InferShapes, the baseline other engines are measured against.
std::unique_ptr<Engine> make_onnx_engine();

// shapeprop's own inference (shapeprop::infer_shapes), the engine under test.
std::unique_ptr<Engine> make_shapeprop_engine();

// The engines `--engine NAME` can select. The table lives in engines.cc: to add an
// engine, write its factory and add one row there.
struct EngineEntry {
  std::string_view name;
  std::unique_ptr<Engine> (*make)();
};
std::span<const EngineEntry> engines();

// The engine registered under `name`, or nullptr when there is none.
std::unique_ptr<Engine> make_engine(std::string_view name);

}  // namespace shapeprop::conformance
