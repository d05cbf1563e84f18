#include "onnx_bridge.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>

#include "onnx/defs/shape_inference.h"
#include "shapeprop/hash_combine.h"
#include "support/schema_key.h"

namespace shapeprop::infer {

namespace {

// ONNX compares dim_params as strings. A model's own name may spell what an expression
// of ours prints ("2*N": a name there, twice N here), so every dim that is not a plain
// identifier reaches ONNX as a token of its own, one per distinct Dim, and every type ONNX
// gives back is read through the same tokens: equal dims stay equal, and nothing else is.
// The tokens belong to one node's inference (two nodes' tokens are unrelated) and never
// leave it: a type becomes a Fact only through read(), which takes every dim_param in it,
// however deeply nested in sequences, optionals and maps, and a token it did not issue
// (none should reach it) is an unknown dim, never a name.
class DimTokens {
 public:
  // The type of `f` for ONNX: its identifiers as they are, other dims as tokens.
  onnx::TypeProto type(const Fact& f) {
    return f.type([this](onnx::TensorShapeProto_Dimension& out, const Dim& d) {
      out.set_dim_param(d.is_symbol() ? d.str() : token(d));
    });
  }
  // A shape value's dims for ONNX, tokens as in type().
  void encode(onnx::TensorShapeProto& shape, const std::vector<Dim>& dims) {
    for (int k = 0; k < shape.dim_size() && static_cast<size_t>(k) < dims.size(); ++k) {
      auto* d = shape.mutable_dim(k);
      if (d->has_dim_param() && !dims[static_cast<size_t>(k)].is_symbol()) d->set_dim_param(token(dims[static_cast<size_t>(k)]));
    }
  }
  // A type ONNX gave, as a fact.
  Fact read(const onnx::TypeProto& t) const {
    return Fact::of_type(t, [this](const std::string& dim_param) { return decode(dim_param); });
  }

 private:
  static constexpr char kMark = '\x01';  // in no identifier (a model's own name with it reads back unknown)
  std::string token(const Dim& d) {
    auto it = std::find(dims_.begin(), dims_.end(), d);
    if (it == dims_.end()) it = dims_.insert(dims_.end(), d);
    return kMark + std::to_string(it - dims_.begin());
  }
  Dim decode(const std::string& dim_param) const {
    if (dim_param.empty() || dim_param[0] != kMark) return Dim::named(dim_param);
    for (size_t k = 0; k < dims_.size(); ++k)
      if (dim_param == kMark + std::to_string(k)) return dims_[k];
    return Dim::unknown();
  }
  std::vector<Dim> dims_;  // the dims given a token, by number
};

class BridgeGraphInferencer final : public onnx::GraphInferencer {
 public:
  BridgeGraphInferencer(const onnx::GraphProto& graph, const SubgraphInferencer& infer, DimTokens& tokens)
      : graph_(graph), infer_(infer), tokens_(tokens) {}

  std::vector<const onnx::TypeProto*> doInferencing(const std::vector<const onnx::TypeProto*>& input_types,
                                                    const std::vector<const onnx::TensorProto*>& input_data) override {
    std::vector<Fact> inputs;
    for (size_t i = 0; i < input_types.size(); ++i) {
      if (i < input_data.size() && input_data[i])
        inputs.push_back(Fact::of_tensor(*input_data[i]));
      else
        inputs.push_back(input_types[i] ? tokens_.read(*input_types[i]) : Fact());
    }
    outputs_.clear();
    for (const Fact& f : infer_(graph_, inputs)) outputs_.push_back(tokens_.type(f));
    std::vector<const onnx::TypeProto*> out;
    for (const auto& t : outputs_) out.push_back(t.value_case() == onnx::TypeProto::VALUE_NOT_SET ? nullptr : &t);
    return out;
  }

 private:
  const onnx::GraphProto& graph_;
  const SubgraphInferencer& infer_;
  DimTokens& tokens_;
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
      : max_elements_(max_elements),
        node_(node),
        facts_(inputs),
        attributes_(attributes),
        subgraphs_(subgraphs),
        inputs_(inputs.size()),
        output_types_(static_cast<size_t>(node.output_size())) {}

