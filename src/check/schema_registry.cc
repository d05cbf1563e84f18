// The schemas SchemaRegistry makes for a model's functions (see shapeprop/schema_registry.h).
#include "shapeprop/schema_registry.h"

#include <map>
#include <mutex>
#include <unordered_map>

#include "check/call_analysis.h"
#include "check/symbol_renaming.h"
#include "onnx/defs/shape_inference.h"
#include "shapeprop/function_id.h"
#include "support/dim_params.h"

namespace shapeprop {

namespace {

// Elements of a tensor, when its dims say (external data included: only the dims are read).
std::optional<int64_t> element_count(const onnx::TensorProto& t) {
  int64_t n = 1;
  for (int64_t d : t.dims()) {
    if (d < 0 || (d > 0 && n > std::numeric_limits<int64_t>::max() / d)) return std::nullopt;
    n *= d;
  }
  return n;
}

// A constant input is worth handing to the analysis when the context would keep its
// elements (small tensors, see Fact); a weight is known by its type alone.
bool small_constant(const onnx::TensorProto& t) {
  if (t.data_location() == onnx::TensorProto::EXTERNAL) return false;
  const auto n = element_count(t);
  if (!n) return false;
  const size_t limit = is_floating_type(t.data_type()) ? Fact::kMaxRealElements : Fact::kMaxIntElements;
  return static_cast<uint64_t>(*n) <= limit;
}

}  // namespace

struct SchemaRegistry::Impl {
  // What one call context gets: output types, the shape values ONNX's data propagation
  // may carry on, or the error that fails the call's inference.
  struct Answer {
    std::vector<onnx::TypeProto> types;
    std::vector<std::optional<onnx::TensorShapeProto>> shape_values;
    std::optional<std::string> error;
  };

  const onnx::ISchemaRegistry* base;
  check::CallAnalysis analysis;
  std::set<std::string> model_dim_params;
  // The model's functions by (domain, name); nullptr for an overloaded name.
  std::map<std::pair<std::string, std::string>, const onnx::FunctionProto*> functions;
  std::mutex mutex;  // GetSchema is const and may be shared; the memo and schemas grow lazily
  std::map<const onnx::FunctionProto*, std::unique_ptr<onnx::OpSchema>> schemas;
  std::unordered_map<std::string, Answer> memo;
  const onnx::FunctionProto* last_function = nullptr;  // the call inferred last, for its data propagation
  const Answer* last_answer = nullptr;
  std::optional<check::SymbolRenaming> last_renaming;
  size_t calls = 0;

  Impl(const onnx::ModelProto& model, const onnx::ISchemaRegistry* b, const InferOptions& options)
      : base(b), analysis(model, options), model_dim_params(declared_dim_params(model)) {
    for (const auto& f : model.functions()) {
      auto [it, fresh] = functions.try_emplace({FunctionId::canonical_domain(f.domain()), f.name()}, &f);
      if (!fresh) it->second = nullptr;
    }
  }

  const onnx::OpSchema* schema_for(const onnx::FunctionProto& f) {
    std::lock_guard<std::mutex> lock(mutex);
    auto& schema = schemas[&f];
    if (schema) return schema.get();
    // Any number of inputs and outputs up to the function's, of any type (an empty type
    // constraint is not checked), any attributes: the analysis checks the call itself.
    schema = std::make_unique<onnx::OpSchema>(f.name(), "<model-local function>", 0);
    schema->SetDomain(f.domain());
    schema->SinceVersion(1);
    schema->AllowUncheckedAttributes();
    for (int i = 0; i < f.input_size(); ++i) {
      const std::string type = "I" + std::to_string(i);
      schema->Input(i, f.input(i), "", type, onnx::OpSchema::Optional, /*is_homogeneous=*/false);
      schema->TypeConstraint(type, {}, "any type");
    }
    for (int i = 0; i < f.output_size(); ++i) {
      const std::string type = "O" + std::to_string(i);
      schema->Output(i, f.output(i), "", type, onnx::OpSchema::Optional, /*is_homogeneous=*/false);
      schema->TypeConstraint(type, {}, "any type");
    }
    schema->TypeAndShapeInferenceFunction([this, &f](onnx::InferenceContext& ctx) { infer(f, ctx); });
    schema->PartialDataPropagationFunction([this, &f](onnx::DataPropagationContext& ctx) { propagate(f, ctx); });
    schema->Finalize();
    return schema.get();
  }

