// Strict inference with each function body inferred once per call signature; see
// full_check.h.
#include "check/full_check.h"

#include <cstdint>
#include <exception>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "onnx/defs/data_type_utils.h"
#include "onnx/defs/schema.h"
#include "onnx/shape_inference/implementation.h"
#include "shapeprop/function_id.h"
#include "support/subgraphs.h"

namespace shapeprop {

namespace {

// Every type an ONNX op takes or gives (tensors, sequences, optionals, maps, sparse
// tensors, at every opset): what a call of a function may pass or get back.
const std::set<std::string>& operator_types() {
  static const std::set<std::string> types = [] {
    std::set<std::string> all;
    for (const auto& schema : onnx::OpSchemaRegistry::get_all_schemas_with_history()) {
      for (const auto& p : schema.inputs())
        for (const auto* t : p.GetTypes()) all.insert(*t);
      for (const auto& p : schema.outputs())
        for (const auto* t : p.GetTypes()) all.insert(*t);
    }
    return all;
  }();
  return types;
}

// The types the model itself declares anywhere (graph and function value_info, inputs and
// outputs, in subgraphs too), as ONNX's type strings.
std::set<std::string> declared_types(const onnx::ModelProto& model) {
  std::set<std::string> out;
  auto add = [&out](const onnx::ValueInfoProto& vi) {
    if (!vi.has_type() || vi.type().value_case() == onnx::TypeProto::VALUE_NOT_SET) return;
    try {
      out.insert(*onnx::Utils::DataTypeUtils::ToType(vi.type()));
    } catch (const std::exception&) {  // a type ONNX cannot name (no element type): not one to allow
    }
  };
  for (const auto& f : model.functions())
    for (const auto& vi : f.value_info()) add(vi);
  walk_model(
      model,
      [&add](const onnx::GraphProto& g) {
        for (const auto* list : {&g.input(), &g.output(), &g.value_info()})
          for (const auto& vi : *list) add(vi);
      },
      [](const onnx::NodeProto&) {});
  return out;
}

// How ONNX's inference keys model-local functions ("domain:name[:overload]", the domain
// as written; ONNX's implementation.cc does not export its GetFunctionIdentifier).
std::string onnx_function_key(const onnx::FunctionProto& f) {
  return f.domain() + ":" + f.name() + (f.overload().empty() ? "" : ":" + f.overload());
}

// A schema registry (`base`, ONNX's by default), plus one op per model-local function (for names that have a
// single overload: a schema cannot tell overloads apart, so calls of overloaded names
// take ONNX's own path). Each such op's inference function infers the body with ONNX's
// InferShapeForFunctionNode, once per distinct call signature.
class MemoisingRegistry final : public onnx::ISchemaRegistry {
 public:
  MemoisingRegistry(const onnx::ModelProto& model, const onnx::ShapeInferenceOptions& options,
                    const onnx::ISchemaRegistry* base)
      : options_(options), base_(base ? base : onnx::OpSchemaRegistry::Instance()), types_(declared_types(model)) {
    types_.insert(operator_types().begin(), operator_types().end());
    std::map<std::pair<std::string, std::string>, int> overloads;
    for (const auto& f : model.functions()) {
      const FunctionId id = FunctionId::of(f);
      local_functions_.emplace(onnx_function_key(f), &f);
      if (++overloads[{id.domain, id.name}] == 1) functions_[{id.domain, id.name}] = &f;
    }
    for (const auto& [name, count] : overloads)
      if (count > 1) functions_.erase(name);
  }

  size_t bodies_inferred() const { return memo_.size(); }

  const onnx::OpSchema* GetSchema(const std::string& op, const int version, const std::string& domain) const override {
    // The base registry's schema comes first, as in ONNX's own inference.
    if (const auto* schema = base_->GetSchema(op, version, domain)) return schema;
    auto it = functions_.find({FunctionId::canonical_domain(domain), op});
    if (it == functions_.end()) return nullptr;
    auto& schema = schemas_[it->second];
    if (!schema) schema = make_schema(*it->second);
    return schema.get();
  }

