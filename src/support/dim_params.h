// The dim_params a model declares anywhere.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "onnx/onnx_pb.h"
#include "support/subgraphs.h"
#include "support/type_walk.h"

namespace shapeprop {

// Every dim_param in the inputs, outputs and value_info of the main graph and its
// subgraphs, and in the value_info of every function (and its subgraphs).
inline std::set<std::string> declared_dim_params(const onnx::ModelProto& model) {
  std::set<std::string> out;
  auto add = [&out](const onnx::ValueInfoProto& vi) {
    for_each_shape(vi.type(), [&out](const onnx::TensorShapeProto& shape) {
      for (const auto& d : shape.dim())
        if (d.has_dim_param()) out.insert(d.dim_param());
    });
  };
  std::vector<const onnx::GraphProto*> graphs{&model.graph()};
  auto subgraphs_of = [&graphs](const google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes) {
    for (const auto& n : nodes) for_each_subgraph(n, [&graphs](const onnx::GraphProto& g) { graphs.push_back(&g); });
  };
  for (const auto& f : model.functions()) {
    for (const auto& vi : f.value_info()) add(vi);
    subgraphs_of(f.node());
  }
  while (!graphs.empty()) {
    const onnx::GraphProto* g = graphs.back();
    graphs.pop_back();
    for (const auto* list : {&g->input(), &g->output(), &g->value_info()})
      for (const auto& vi : *list) add(vi);
    subgraphs_of(g->node());
  }
  return out;
}

}  // namespace shapeprop
