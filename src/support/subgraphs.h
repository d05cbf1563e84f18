// The subgraphs a node holds: its GRAPH and GRAPHS attributes (If branches, Loop and Scan
// bodies, ...), each visited once.
#pragma once

#include "onnx/onnx_pb.h"

namespace shapeprop {

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

}  // namespace shapeprop
