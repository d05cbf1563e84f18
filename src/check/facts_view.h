// What shapeprop's analysis proves, per calling context, as the checker and the schema
// registry read it. They read the analyzer through this adapter and nothing else, so
// that a change of the analyzer's data layout is mended here alone.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "onnx/onnx_pb.h"
#include "shapeprop/call_graph.h"
#include "shapeprop/diagnostics.h"
#include "shapeprop/fact.h"
#include "shapeprop/infer.h"

namespace shapeprop::check {

class FactsView {
 public:
  // One analysed body in one calling context: the main graph, or a function called with
  // particular input facts and attribute values.
  struct Context;

  // Runs the analysis of `model`; `model` and `calls` must outlive the view unchanged.
  FactsView(const onnx::ModelProto& model, const CallGraph& calls, const InferOptions& options);
  ~FactsView();
  FactsView(const FactsView&) = delete;
  FactsView& operator=(const FactsView&) = delete;

  const Context& main() const;

  // The live contexts of `f` (those the main graph reaches), in first-use order; empty
  // when the main graph never calls it.
  const std::vector<const Context*>& contexts_of(const onnx::FunctionProto& f) const;

  // The fact of value `name` in the body of `c` (in any of its subgraphs, joined over
  // sibling subgraphs that reuse the name), or in one subgraph of it; nullptr where the
  // analysis never reached the value (a branch not taken, an omitted input).
  const Fact* fact(const Context& c, const std::string& name) const;
  const Fact* fact(const Context& c, const onnx::GraphProto& subgraph, const std::string& name) const;

  // The context that `call`, a node of the body of `c`, calls; nullptr when it calls no
  // model-local function or the analysis never reached it.
  const Context* callee(const Context& c, const onnx::NodeProto& call) const;

  // The branch an If node of the body of `c` takes in that context (0 then, 1 else), when
  // the context decides its condition.
  std::optional<int> taken_branch(const Context& c, const onnx::NodeProto& if_node) const;

  // The facts of the body's outputs.
  const std::vector<Fact>& outputs(const Context& c) const;

  // The facts the context gives the function's inputs and attributes, "(float[7]) <axis=1>";
  // "" for the main graph.
  std::string describe(const Context& c) const;

  // What the analysis reported (errors in strict mode, warnings otherwise).
  Diagnostics take_diagnostics();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace shapeprop::check