  void infer(const onnx::FunctionProto& f, onnx::InferenceContext& ctx) {
    std::lock_guard<std::mutex> lock(mutex);
    ++calls;
    last_function = nullptr;
    const size_t n = std::min(ctx.getNumInputs(), static_cast<size_t>(f.input_size()));
    // The context as ONNX gives it, its symbols renamed (see SymbolRenaming).
    check::SymbolRenaming renaming(model_dim_params);
    std::vector<onnx::TypeProto> types(n);
    std::vector<onnx::TensorShapeProto> shape_values(n);
    std::vector<onnx::TensorProto> constants(n);  // keyed by value, not by name
    std::vector<check::CallInput> inputs(n);
    for (size_t i = 0; i < n; ++i) {
      const onnx::TypeProto* type = ctx.getInputType(i);
      if (!type || type->value_case() == onnx::TypeProto::VALUE_NOT_SET) continue;
      types[i] = *type;
      inputs[i].type = &types[i];
      renaming.collect(types[i]);
      const onnx::TensorProto* data = ctx.getInputData(i);
      if (data && small_constant(*data)) {
        constants[i] = *data;
        constants[i].clear_name();
        inputs[i].data = &constants[i];
      } else if (const onnx::TensorShapeProto* value = ctx.getSymbolicInput(i)) {
        shape_values[i] = *value;
        inputs[i].shape_value = &shape_values[i];
        renaming.collect(shape_values[i]);
      }
    }
    renaming.assign();
    std::string key = FunctionId::of(f).str();
    for (size_t i = 0; i < n; ++i) {
      key += '\x01';
      if (!inputs[i].type) continue;
      renaming.rename(types[i]);
      key += types[i].SerializeAsString();
      if (inputs[i].data) key += "\x02" + constants[i].SerializeAsString();
      if (inputs[i].shape_value) {
        renaming.rename(shape_values[i]);
        key += "\x03" + shape_values[i].SerializeAsString();
      }
    }
    std::vector<onnx::AttributeProto> attributes;
    auto take = [&](const std::string& name) {
      if (const onnx::AttributeProto* a = ctx.getAttribute(name)) {
        attributes.push_back(*a);
        key += "\x04" + a->SerializeAsString();
      }
    };
    for (const auto& name : f.attribute()) take(name);
    for (const auto& a : f.attribute_proto()) take(a.name());
    key += "\x05" + std::to_string(ctx.getNumOutputs());

    auto [it, fresh] = memo.try_emplace(std::move(key));
    Answer& answer = it->second;
    if (fresh) {
      auto r = analysis.analyse(f, inputs, attributes, ctx.getNumOutputs());
      answer.error = std::move(r.error);
      for (const Fact& fact : r.outputs) {
        answer.types.push_back(fact.known() ? fact.type() : onnx::TypeProto());
        answer.shape_values.push_back(fact.as_shape_value());
      }
    }
    if (answer.error) fail_shape_inference("shapeprop: ", renaming.restore(*answer.error));
    for (size_t k = 0; k < ctx.getNumOutputs() && k < answer.types.size(); ++k) {
      if (answer.types[k].value_case() == onnx::TypeProto::VALUE_NOT_SET) continue;
      onnx::TypeProto* out = ctx.getOutputType(k);
      *out = answer.types[k];
      renaming.restore(*out);
    }
    last_function = &f;
    last_answer = &answer;
    last_renaming = std::move(renaming);
  }

  // ONNX runs a node's data propagation right after its inference (Process(NodeProto&)),
  // so the answer to hand on is the last one.
  void propagate(const onnx::FunctionProto& f, onnx::DataPropagationContext& ctx) {
    std::lock_guard<std::mutex> lock(mutex);
    if (last_function != &f) return;
    for (size_t k = 0; k < ctx.getNumOutputs() && k < last_answer->shape_values.size(); ++k)
      if (const auto& value = last_answer->shape_values[k]) {
        onnx::TensorShapeProto restored = *value;
        last_renaming->restore(restored);
        ctx.addOutputData(k, std::move(restored));
      }
  }
};

SchemaRegistry::SchemaRegistry(const onnx::ModelProto& model, const onnx::ISchemaRegistry* base,
                               const InferOptions& options)
    : impl_(std::make_unique<Impl>(model, base, options)) {}

SchemaRegistry::~SchemaRegistry() = default;

const onnx::OpSchema* SchemaRegistry::GetSchema(const std::string& key, const int maxInclusiveVersion,
                                                const std::string& domain) const {
  if (const onnx::OpSchema* own = impl_->base->GetSchema(key, maxInclusiveVersion, domain)) return own;
  auto it = impl_->functions.find({FunctionId::canonical_domain(domain), key});
  if (it == impl_->functions.end() || !it->second) return nullptr;
  return impl_->schema_for(*it->second);
}

size_t SchemaRegistry::contexts_analysed() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->memo.size();
}

size_t SchemaRegistry::calls_answered() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->calls;
}

}  // namespace shapeprop
