// The inter-procedural analysis: walks the main graph, and analyses each call of a
// model-local function in its CallContext, memoised. Results feed annotation (here) and
// specialization (later).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "onnx/onnx_pb.h"
#include "shapeprop/call_graph.h"
#include "shapeprop/diagnostics.h"
#include "shapeprop/fact.h"
#include "shapeprop/function_id.h"
#include "shapeprop/infer.h"

namespace shapeprop::infer {

// A function id plus the facts of its inputs and its attribute values, canonicalised so
// that equal contexts hash equal: attributes sorted by name, defaults applied, absent
// optional inputs marked.
struct CallContext {
  FunctionId function;
  std::vector<Fact> inputs;
  std::vector<bool> present;                      // false for an omitted optional input
  std::vector<onnx::AttributeProto> attributes;   // sorted by name
  std::string attribute_key;                      // their deterministic serialization
  size_t hash_value = 0;

  bool operator==(const CallContext& o) const {
    return hash_value == o.hash_value && function == o.function && present == o.present &&
           attribute_key == o.attribute_key && inputs == o.inputs;
  }
  // "(float[7], float) <axis=1>"
  std::string str() const;
};

struct CallContextHash {
  size_t operator()(const CallContext& c) const { return c.hash_value; }
};

// The result of analysing one body in one context.
struct Summary {
  std::vector<Fact> outputs;
  // Every value computed in the body (inputs, node outputs, values inside subgraphs),
  // where the analysis reached it: not the values of a branch that is never taken.
  std::unordered_map<std::string, Fact> values;
  // The same for the values a subgraph defines, per subgraph: sibling subgraphs may
  // reuse a name, which `values` (one namespace, as FunctionProto.value_info is) joins.
  std::unordered_map<const onnx::GraphProto*, std::unordered_map<std::string, Fact>> subgraph_values;
  // The contexts this body calls, once each, in first-call order.
  std::vector<const CallContext*> callees;
  // Per call node, the context it calls; per If node, the branch taken (0 then, 1 else)
  // when the condition is decided.
  std::unordered_map<const onnx::NodeProto*, const CallContext*> call_of;
  std::unordered_map<const onnx::NodeProto*, int> branch_of;
};

class Analyzer {
 public:
  Analyzer(const onnx::ModelProto& model, const CallGraph& calls, const InferOptions& options);
  ~Analyzer();

  // Analyses the main graph (and, through it, every reached function).
  void run();

  const Summary& graph() const;
  // Each reached function with its live contexts (those the final analysis of the main
  // graph reaches), in the call graph's bottom-up order; contexts in first-use order.
  using LiveContexts = std::vector<std::pair<const onnx::FunctionProto*, std::vector<const CallContext*>>>;
  const LiveContexts& live_contexts() const;
  const Summary& summary(const CallContext& context) const;
  size_t body_analyses() const;
  size_t live_call_sites() const;
  Diagnostics take_diagnostics();
  // Call graph and contexts, for the debug flag.
  std::string dump() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;

  void collect_live_contexts();
};

}  // namespace shapeprop::infer
