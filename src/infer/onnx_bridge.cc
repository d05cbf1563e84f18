#include "onnx_bridge.h"

#include <memory>

#include "onnx/defs/shape_inference.h"

namespace shapeprop::infer {

namespace {

class BridgeGraphInferencer final : public onnx::GraphInferencer {
 public:
  BridgeGraphInferencer(const onnx::GraphProto& graph, const SubgraphInferencer& infer) : graph_(graph), infer_(infer) {}

  std::vector<const onnx::TypeProto*> doInferencing(const std::vector<const onnx::TypeProto*>& input_types,
                                                    const std::vector<const onnx::TensorProto*>& input_data) override {
    std::vector<Fact> inputs;
    for (size_t i = 0; i < input_types.size(); ++i) {
      if (i < input_data.size() && input_data[i])
        inputs.push_back(Fact::of_tensor(*input_data[i]));
      else
        inputs.push_back(input_types[i] ? Fact::of_type(*input_types[i]) : Fact());
    }
    outputs_.clear();
    for (const Fact& f : infer_(graph_, inputs)) outputs_.push_back(f.type());
    std::vector<const onnx::TypeProto*> out;
    for (const auto& t : outputs_) out.push_back(t.value_case() == onnx::TypeProto::VALUE_NOT_SET ? nullptr : &t);
    return out;
  }

 private:
  const onnx::GraphProto& graph_;
  const SubgraphInferencer& infer_;
  std::vector<onnx::TypeProto> outputs_;
};

// A 1-D integral tensor longer than `max_elements`: as a shape input, ONNX's rules would
// build a shape of that many dims from its length.
bool too_long_for_a_shape(const Fact& f, size_t max_elements) {
  if (!is_integral_type(f.elem_type) || !f.shape || f.shape->size() != 1) return false;
  auto length = (*f.shape)[0].as_constant();
  return length && *length > 0 && static_cast<uint64_t>(*length) > max_elements;
}

class BridgeContext final : public onnx::InferenceContext {
 public:
  BridgeContext(const onnx::NodeProto& node, const std::vector<const Fact*>& inputs,
                const std::vector<const onnx::AttributeProto*>& attributes, const SubgraphInferencer& subgraphs,
                size_t max_elements)
      : node_(node), attributes_(attributes), subgraphs_(subgraphs), output_types_(static_cast<size_t>(node.output_size())) {
    for (const Fact* f : inputs) {
      InputView v;
      if (f && (f->elem_type != 0 || f->other)) {
        v.type = f->type();
        v.has_type = true;
        if (too_long_for_a_shape(*f, max_elements)) v.type.mutable_tensor_type()->mutable_shape()->mutable_dim(0)->Clear();
        if (auto t = f->to_tensor()) v.data = std::move(*t);
        if (auto s = f->as_shape_value()) v.symbolic = std::move(*s);
      }
      inputs_.push_back(std::move(v));
    }
  }

  const onnx::AttributeProto* getAttribute(const std::string& name) const override {
    for (const auto* a : attributes_)
      if (a->name() == name) return a;
    return nullptr;
  }
  size_t getNumInputs() const override { return inputs_.size(); }
  const onnx::TypeProto* getInputType(size_t i) const override {
    return i < inputs_.size() && inputs_[i].has_type ? &inputs_[i].type : nullptr;
  }
  const onnx::TensorProto* getInputData(size_t i) const override {
    return i < inputs_.size() && inputs_[i].data ? &*inputs_[i].data : nullptr;
  }
  size_t getNumOutputs() const override { return output_types_.size(); }
  onnx::TypeProto* getOutputType(size_t i) override { return i < output_types_.size() ? &output_types_[i] : nullptr; }
  // For subgraph-holding ops other than If/Loop/Scan (which the analyzer handles itself).
  onnx::GraphInferencer* getGraphAttributeInferencer(const std::string& name) override {
    const onnx::AttributeProto* a = getAttribute(name);
    if (!a || !a->has_g() || !subgraphs_) return nullptr;
    inferencers_.push_back(std::make_unique<BridgeGraphInferencer>(a->g(), subgraphs_));
    return inferencers_.back().get();
  }
  const onnx::SparseTensorProto* getInputSparseData(size_t) const override { return nullptr; }
  const onnx::TensorShapeProto* getSymbolicInput(size_t i) const override {
    return i < inputs_.size() && inputs_[i].symbolic ? &*inputs_[i].symbolic : nullptr;
  }
  std::string getDisplayName() const override {
    return node_.name().empty() ? node_.op_type() : node_.op_type() + " (" + node_.name() + ")";
  }

  const std::vector<onnx::TypeProto>& outputs() const { return output_types_; }

 private:
  struct InputView {
    bool has_type = false;
    onnx::TypeProto type;
    std::optional<onnx::TensorProto> data;
    std::optional<onnx::TensorShapeProto> symbolic;
  };
  const onnx::NodeProto& node_;
  const std::vector<const onnx::AttributeProto*>& attributes_;
  const SubgraphInferencer& subgraphs_;
  std::vector<std::unique_ptr<BridgeGraphInferencer>> inferencers_;
  std::vector<InputView> inputs_;
  std::vector<onnx::TypeProto> output_types_;
};

}  // namespace

const onnx::OpSchema* find_schema(const std::string& op_type, const std::string& domain, int opset_version) {
  const std::string d = domain == "ai.onnx" ? std::string() : domain;
  return onnx::OpSchemaRegistry::Schema(op_type, opset_version, d);
}

OnnxInference run_onnx_inference(const onnx::OpSchema& schema, const onnx::NodeProto& node,
                                 const std::vector<const Fact*>& inputs,
                                 const std::vector<const onnx::AttributeProto*>& attributes,
                                 const SubgraphInferencer& subgraphs, size_t max_elements) {
  OnnxInference result;
  result.outputs.resize(static_cast<size_t>(node.output_size()));
  BridgeContext ctx(node, inputs, attributes, subgraphs, max_elements);
  auto one_line = [](std::string what) {
    for (char& c : what)
      if (c == '\n') c = ' ';
    return what;
  };
  // What ONNX's full check verifies first: e.g. Add(float, int64) breaks "T".
  try {
    schema.CheckInputOutputType(ctx);
  } catch (const std::exception& e) {
    result.type_error = one_line(e.what());
  }
  try {
    schema.GetTypeAndShapeInferenceFunction()(ctx);
  } catch (const std::exception& e) {
    result.error = one_line(e.what());
    return result;
  }
  for (size_t i = 0; i < result.outputs.size(); ++i)
    if (ctx.outputs()[i].value_case() != onnx::TypeProto::VALUE_NOT_SET) result.outputs[i] = Fact::of_type(ctx.outputs()[i]);
  return result;
}

}  // namespace shapeprop::infer
