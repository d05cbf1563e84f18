// shapeprop's analysis of one call of a model-local function, in the context ONNX's
// inference gives it (input types, constant inputs, shape values, attributes): what the
// schema registry answers ONNX with.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "onnx/onnx_pb.h"
#include "shapeprop/fact.h"
#include "shapeprop/infer.h"

namespace shapeprop::check {

// One actual input as ONNX's InferenceContext gives it.
struct CallInput {
  // nullptr when ONNX knows no type. An inference function cannot tell an omitted input
  // from one of unknown type (both are nullptr), so it is analysed as present and unknown:
  // what is proven then holds either way.
  const onnx::TypeProto* type = nullptr;
  const onnx::TensorProto* data = nullptr;            // a constant (initializer, Constant)
  const onnx::TensorShapeProto* shape_value = nullptr;  // the elements ONNX's data propagation knows
};

struct CallResult {
  std::vector<Fact> outputs;
  std::optional<std::string> error;  // the first error of the analysis, when there is one
};

class CallAnalysis {
 public:
  // `model` must outlive this object unchanged.
  CallAnalysis(const onnx::ModelProto& model, const InferOptions& options);

  // Analyses a call of `f` (one of the model's functions) with `num_outputs` outputs.
  CallResult analyse(const onnx::FunctionProto& f, const std::vector<CallInput>& inputs,
                     const std::vector<onnx::AttributeProto>& attributes, size_t num_outputs);

 private:
  // The model's functions and opset imports around a graph that makes just this call.
  onnx::ModelProto probe_;
  InferOptions options_;
};

}  // namespace shapeprop::check
