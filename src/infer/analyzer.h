// The inter-procedural analysis: walks the main graph, and analyses each call of a
// model-local function in its CallContext, memoised. Results feed annotation and
// specialization.
//
// Facts live in vectors indexed by the ValueIds of ir::Body (one Body per graph, function
// and subgraph, built once per analysis and shared by every context of a function): a
// BodyFacts holds, for one walk of one body, the fact of each of its values, the context
// each call node calls, the branch each decided If takes, and the BodyFacts of the
// subgraphs the walk entered. Nothing on the walk's path hashes a value name.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/body.h"
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

// What one walk of one body found.
class BodyFacts {
 public:
  // Invalid: no valid execution defines the value: the node that computes it breaks its
  // type constraints, or computes it from such a value (it has no fact, and nothing
  // downstream of it gets one).
  enum class State : uint8_t { Undefined, Defined, Absent, Invalid };

  explicit BodyFacts(const ir::Body& body);
  const ir::Body& body() const { return *body_; }

  // The fact of a value of this body; nullptr where the walk did not define it (a value
  // after an error, an omitted input, a value no valid execution defines).
  const Fact* fact(ir::ValueId v) const {
    return v < values_.size() && states_[v] == State::Defined ? &values_[v] : nullptr;
  }
  State state(ir::ValueId v) const { return states_[v]; }
  // Per node (by index in the body): the context a call node calls, and the branch a
  // decided If takes (0 then, 1 else; -1 when undecided or not an If).
  const CallContext* call_of(size_t node) const { return call_of_[node].first; }
  // The facts of the memoised walk of the body that call calls (nullptr where call_of is).
  const BodyFacts* callee_of(size_t node) const { return call_of_[node].second; }
  int branch_of(size_t node) const { return branch_of_[node]; }
  // The facts of a subgraph this walk entered (nullptr if it did not: a branch never
  // taken, or a body only ONNX's own rules walked).
  const BodyFacts* subgraph(const onnx::GraphProto& g) const;
  // Each subgraph walk, in the order the walk entered them.
  const std::vector<std::unique_ptr<BodyFacts>>& subgraphs() const { return subgraphs_; }

  // Written by the analysis as it walks.
  void define(ir::ValueId v, Fact fact) {
    values_[v] = std::move(fact);
    states_[v] = State::Defined;
  }
  void mark_absent(ir::ValueId v) { states_[v] = State::Absent; }
  void mark_invalid(ir::ValueId v) { states_[v] = State::Invalid; }
  void set_call(size_t node, const CallContext* c, const BodyFacts* callee) { call_of_[node] = {c, callee}; }
  void set_branch(size_t node, int branch) { branch_of_[node] = static_cast<int8_t>(branch); }
  BodyFacts& add_subgraph(const ir::Body& body);
  // Whether ONNX's inference failed on a node of this body (reported as a warning). The
  // types the walk found around it would make a runtime that infers a subgraph at load
  // (ONNX Runtime, for an If's branches) fail there too, where the model given loads and
  // runs its other branch: annotate writes none inside such a subgraph.
  void note_inference_failed() { inference_failed_ = true; }
  bool inference_failed() const { return inference_failed_; }
  // A value a decided If's untaken branch reads, or one such a value is computed from,
  // where ONNX's inference fails on that branch given the facts around it
  // (Analyzer::Impl::withhold_dead_branch_reads): no run takes the branch, but ONNX's
  // checker infers it all the same, from the types written. Annotation writes no type for
  // the value.
  void withhold(ir::ValueId v) {
    if (withheld_.size() <= v) withheld_.resize(values_.size(), false);
    withheld_[v] = true;
  }
  bool withheld(ir::ValueId v) const { return v < withheld_.size() && withheld_[v]; }
  // The fact annotation writes for a value of this body: fact(v), unless withheld.
  const Fact* fact_to_write(ir::ValueId v) const { return withheld(v) ? nullptr : fact(v); }

 private:
  const ir::Body* body_;
  std::vector<Fact> values_;
  std::vector<State> states_;
  std::vector<std::pair<const CallContext*, const BodyFacts*>> call_of_;
  std::vector<int8_t> branch_of_;
  std::vector<std::unique_ptr<BodyFacts>> subgraphs_;
  bool inference_failed_ = false;
  std::vector<bool> withheld_;  // empty unless some value is withheld
};

// The result of analysing one body in one context.
struct Summary {
  explicit Summary(const ir::Body& body) : facts(body) {}
  std::vector<Fact> outputs;
  BodyFacts facts;
  // The contexts this body calls, once each, in first-call order.
  std::vector<const CallContext*> callees;
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
  // The decisions that relied on symbolic dims being at least 1, once per place.
  const std::vector<AssumptionUse>& assumptions() const;
  // The declarations taken as facts (DeclaredTypes::Use), once per place.
  const std::vector<DeclaredUse>& declared_uses() const;
  // The graph inputs whose initializer was read as their value (OverridableInitializers::Value).
  const std::vector<std::string>& initializer_values_read() const;
  // The dim_params declared in the main graph (for nullptr) or in function `f` that the
  // analysis found naming different sizes (in some call of `f`): annotation keeps none.
  const std::set<std::string>& false_dim_params(const onnx::FunctionProto* f) const;
  // Call graph and contexts, for the debug flag.
  std::string dump() const;
  // The Bodies the analysis indexed (for transforms that walk the same protos).
  ir::BodyIndex& bodies() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;

  void collect_live_contexts();
};

}  // namespace shapeprop::infer
