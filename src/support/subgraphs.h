// The subgraphs a node holds: its GRAPH and GRAPHS attributes (If branches, Loop and Scan
// bodies, ...), each visited once.
#pragma once

#include <vector>

#include "onnx/onnx_pb.h"

namespace shapeprop {

// Whether the node holds a subgraph.
inline bool has_subgraph(const onnx::NodeProto& n) {
  for (const auto& a : n.attribute())
    if (a.has_g() || a.graphs_size() > 0) return true;
  return false;
}

template <class Fn>
void for_each_subgraph(const onnx::NodeProto& n, Fn&& fn) {
  for (const auto& a : n.attribute()) {
    if (a.has_g()) fn(a.g());
    for (const auto& g : a.graphs()) fn(g);
  }
}

template <class Fn>
void for_each_subgraph(onnx::NodeProto& n, Fn&& fn) {
  for (auto& a : *n.mutable_attribute()) {
    if (a.has_g()) fn(*a.mutable_g());
    for (auto& g : *a.mutable_graphs()) fn(g);
  }
}

// Every graph a model holds (the main graph and the subgraphs of its nodes and of function
// bodies, at any depth) and every node, with a work list: subgraphs may nest deep.
// on_graph(const GraphProto&) is called for each graph, on_node(const NodeProto&) for each
// node of a graph or function body.
template <class OnGraph, class OnNode>
void walk_model(const onnx::ModelProto& model, OnGraph&& on_graph, OnNode&& on_node) {
  using Nodes = google::protobuf::RepeatedPtrField<onnx::NodeProto>;
  std::vector<const onnx::GraphProto*> graphs;
  std::vector<const Nodes*> bodies;
  if (model.has_graph()) graphs.push_back(&model.graph());
  for (const auto& f : model.functions()) bodies.push_back(&f.node());
  while (!graphs.empty() || !bodies.empty()) {
    if (!graphs.empty()) {
      const onnx::GraphProto* g = graphs.back();
      graphs.pop_back();
      on_graph(*g);
      bodies.push_back(&g->node());
      continue;
    }
    const Nodes* nodes = bodies.back();
    bodies.pop_back();
    for (const auto& n : *nodes) {
      on_node(n);
      for_each_subgraph(n, [&graphs](const onnx::GraphProto& g) { graphs.push_back(&g); });
    }
  }
}

}  // namespace shapeprop
