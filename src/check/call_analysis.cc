// A call is analysed as the only node of a small "probe" model beside the model's own
// functions: its inputs are graph inputs of the call's types, or initializers when ONNX
// knows their values; a shape value ONNX's data propagation knows but that holds
// symbols is rebuilt as Shape (or Size, for a scalar) of a float input with those dims,
// which the analysis reads back as that shape value. Every function the call reaches is
// analysed afresh in each probe, so that the errors found belong to this call.
#include "call_analysis.h"

#include <algorithm>

#include "check/facts_view.h"
#include "shapeprop/call_graph.h"

namespace shapeprop::check {

namespace {

onnx::NodeProto* add_node(onnx::GraphProto& g, const std::string& op, std::vector<std::string> inputs,
                          const std::string& output) {
  auto* n = g.add_node();
  n->set_op_type(op);
  for (auto& in : inputs) n->add_input(std::move(in));
  n->add_output(output);
  return n;
}

// Binds `name` in the probe graph to what ONNX knows of one input.
void bind_input(onnx::GraphProto& g, const std::string& name, const CallInput& in) {
  const bool is_tensor = in.type->value_case() == onnx::TypeProto::kTensorType;
  const auto& tensor = in.type->tensor_type();
  if (is_tensor && in.data) {
    auto* t = g.add_initializer();
    *t = *in.data;
    t->set_name(name);
    return;
  }
  const int rank = is_tensor && tensor.has_shape() ? tensor.shape().dim_size() : -1;
  const bool shape_value = is_tensor && in.shape_value && is_integral_type(tensor.elem_type()) &&
                           (rank == 1 || (rank == 0 && in.shape_value->dim_size() == 1));
  if (!shape_value) {
    auto* vi = g.add_input();
    vi->set_name(name);
    *vi->mutable_type() = *in.type;
    return;
  }
  const auto& elements = in.shape_value->dim();
  const std::string int64 = tensor.elem_type() == onnx::TensorProto::INT64 ? name : name + ".int64";
  if (std::all_of(elements.begin(), elements.end(), [](const auto& d) { return d.has_dim_value(); })) {
    auto* t = g.add_initializer();
    t->set_name(int64);
    t->set_data_type(onnx::TensorProto::INT64);
    if (rank == 1) t->add_dims(elements.size());
    for (const auto& d : elements) t->add_int64_data(d.dim_value());
  } else {
    auto* carrier = g.add_input();
    carrier->set_name(name + ".dims");
    auto* type = carrier->mutable_type()->mutable_tensor_type();
    type->set_elem_type(onnx::TensorProto::FLOAT);
    *type->mutable_shape() = *in.shape_value;
    add_node(g, rank == 1 ? "Shape" : "Size", {carrier->name()}, int64);
  }
  if (int64 == name) return;
  auto* to = add_node(g, "Cast", {int64}, name)->add_attribute();
  to->set_name("to");
  to->set_type(onnx::AttributeProto::INT);
  to->set_i(tensor.elem_type());
}

}  // namespace

CallAnalysis::CallAnalysis(const onnx::ModelProto& model, const InferOptions& options) : options_(options) {
  probe_.set_ir_version(model.ir_version());
  *probe_.mutable_opset_import() = model.opset_import();
  *probe_.mutable_functions() = model.functions();
}

CallResult CallAnalysis::analyse(const onnx::FunctionProto& f, const std::vector<CallInput>& inputs,
                                 const std::vector<onnx::AttributeProto>& attributes, size_t num_outputs) {
  onnx::GraphProto& g = *probe_.mutable_graph();
  g.Clear();
  g.set_name("probe");
  onnx::NodeProto call;
  call.set_domain(f.domain());
  call.set_op_type(f.name());
  call.set_overload(f.overload());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::string name = "x" + std::to_string(i);
    if (inputs[i].type)
      bind_input(g, name, inputs[i]);
    else
      g.add_input()->set_name(name);  // no type: nothing is known of it
    call.add_input(name);
  }
  for (size_t k = 0; k < num_outputs; ++k) {
    call.add_output("y" + std::to_string(k));
    g.add_output()->set_name(call.output(static_cast<int>(k)));
  }
  *call.mutable_attribute() = {attributes.begin(), attributes.end()};
  *g.add_node() = std::move(call);

  CallResult result;
  auto calls = CallGraph::build(probe_);
  if (!calls) {
    result.error = calls.error().message;
    return result;
  }
  FactsView facts(probe_, *calls, options_);
  result.outputs = facts.outputs(facts.main());
  for (auto& d : facts.take_diagnostics()) {
    if (d.severity != Severity::Error) continue;
    // The probe's own graph and call node say nothing to ONNX's user: the path starts in the function.
    if (d.call_path.size() >= 2) d.call_path.erase(d.call_path.begin(), d.call_path.begin() + 2);
    result.error = d.str();
    break;
  }
  return result;
}

}  // namespace shapeprop::check
