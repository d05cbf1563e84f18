// CallGraph: which model-local functions the main graph and each function call, and how
// often. Built once per model, before any analysis; it rejects recursion (ONNX forbids
// it, and every bottom-up pass relies on its absence) and gives the order in which
// functions can be analysed callee first.
//
// A call is any node whose FunctionId names a model-local function: in the main graph,
// in a function body, or in a subgraph (If/Loop/Scan attributes, to any depth) of either.
// A call inside a subgraph counts as a call by the graph or function that holds it.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "onnx/onnx_pb.h"
#include "shapeprop/diagnostics.h"
#include "shapeprop/function_id.h"

namespace shapeprop {

class CallGraph {
 public:
  // Where a caller is asked for, nullptr stands for the model's main graph.
  static constexpr const onnx::FunctionProto* kMainGraph = nullptr;

  // One edge seen from one end: the function at the other end, and how many nodes of
  // the caller (subgraphs included) call the callee.
  struct Call {
    const onnx::FunctionProto* function;  // kMainGraph for the main graph as caller
    std::size_t sites;
  };

  // Errors if a function is directly or indirectly recursive, whether or not the main
  // graph reaches it. When a model defines an id twice (a validation error, reported by
  // validate_structure) the first definition is the function; the others are ignored.
  // The graph points into `model`, which must outlive it and stay unchanged.
  static Result<CallGraph> build(const onnx::ModelProto& model);

  // The model-local function with this id, or nullptr.
  const onnx::FunctionProto* find(const FunctionId& id) const;
  // The one a node calls, or nullptr (no id is built).
  const onnx::FunctionProto* find(const onnx::NodeProto& call) const;

  // Functions the main graph reaches, callees before callers; among functions whose
  // callees are all listed, the smallest FunctionId comes first.
  std::vector<const onnx::FunctionProto*> bottom_up() const;

  // Functions the main graph does not reach, in FunctionId order.
  std::vector<const onnx::FunctionProto*> unreachable() const;

  // Number of model-local functions (first definitions only).
  std::size_t size() const;

  // Total calls of model-local functions, from the main graph and from every function,
  // reachable or not.
  std::size_t call_sites() const;

  // The callees of `caller` (kMainGraph for the main graph), in FunctionId order.
  std::vector<Call> callees(const onnx::FunctionProto* caller) const;

  // The callers of `callee`, the main graph first, then in FunctionId order.
  std::vector<Call> callers(const onnx::FunctionProto& callee) const;

  // A deterministic dump (for a debug flag and golden tests):
  //   call graph: 4 functions, 3 reachable, 5 call sites
  //     graph 'main_graph' -> pkg.aten_clamp_min (x1), pkg.aten_t (x2)
  //     pkg.aten_clamp_min -> pkg.common.IsScalar (x1)
  //     pkg.aten_t -> pkg.common.Rank (x1)
  //     pkg.common.IsScalar -> (none)
  //     ...
  //     unreachable: pkg.unused
  // The main graph first, then every function in FunctionId order, callees in FunctionId order.
  std::string print() const;

 private:
  struct Impl;  // the Boost.Graph adjacency list and the tables derived from it
  explicit CallGraph(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<const Impl> impl_;  // immutable once built, so copies may share it
};

}  // namespace shapeprop