  const onnx::AttributeProto* getAttribute(const std::string& name) const override {
    for (const auto* a : attributes_)
      if (a->name() == name) return a;
    return nullptr;
  }
  size_t getNumInputs() const override { return inputs_.size(); }
  // Each input's type, data and shape value are built from its fact on first request:
  // most inference functions ask for a few of them only.
  const onnx::TypeProto* getInputType(size_t i) const override {
    if (i >= inputs_.size() || !has_type(i)) return nullptr;
    auto& v = inputs_[i];
    if (!v.type) {
      v.type = tokens_.type(*facts_[i]);
      if (too_long_for_a_shape(*facts_[i], max_elements_))
        v.type->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->Clear();
    }
    return &*v.type;
  }
  const onnx::TensorProto* getInputData(size_t i) const override {
    if (i >= inputs_.size() || !has_type(i)) return nullptr;
    auto& v = inputs_[i];
    if (!v.data_done) {
      v.data = facts_[i]->to_tensor();
      v.data_done = true;
    }
    return v.data ? &*v.data : nullptr;
  }
  size_t getNumOutputs() const override { return output_types_.size(); }
  // Out of range, an error, as in ONNX's own context (InferenceContextImpl): its inference
  // functions write output 0 without asking how many there are, and a node ONNX's checker
  // refuses (an Add with no output, which a library caller may pass) has none.
  onnx::TypeProto* getOutputType(size_t i) override {
    if (i >= output_types_.size())
      fail_type_inference("output ", i, " is asked for, and the node has ", output_types_.size());
    return &output_types_[i];
  }
  // For subgraph-holding ops other than If/Loop/Scan (which the analyzer handles itself).
  onnx::GraphInferencer* getGraphAttributeInferencer(const std::string& name) override {
    const onnx::AttributeProto* a = getAttribute(name);
    if (!a || !a->has_g() || !subgraphs_) return nullptr;
    inferencers_.push_back(std::make_unique<BridgeGraphInferencer>(a->g(), subgraphs_, tokens_));
    return inferencers_.back().get();
  }
  const onnx::SparseTensorProto* getInputSparseData(size_t) const override { return nullptr; }
  const onnx::TensorShapeProto* getSymbolicInput(size_t i) const override {
    if (i >= inputs_.size() || !has_type(i)) return nullptr;
    auto& v = inputs_[i];
    if (!v.symbolic_done) {
      v.symbolic = facts_[i]->as_shape_value();
      if (v.symbolic) tokens_.encode(*v.symbolic, *facts_[i]->ints);
      v.symbolic_done = true;
    }
    return v.symbolic ? &*v.symbolic : nullptr;
  }
  std::string getDisplayName() const override {
    return node_.name().empty() ? node_.op_type() : node_.op_type() + " (" + node_.name() + ")";
  }

  std::vector<onnx::TypeProto>& outputs() { return output_types_; }

  // An output type as a fact, read through the tokens its inputs were given.
  Fact output_fact(size_t i) const { return tokens_.read(output_types_[i]); }

 private:
  struct InputView {
    std::optional<onnx::TypeProto> type;
    std::optional<onnx::TensorProto> data;
    std::optional<onnx::TensorShapeProto> symbolic;
    bool data_done = false;
    bool symbolic_done = false;
  };
  bool has_type(size_t i) const {
    const Fact* f = facts_[i];
    return f && (f->elem_type != 0 || f->other);
  }

  const size_t max_elements_;
  const onnx::NodeProto& node_;
  const std::vector<const Fact*>& facts_;
  const std::vector<const onnx::AttributeProto*>& attributes_;
  const SubgraphInferencer& subgraphs_;
  std::vector<std::unique_ptr<BridgeGraphInferencer>> inferencers_;
  mutable std::vector<InputView> inputs_;
  mutable DimTokens tokens_;
  std::vector<onnx::TypeProto> output_types_;
};

std::string one_line(std::string what) {
  for (char& c : what)
    if (c == '\n') c = ' ';
  return what;
}

}  // namespace

const onnx::OpSchema* find_schema(const std::string& op_type, const std::string& domain, int opset_version) {
  const std::string d = domain == "ai.onnx" ? std::string() : domain;
  return onnx::OpSchemaRegistry::Schema(op_type, opset_version, d);
}

struct OnnxBridge::Caches {
  // (domain, op_type, version) -> schema, keyed as one string (OnnxBridge::find_schema).
  std::unordered_map<std::string, const onnx::OpSchema*> schemas;
  std::string key;  // the latest lookup's key, its storage reused by the next

