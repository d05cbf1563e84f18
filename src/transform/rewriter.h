// BodyRewriter: the top level of one body (the main graph, or a function in one context)
// as the rewrite passes see it after folding: its nodes in order, each value's producer,
// readers and fact by name, and the edits the passes make (replace a value's uses, insert
// a node before another, erase one), each costing what it changes rather than a rescan.
//
// A rewrite keeps every surviving name's value, so the facts folding recorded by name
// stay true while the passes run; new values are constants (whose facts the rewriter
// keeps) or take the name of the value they replace. Nodes inside subgraphs are never
// rewritten; their reads of this level's values are use-list entries like any other, so
// that replacing a value replaces it there too.
//
// In a dry run nothing may change: a pass reports the first rewrite it finds and stops,
// so that a round can tell that it would give its input back.
#pragma once

#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "fold_body.h"
#include "shapeprop/fact.h"

namespace shapeprop::transform {

struct RewriteOptions {
  // Symbolic dims are at least 1 (InferOptions::assume_positive_dims).
  bool assume_positive_dims = true;
  // Tell whether some rewrite applies, and change nothing.
  bool dry = false;
  // The version of the default ONNX domain where the body stands (what new nodes may use).
  int64_t onnx_opset = 0;
  // Where rewrites that rely on the assumption say so (--debug-analysis), each line
  // starting with `where` (the body); may be null.
  std::vector<std::string>* notes = nullptr;
  std::string where;
};

class BodyRewriter {
 public:
  using NodeId = uint32_t;
  static constexpr NodeId kEnd = UINT32_MAX;

  // `protected_names` keep their names (the body's inputs and outputs); `target` says where
  // constants go (initializers of the main graph, Constant nodes elsewhere). In a dry run
  // `nodes` is only read.
  BodyRewriter(NodeList& nodes, const FactsByName& facts, const BodyTarget& target,
               const std::unordered_set<std::string>& protected_names, const RewriteOptions& options,
               TransformStats& stats);

  bool dry() const { return options_.dry; }
  // Offers each live node, in order, to `rewrite(id)`, which says whether it rewrote the
  // node (in a dry run: whether it would). True when one did; a dry run stops at the first.
  template <class Fn>
  bool rewrite_each(Fn&& rewrite) {
    bool changed = false;
    for (NodeId id = first(); id != kEnd; id = next(id)) {
      if (!rewrite(id)) continue;
      if (dry()) return true;
      changed = true;
    }
    return changed;
  }
  const RewriteOptions& options() const { return options_; }
  TransformStats& stats() { return stats_; }
  // The main graph (for its initializers), or nullptr in a function body.
  const onnx::GraphProto* main_graph() const { return target_.main_graph; }
  // Each value defined before the first node (an input, an initializer) that some node
  // still reads, with its fact; in no particular order.
  template <class Fn>
  void for_each_input(Fn&& fn) const {
    for (const auto& [name, v] : values_) {
      if (v.producer != kEnd || v.live_reads == 0) continue;
      if (const Fact* f = fact(name)) fn(name, f);
    }
  }

  // Walking the nodes in order: first(), then next(id) until kEnd; erased nodes are
  // skipped. A pass may erase the node it stands on, and insert before it.
  NodeId first() const { return next_live(head_); }
  NodeId next(NodeId id) const { return next_live(next_[id]); }
  onnx::NodeProto& node(NodeId id) { return *nodes_[id]; }
  bool erased(NodeId id) const { return erased_[id]; }

  // What is known of a value at this level.
  const Fact* fact(const std::string& name) const;
  // The node at this level that defines `name` (kEnd for an input, an initializer, an
  // outer value), and which of its outputs it is.
  NodeId producer(const std::string& name, int* output = nullptr) const;
  // Readers of `name`: node inputs at this level and in subgraphs, subgraph outputs; a
  // body output counts as one more.
  size_t uses(const std::string& name) const;
  bool is_protected(const std::string& name) const { return protected_.count(name) > 0; }
  // The top-level nodes that read `name`, once per read (a subgraph's reads count for the
  // node holding it), in no particular order.
  std::vector<NodeId> readers(const std::string& name) const;
  // The value of a constant: an initializer of the main graph that is not a graph input,
  // a Constant node's tensor, or a fact that knows every element.
  std::optional<onnx::TensorProto> constant(const std::string& name) const;
  // The initializer or Constant tensor itself (no copy; nullptr otherwise).
  const onnx::TensorProto* stored_constant(const std::string& name) const;

