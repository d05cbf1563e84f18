// Folding one body (the main graph, or a function in one context) by what the analysis
// knows of it, and removing what is then dead.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "infer/analyzer.h"
#include "ir/mutable_body.h"
#include "shapeprop/transform_options.h"

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
  // The name of the specialized function a call node's context maps to; empty: the call
  // stays as written (a function kept for a backend).
  std::function<std::string(const infer::CallContext*)> callee_name;
  // Its overload, when specializations are overloads (nullptr: none is set).
  std::function<std::string(const infer::CallContext*)> callee_overload;
  // Fold what the facts decide (the fold pass); otherwise nodes are copied, calls
  // retargeted and attribute references resolved only.
  bool decide = true;
  // Collapse Identity chains and drop dead nodes in subgraphs as they are folded, the
  // innermost first (the dce pass; the top level is tidied on the mutable body,
  // rewrite_body with tidy).
  bool tidy = true;
};

// What is known of a body's top-level values by place, for the mutable body
// (MutableBody::FactSource): the facts folding gave each node it emitted, output by output,
// and each initializer it added to the main graph; the analysis's for the rest (inputs,
// the initializers the body had, outer values), looked up by name once each.
class PlacedFacts {
 public:
  // For a folded body; `initializers_before` is the number of initializers the main graph
  // had before folding added any.
  explicit PlacedFacts(const infer::BodyFacts* analysis, size_t initializers_before = 0)
      : analysis_(analysis), first_added_(initializers_before) {}
  // For the analysed nodes themselves, in their order (a body not folded, or one that
  // folding gives back as it is: fold_gives_back).
  static PlacedFacts of_analysed(const infer::BodyFacts& analysis);

  ir::MutableBody::FactSource source() const;

  // Folding records: an output of the node it is emitting, then the node.
  void add_output(const Fact* f) { pending_.push_back(f); }
  void end_node(int outputs);
  // The output recorded last is an initializer added to the main graph, not a node's.
  void last_output_is_initializer();
  // A constant of a subgraph added to the main graph as an initializer (known as `f`).
  void add_initializer(const Fact* f) { added_.push_back(f); }

 private:
  const Fact* by_name(std::string_view name) const;

  const infer::BodyFacts* analysis_;
  bool analysed_nodes_ = false;
  std::vector<const Fact*> outputs_;  // every node's, in order
  std::vector<size_t> starts_{0};     // node i's: outputs_[starts_[i], starts_[i + 1])
  std::vector<const Fact*> pending_;  // of the node being emitted
  size_t first_added_;
  std::vector<const Fact*> added_;  // of the initializers folding added, in order
};

// Folds `nodes` (the original body, whose facts are `facts`: the analysis indexed exactly
// these nodes) into a new node list; `facts_out`, if given, learns the facts of the
// top-level nodes and initializers it emits. In subgraphs Identity chains collapse and
// dead nodes go (with target.tidy); at the top level both wait for the mutable body
// (rewrite_body's tidy).
// `protected_names` are the body's inputs and outputs (and the main graph's
// initializers), whose names stay as they are; fresh names are kept apart from them and
// from every name the body defines or reads.
// With `take_from` (which must be `nodes` itself, given mutable), a top-level node whose
// copy would equal it (a call's retargeting aside) is moved into the result rather than
// copied, and an empty node is left in its place: `nodes` is then spent, fit only to be
// destroyed, and the facts' views of names in it are to be read before the result
// changes (as MutableBody's constructor reads them). Not for a body with subgraphs,
// whose folding reads the analysis by name later. `untouched`, if given, learns whether
// every node was taken as it was, the result then the original list itself.
NodeList fold_body(const NodeList& nodes, const infer::BodyFacts& facts, const BodyTarget& target,
                   const ir::ValueNames& protected_names, Counters& stats,
                   PlacedFacts* facts_out = nullptr, NodeList* take_from = nullptr, bool* untouched = nullptr);

// At the top level of `nodes` (a subgraph's, or a graph's without facts), on the mutable
// body: Identity chains collapse (MutableBody::collapse_identities; `keep` are the names
// that stay: inputs and outputs), and, with `remove_dead`, dead nodes go. Subgraphs are
// not looked into: the callers tidy them first, the innermost first.
void tidy_nodes(NodeList& nodes, const ir::ValueNames& keep, bool remove_dead);

using ir::constant_node;

// What fold_body does to the subgraphs of a node it copies when nothing is known of them
// (Identity chains collapse, dead nodes go, value_info goes), done in place.
void fold_subgraphs_without_facts(onnx::NodeProto& node);

// True when fold_body (with `target`) would give `nodes` back as they are, each node a copy
// of its original (its facts then the analysis's, by place: PlacedFacts::of_analysed).
// Conservative, as fold_changes_nothing below.
bool fold_gives_back(const NodeList& nodes, const infer::BodyFacts& facts, const BodyTarget& target);

// True when fold_body (with `target`) would give `nodes` back as they are, none of them is
// dead (the graph's outputs, which `facts` index, read each, through the nodes after it)
// and every initializer is read. Conservative: false when unsure (a subgraph, an Identity,
// an attribute reference, a call), so that a caller may skip the work only when it is idle.
bool fold_changes_nothing(const NodeList& nodes, const infer::BodyFacts& facts, const BodyTarget& target);

// Keeps the nodes whose `keep` entry is true, in their order, and destroys the others. The
// kept nodes move by pointer within the list: none is copied or allocated anew.
void keep_nodes(NodeList& nodes, const std::vector<bool>& keep);

// Nodes in the list (or the node) and all of its subgraphs.
size_t count_nodes(const NodeList& nodes);
size_t count_nodes(const onnx::NodeProto& node);

}  // namespace shapeprop::transform
