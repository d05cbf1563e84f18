// Folding one body (the main graph, or a function in one context) by what the analysis
// knows of it, and removing what is then dead.
#pragma once

#include <functional>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "infer/analyzer.h"
#include "shapeprop/specialize.h"
#include "support/name_map.h"

namespace shapeprop::transform {

using NodeList = google::protobuf::RepeatedPtrField<onnx::NodeProto>;

// Where folded constants go: initializers of the main graph, or Constant nodes in a
// function body.
struct BodyTarget {
  // The main graph being folded, where folded constants go as initializers (nullptr: in a
  // function, or a model whose IR version wants Constant nodes there).
  onnx::GraphProto* main_graph = nullptr;
  // The attribute values of the function's context, substituted for references (a
  // specialized body has no attributes of its own); nullptr in the main graph.
  const std::vector<onnx::AttributeProto>* attributes = nullptr;
  // The name of the specialized function a call node's context maps to.
  std::function<std::string(const infer::CallContext*)> callee_name;
};

// Folds `nodes` (the original body, whose facts are `facts`: the analysis indexed exactly
// these nodes) into a new node list.
// `protected_names` are the body's inputs and outputs (and the main graph's
// initializers), whose names stay as they are; fresh names are kept apart from them and
// from every name the body defines or reads.
NodeList fold_body(const NodeList& nodes, const infer::BodyFacts& facts, const BodyTarget& target,
                   const std::unordered_set<std::string>& protected_names, TransformStats& stats);

// y = Identity(x) at this level: readers of y read x instead; where y must keep its name
// (`keep`: outputs and inputs), x's producer writes y when nothing else reads x.
void collapse_identities(NodeList& nodes, const std::unordered_set<std::string>& keep);

// What fold_body does to the subgraphs of a node it copies when nothing is known of them
// (Identity chains collapse, value_info goes), done in place.
void fold_subgraphs_without_facts(onnx::NodeProto& node);

// True when fold_body (with `target`) and then remove_dead_nodes (with `live`) would give
// `nodes` back as they are. Conservative: false when unsure (a subgraph, an Identity, an
// attribute reference, a call), so that a caller may skip the work only when it is idle.
bool fold_changes_nothing(const NodeList& nodes, const infer::BodyFacts& facts, const BodyTarget& target,
                          const std::unordered_set<std::string>& live);

// Removes nodes whose outputs nobody reads (in subgraphs too); `live` are the names the
// body must still produce. Returns the number of nodes removed.
size_t remove_dead_nodes(NodeList& nodes, const std::unordered_set<std::string>& live);

// Every name read by the nodes, in subgraphs too (a superset of their free names); the
// map views the nodes' strings.
void collect_reads(const NodeList& nodes, NameMap& reads);

// Every name defined or read anywhere in the nodes and their subgraphs.
void collect_names(const NodeList& nodes, std::unordered_set<std::string>& names);

// Nodes in the list (or the node) and all of its subgraphs.
size_t count_nodes(const NodeList& nodes);
size_t count_nodes(const onnx::NodeProto& node);

}  // namespace shapeprop::transform
