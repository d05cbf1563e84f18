#include "ir/body.h"


#include "shapeprop/function_id.h"

namespace shapeprop::ir {

namespace {

NodeKind kind_of(const onnx::NodeProto& n, const CallGraph* calls, const onnx::FunctionProto** callee) {
  // A model-local function takes precedence over an op of the same name, as in the
  // analysis of calls everywhere else.
  if (const onnx::FunctionProto* f = calls && calls->size() > 0 ? calls->find(n) : nullptr) {
    *callee = f;
    return NodeKind::Call;
  }
  if (!FunctionId::is_default_domain(n.domain())) return NodeKind::Op;
  const std::string_view op = n.op_type();  // compared as a view: lengths first
  if (op == "If") return NodeKind::If;
  if (op == "Loop") return NodeKind::Loop;
  if (op == "Scan") return NodeKind::Scan;
  return NodeKind::Op;
}

}  // namespace

Body::Body(const onnx::FunctionProto& function, const CallGraph* calls) {
  for (const auto& in : function.input()) inputs_.push_back(define(in));
  index_nodes(function.node(), calls);
  for (const auto& out : function.output()) results_.push_back(resolve(out));
}

Body::Body(const onnx::GraphProto& graph, const Body* parent, const CallGraph* calls) : parent_(parent), graph_(&graph) {
  NameMap input_names(static_cast<size_t>(graph.input_size()));
  for (const auto& in : graph.input()) {
    inputs_.push_back(define(in.name()));
    input_names.insert(in.name());
  }
  // An initializer that is also an input is that input's default, not a value of its own.
  for (const auto& t : graph.initializer())
    if (!input_names.contains(t.name())) initializers_.push_back(define(t.name()));
  index_nodes(graph.node(), calls);
  for (const auto& out : graph.output()) results_.push_back(resolve(out.name()));
}

ValueId Body::define(std::string_view name) {
  const auto id = static_cast<ValueId>(names_.size());
  names_.push_back(name);
  if (!name.empty()) by_name_.insert_or_assign(name, id);
  return id;
}

ValueId Body::find(std::string_view name) const {
  const uint32_t v = by_name_.find(name);
  return v == NameMap::kMissing ? kNoValue : v;
}

Operand Body::resolve(std::string_view name) const {
  if (name.empty()) return Operand{};
  uint32_t depth = 0;
  for (const Body* b = this; b; b = b->parent_, ++depth)
    if (ValueId v = b->find(name); v != kNoValue) return Operand{depth, v};
  return Operand{Operand::kUnresolved, kNoValue};
}

void Body::index_nodes(const google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes, const CallGraph* calls) {
  // Sized exactly, once: the index of a large graph is a good part of a run's peak memory.
  size_t inputs = 0, outputs = 0;
  for (const auto& n : nodes) {
    inputs += static_cast<size_t>(n.input_size());
    outputs += static_cast<size_t>(n.output_size());
  }
  nodes_.reserve(static_cast<size_t>(nodes.size()));
  operands_.reserve(inputs);
  outputs_.reserve(outputs);
  names_.reserve(names_.size() + outputs);
  by_name_.reserve(names_.size() + outputs);
  for (const auto& n : nodes) {
    Node node;
    node.proto = &n;
    node.kind = kind_of(n, calls, &node.callee);
    // Inputs are resolved against the definitions before this node, as ONNX's scoping
    // (and a topological order) has it: a read of a later definition is unresolved.
    node.first_input = static_cast<uint32_t>(operands_.size());
    for (const auto& in : n.input()) operands_.push_back(resolve(in));
    node.first_output = static_cast<uint32_t>(outputs_.size());
    for (const auto& out : n.output()) outputs_.push_back(out.empty() ? kNoValue : define(out));
    nodes_.push_back(node);
  }
}

const Body& BodyIndex::of(const onnx::FunctionProto& function) {
  auto& slot = functions_[&function];
  if (!slot) slot = std::make_unique<Body>(function, &calls_);
  return *slot;
}

const Body& BodyIndex::of(const onnx::GraphProto& graph, const Body* parent) {
  auto& slot = graphs_[{&graph, parent}];
  if (!slot) slot = std::make_unique<Body>(graph, parent, &calls_);
  return *slot;
}

}  // namespace shapeprop::ir
