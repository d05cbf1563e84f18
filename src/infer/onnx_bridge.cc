#include "onnx_bridge.h"

#include "onnx/defs/shape_inference.h"

namespace shapeprop::infer {

namespace {

class BridgeContext final : public onnx::InferenceContext {
 public:
  BridgeContext(const onnx::NodeProto& node, const std::vector<const Fact*>& inputs,
                const std::vector<const onnx::AttributeProto*>& attributes)
      : node_(node), attributes_(attributes), output_types_(static_cast<size_t>(node.output_size())) {
    for (const Fact* f : inputs) {
      InputView v;
      if (f && (f->elem_type != 0 || f->other)) {
        v.type = f->type();
        v.has_type = true;
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
  // Subgraph-holding ops other than If/Loop/Scan (which the analyzer handles itself) get
  // no graph inferencer; ONNX's functions then stop with an error, caught by the caller.
  onnx::GraphInferencer* getGraphAttributeInferencer(const std::string&) override { return nullptr; }
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
                                 const std::vector<const onnx::AttributeProto*>& attributes) {
  OnnxInference result;
  result.outputs.resize(static_cast<size_t>(node.output_size()));
  BridgeContext ctx(node, inputs, attributes);
  try {
    schema.GetTypeAndShapeInferenceFunction()(ctx);
  } catch (const std::exception& e) {
    std::string what = e.what();
    for (char& c : what)
      if (c == '\n') c = ' ';
    result.error = what;
    return result;
  }
  for (size_t i = 0; i < result.outputs.size(); ++i)
    if (ctx.outputs()[i].value_case() != onnx::TypeProto::VALUE_NOT_SET) result.outputs[i] = Fact::of_type(ctx.outputs()[i]);
  return result;
}

}  // namespace shapeprop::infer