 private:
  // A stand-in schema that accepts every type, any number of inputs and outputs, and any
  // attribute: the function's body says what is valid, and ONNX checks it in there.
  std::unique_ptr<onnx::OpSchema> make_schema(const onnx::FunctionProto& f) const {
    auto s = std::make_unique<onnx::OpSchema>(f.name(), __FILE__, __LINE__);
    s->SetDomain(f.domain());
    s->SinceVersion(1);
    s->Input(0, "inputs", "", "T", onnx::OpSchema::Variadic, /*is_homogeneous=*/false, /*min_arity=*/0);
    s->Output(0, "outputs", "", "T", onnx::OpSchema::Variadic, /*is_homogeneous=*/false, /*min_arity=*/0);
    s->TypeConstraint("T", std::vector<std::string>(types_.begin(), types_.end()), "");
    s->AllowUncheckedAttributes();
    s->TypeAndShapeInferenceFunction([this, &f](onnx::InferenceContext& ctx) { infer_call(f, ctx); });
    s->Finalize();
    return s;
  }

  // What ONNX infers from the body for this call: computed once per signature.
  void infer_call(const onnx::FunctionProto& f, onnx::InferenceContext& ctx) const {
    std::string key = signature(f, ctx);
    auto [it, fresh] = memo_.try_emplace(std::move(key));
    Outcome& outcome = it->second;
    if (fresh) {
      try {
        onnx::shape_inference::InferShapeForFunctionNode(f, this, ctx, options_, local_functions_);
        for (size_t i = 0; i < ctx.getNumOutputs(); ++i) outcome.outputs.push_back(*ctx.getOutputType(i));
      } catch (...) {
        outcome.failure = std::current_exception();
      }
    }
    if (outcome.failure) std::rethrow_exception(outcome.failure);
    for (size_t i = 0; i < ctx.getNumOutputs() && i < outcome.outputs.size(); ++i)
      *ctx.getOutputType(i) = outcome.outputs[i];
  }

  // Everything the body's inference reads from the call: input types and data, the
  // function's attributes, the number of outputs.
  static std::string signature(const onnx::FunctionProto& f, const onnx::InferenceContext& ctx) {
    std::string key = onnx_function_key(f);
    auto add = [&key](const google::protobuf::MessageLite* m) {
      const std::string bytes = m ? m->SerializeAsString() : std::string();
      key += '\n' + std::to_string(m ? bytes.size() : SIZE_MAX) + ':' + bytes;
    };
    key += '\n' + std::to_string(ctx.getNumInputs()) + ' ' + std::to_string(ctx.getNumOutputs());
    for (size_t i = 0; i < ctx.getNumInputs(); ++i) {
      add(ctx.getInputType(i));
      add(ctx.getInputData(i));
      add(ctx.getInputSparseData(i));
    }
    for (const auto& name : f.attribute()) add(ctx.getAttribute(name));
    for (const auto& a : f.attribute_proto()) add(ctx.getAttribute(a.name()));
    return key;
  }

  struct Outcome {
    std::vector<onnx::TypeProto> outputs;
    std::exception_ptr failure;
  };

  const onnx::ShapeInferenceOptions options_;
  const onnx::ISchemaRegistry* base_;
  std::set<std::string> types_;
  std::unordered_map<std::string, const onnx::FunctionProto*> local_functions_;
  std::map<std::pair<std::string, std::string>, const onnx::FunctionProto*> functions_;
  mutable std::map<const onnx::FunctionProto*, std::unique_ptr<onnx::OpSchema>> schemas_;
  mutable std::unordered_map<std::string, Outcome> memo_;
};

}  // namespace

size_t strict_infer_shapes(onnx::ModelProto& model, const onnx::ISchemaRegistry* schemas) {
  const onnx::ShapeInferenceOptions strict{/*check_type=*/true, /*error_mode=*/1, /*enable_data_propagation=*/false};
  const MemoisingRegistry registry(model, strict, schemas);
  onnx::shape_inference::InferShapes(model, &registry, strict);
  return registry.bodies_inferred();
}

}  // namespace shapeprop
