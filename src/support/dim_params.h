// The dim_params a model declares anywhere.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "onnx/onnx_pb.h"
#include "support/subgraphs.h"
#include "support/type_walk.h"

namespace shapeprop {

// Calls visit(ValueInfoProto) for every typed entry of the model: the inputs, outputs and
// value_info of the main graph and its subgraphs, and the value_info of every function
// (and its subgraphs).
template <class Visit>
void for_each_value_info(const onnx::ModelProto& model, Visit&& visit) {
  std::vector<const onnx::GraphProto*> graphs{&model.graph()};
  auto subgraphs_of = [&graphs](const google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes) {
    for (const auto& n : nodes) for_each_subgraph(n, [&graphs](const onnx::GraphProto& g) { graphs.push_back(&g); });
  };
  for (const auto& f : model.functions()) {
    for (const auto& vi : f.value_info()) visit(vi);
    subgraphs_of(f.node());
  }
  while (!graphs.empty()) {
    const onnx::GraphProto* g = graphs.back();
    graphs.pop_back();
    for (const auto* list : {&g->input(), &g->output(), &g->value_info()})
      for (const auto& vi : *list) visit(vi);
    subgraphs_of(g->node());
  }
}

// Calls visit(dim_param, ValueInfoProto) for every dim_param of every type for_each_value_info reaches.
template <class Visit>
void for_each_dim_param(const onnx::ModelProto& model, Visit&& visit) {
  for_each_value_info(model, [&visit](const onnx::ValueInfoProto& vi) {
    for_each_shape(vi.type(), [&](const onnx::TensorShapeProto& shape) {
      for (const auto& d : shape.dim())
        if (d.has_dim_param()) visit(d.dim_param(), vi);
    });
  });
}

// Every dim_param for_each_dim_param reaches.
inline std::set<std::string> declared_dim_params(const onnx::ModelProto& model) {
  std::set<std::string> out;
  for_each_dim_param(model, [&out](const std::string& dim_param, const onnx::ValueInfoProto&) { out.insert(dim_param); });
  return out;
}

}  // namespace shapeprop
