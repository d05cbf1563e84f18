// The bridge to ONNX's operator schemas: an InferenceContext of ours that hands each op's
// ONNX inference function our facts (types, constant input data, symbolic shape values)
// and the node's attributes with references already resolved, and reads back the output
// types.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "onnx/defs/schema.h"
#include "shapeprop/fact.h"
#include "shapeprop/limits.h"

namespace shapeprop::infer {

// The schema of `op_type` in `domain` at the opset version in force where the node
// stands; nullptr when ONNX has none.
const onnx::OpSchema* find_schema(const std::string& op_type, const std::string& domain, int opset_version);

struct OnnxInference {
  std::vector<Fact> outputs;              // one per node output
  std::optional<std::string> error;       // ONNX's inference function failed (its message)
  std::optional<std::string> type_error;  // an input breaks the schema's type constraints
};

// Infers a subgraph attribute's output types from its input facts (for ONNX inference
// functions of ops such as SequenceMap that ask for a GraphInferencer).
using SubgraphInferencer =
    std::function<std::vector<Fact>(const onnx::GraphProto& graph, const std::vector<Fact>& inputs)>;

// What ONNX answers the same way every time, asked once per analysis: the schema of an
// op at a version, and the outcome of a schema's type-constraint check for the element
// types of the inputs (ONNX's OpSchema::CheckInputOutputType, which also gives outputs
// their element type where the constraints decide it; it spells every type as a string
// under a lock, which made it the costliest part of inference).
class OnnxBridge {
 public:
  // A 1-D integral input longer than `max_elements` (Limits::max_elements) is handed to
  // ONNX with its length unknown: ONNX's rules build a shape of that many dims from a shape
  // input's length (Reshape, Expand, ConstantOfShape, Tile), 3,037,000,500 dims for
  // int64[3037000500].
  explicit OnnxBridge(size_t max_elements = Limits{}.max_elements);
  ~OnnxBridge();
  const onnx::OpSchema* find_schema(const std::string& op_type, const std::string& domain, int opset_version);

  // Runs the schema's type and shape inference function on the node. `inputs` are the
  // facts of the node's inputs (nullptr where an optional input is omitted). (The analysis
  // keeps the outcomes of nodes alike: infer/op_memo.h.)
  OnnxInference infer(const onnx::OpSchema& schema, const onnx::NodeProto& node, const std::vector<const Fact*>& inputs,
                      const std::vector<const onnx::AttributeProto*>& attributes, const SubgraphInferencer& subgraphs);

 private:
  size_t max_elements_;
  struct Caches;
  std::unique_ptr<Caches> caches_;
};

}  // namespace shapeprop::infer