  // The type check's outcome for one schema, output count and input element types.
  struct CheckKey {
    const onnx::OpSchema* schema;
    size_t num_outputs;
    std::vector<int32_t> inputs;  // element type per input; -1 where it has no type
    bool operator==(const CheckKey&) const = default;
  };
  struct CheckKeyHash {
    size_t operator()(const CheckKey& k) const {
      // The element types come from the model: any int32, INT32_MAX included.
      size_t h = std::hash<const void*>()(k.schema);
      hash_combine(h, k.num_outputs);
      for (int32_t t : k.inputs) hash_combine(h, static_cast<uint32_t>(t));
      return h;
    }
  };
  struct CheckOutcome {
    std::optional<std::string> error;
    std::vector<onnx::TypeProto> outputs;  // the output types as the check left them
  };
  std::unordered_map<CheckKey, CheckOutcome, CheckKeyHash> checks;
};

OnnxBridge::OnnxBridge(size_t max_elements) : max_elements_(max_elements), caches_(std::make_unique<Caches>()) {}
OnnxBridge::~OnnxBridge() = default;

const onnx::OpSchema* OnnxBridge::find_schema(const std::string& op_type, const std::string& domain, int opset_version) {
  std::string& key = caches_->key;  // asked at every node: no key is made unless new
  spell_schema_key(key, domain, op_type, opset_version);
  if (auto it = caches_->schemas.find(key); it != caches_->schemas.end()) return it->second;
  std::string fresh = key;  // (kept apart from the buffer while ONNX's registry answers)
  const onnx::OpSchema* schema = infer::find_schema(op_type, domain, opset_version);
  caches_->schemas.emplace(std::move(fresh), schema);
  return schema;
}

OnnxInference OnnxBridge::infer(const onnx::OpSchema& schema, const onnx::NodeProto& node,
                                const std::vector<const Fact*>& inputs,
                                const std::vector<const onnx::AttributeProto*>& attributes,
                                const SubgraphInferencer& subgraphs) {
  OnnxInference result;
  result.outputs.resize(static_cast<size_t>(node.output_size()));
  BridgeContext ctx(node, inputs, attributes, subgraphs, max_elements_);
  // What ONNX's full check verifies first: e.g. Add(float, int64) breaks "T". Its outcome
  // depends on the inputs' types alone; tensor types are the element type.
  Caches::CheckKey key{&schema, static_cast<size_t>(node.output_size()), {}};
  bool cacheable = true;
  for (const Fact* f : inputs) {
    if (f && f->other) cacheable = false;
    key.inputs.push_back(f && f->elem_type != 0 ? f->elem_type : -1);
  }
  auto run_check = [&]() -> std::optional<std::string> {
    try {
      schema.CheckInputOutputType(ctx);
    } catch (const std::exception& e) {
      return one_line(e.what());
    }
    return std::nullopt;
  };
  if (cacheable) {
    auto found = caches_->checks.find(key);
    if (found == caches_->checks.end()) {
      Caches::CheckOutcome outcome;
      outcome.error = run_check();
      outcome.outputs = ctx.outputs();
      found = caches_->checks.emplace(std::move(key), std::move(outcome)).first;
    } else {
      ctx.outputs() = found->second.outputs;
    }
    result.type_error = found->second.error;
  } else {
    result.type_error = run_check();
  }
  try {
    schema.GetTypeAndShapeInferenceFunction()(ctx);
  } catch (const std::exception& e) {
    result.error = one_line(e.what());
    return result;
  }
  for (size_t i = 0; i < result.outputs.size(); ++i)
    if (ctx.outputs()[i].value_case() != onnx::TypeProto::VALUE_NOT_SET) result.outputs[i] = ctx.output_fact(i);
  return result;
}

}  // namespace shapeprop::infer