  // Edits. Readers of `from` read `to` instead, and what no longer has a reader goes.
  // False (and nothing done) when `from` must keep its name.
  bool replace_value(const std::string& from, const std::string& to);
  // The node's only output is the value `to`: its readers read `to`, or, where the output
  // keeps its name, the node becomes Identity(to). False when nothing changes.
  bool forward(NodeId id, const std::string& to);
  // The node's input k reads `name`.
  void set_input(NodeId id, int k, const std::string& name);
  // Inserts `node` before `before` and returns its id. Its outputs are new names, or names
  // whose producer the caller erases (replace_node does both).
  NodeId insert_before(NodeId before, onnx::NodeProto node);
  // `node` (writing the same outputs) in the place of `id`.
  NodeId replace_node(NodeId id, onnx::NodeProto node);
  // The node's only output becomes the constant `value`, under the same name.
  void make_constant(NodeId id, onnx::TensorProto value);
  // Erases the node, then every producer it leaves without readers.
  void erase(NodeId id);
  // A name for a constant with the value `value`, defined before `before`: an equal
  // constant this rewriter made already, or a new one (an initializer in the main graph, a
  // Constant node elsewhere) named after `base`.
  std::string add_constant(onnx::TensorProto value, NodeId before, const std::string& base);
  // The constant `name` (an initializer or a Constant node) holds, under the name of the
  // first constant of that value remembered, or `name`, which is then remembered.
  // add_constant reuses the constants remembered.
  std::string remember_constant(const std::string& name);
  // A name no value of the body has.
  std::string fresh(const std::string& base);
  // Says that a rewrite holds only because symbolic dims are at least 1.
  void note_assumption(const std::string& what);

  // Writes the nodes back in order, without the erased ones; true when anything changed.
  bool commit();

 private:
  // One place that reads a value, and the top-level node it belongs to. A place whose
  // node is erased, or which reads another name since, is stale and skipped.
  struct Read {
    std::string* place;
    NodeId owner;
  };
  struct Value {
    const Fact* fact = nullptr;  // of a constant made here; others' are in facts_
    NodeId producer = kEnd;
    int output = 0;
    std::vector<Read> reads;
    size_t live_reads = 0;
    const onnx::TensorProto* initializer = nullptr;  // main graph, not a graph input
    // facts_'s answer for the name, kept once asked: the passes ask about each name
    // several times, and facts_ answers through two name lookups of its own.
    mutable const Fact* analysed = nullptr;
    mutable bool asked = false;
  };

  NodeList& list_;
  const FactsByName& facts_;
  const BodyTarget& target_;
  const std::unordered_set<std::string>& protected_;
  RewriteOptions options_;
  TransformStats& stats_;
  std::unordered_map<std::string, Value> values_;
  std::vector<onnx::NodeProto*> nodes_;
  std::vector<bool> erased_;
  std::vector<NodeId> next_, prev_;
  NodeId head_ = kEnd;
  std::deque<onnx::NodeProto> added_;  // nodes the passes made
  std::deque<Fact> constant_facts_;    // facts of the constants they made
  std::unordered_multimap<uint64_t, std::string> constants_;  // tensor_value_hash -> name
  std::optional<std::unordered_set<std::string>> names_;  // every name, for fresh()
  bool changed_ = false;

  NodeId next_live(NodeId id) const {
    while (id != kEnd && erased_[id]) id = next_[id];
    return id;
  }
  Value& value(const std::string& name) { return values_[name]; }
  const Value* find(const std::string& name) const {
    auto it = values_.find(name);
    return it == values_.end() ? nullptr : &it->second;
  }
  void index_reads(NodeId id);
  void forget_reads(onnx::NodeProto& n);
  void erase_if_dead(const std::string& name);
  std::optional<std::string> find_constant(const onnx::TensorProto& value, uint64_t hash) const;
};

// The element type, dims and data of a tensor, not its name: equal keys are equal
// constants (the same values stored differently may have different keys).
std::string tensor_value_key(const onnx::TensorProto& t);
// A hash of what tensor_value_key() holds, computed without it.
uint64_t tensor_value_hash(const onnx::TensorProto& t);

// The rewrite passes, each in its own file. Each walks the body once and returns whether
// it changed anything (in a dry run: whether it would).
bool remove_redundant_casts(BodyRewriter& body);       // cast_elim.cc
bool merge_common_subexpressions(BodyRewriter& body);  // cse.cc
bool share_equal_initializers(BodyRewriter& body);     // cse.cc (once per body)
bool simplify_shape_inputs(BodyRewriter& body);        // shape_glue.cc
bool rewrite_sequences_and_splits(BodyRewriter& body); // split_patterns.cc
bool form_gemms(BodyRewriter& body);                   // gemm.cc
bool apply_peepholes(BodyRewriter& body);              // peepholes.cc
bool fold_small_constants(BodyRewriter& body);         // const_fold.cc

// Runs the passes over the top level of `nodes` until none changes anything (or, in a dry
// run, until one would). True when something changed (would change).
bool rewrite_body(NodeList& nodes, const FactsByName& facts, const BodyTarget& target,
                  const std::unordered_set<std::string>& protected_names, const RewriteOptions& options,
                  TransformStats& stats);

}  // namespace shapeprop::transform
