// MutableBody: the top level of one body (the main graph, or a function in one context) as
// rewrites change it: its nodes in order, its values numbered (ValueId), each value's
// producer, readers and fact, and the edits (replace a value's uses, insert a node before
// another, erase one), each costing what it changes rather than a rescan.
//
// Names are resolved once, when the body is built; from then on a rewrite names values by
// id only, and the names in the node protos follow the edits (a name is for printing: the
// protos are what commit() gives back). New values get fresh names apart from every name
// of the body. Nodes inside subgraphs are never rewritten here (a subgraph is a body of
// its own: Round::rewrite_subgraphs); their reads of this level's values are uses like
// any other, so that replacing a value replaces it there too.
//
// Facts are given by place when the body is built (each node's outputs, each initializer
// of the main graph; by name only for what is defined outside the nodes: inputs, outer
// values) and kept by id; a rewrite keeps every surviving value's meaning, so they stay
// true. New values carry the fact they are given.
#pragma once

#include <boost/container/small_vector.hpp>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/body.h"
#include "ir/names.h"
#include "onnx/onnx_pb.h"
#include "shapeprop/fact.h"
#include "support/name_map.h"

namespace shapeprop::ir {

using NodeList = google::protobuf::RepeatedPtrField<onnx::NodeProto>;
// Names a body must keep (its inputs and outputs), viewing the protos' strings: a list,
// resolved to values once, when the body is built.
using ValueNames = std::vector<std::string_view>;

class MutableBody {
 public:
  using NodeId = uint32_t;
  static constexpr NodeId kNone = UINT32_MAX;
  // What is known of the values, asked once per value while the body is built; an empty
  // function (or nullptr) where nothing is known.
  struct FactSource {
    // Output `k` of the node at `index` in the list.
    std::function<const Fact*(size_t index, size_t k)> output;
    // The main graph's initializer at `index` (not a graph input), named `name`.
    std::function<const Fact*(size_t index, std::string_view name)> initializer;
    // A value no node of the list defines and no initializer holds: an input, an outer
    // value.
    std::function<const Fact*(std::string_view name)> outer;
  };

  // `nodes` is rewritten in place by commit(). `interface` are the names the body must keep
  // (its inputs and outputs); `main_graph`, when set, is the graph whose initializers are
  // this body's constants (where new constants go too); elsewhere constants are Constant
  // nodes.
  MutableBody(NodeList& nodes, const FactSource& facts, onnx::GraphProto* main_graph,
              const ValueNames& interface);
  // Names a new value must not take besides the body's own: those of the scopes around a
  // subgraph's nodes (ONNX's checker refuses a name a subgraph and an enclosing graph both
  // define). Set before the first edit; `names` must outlive the body.
  void reserve_names(const std::vector<std::string>* names) { reserved_ = names; }
  MutableBody(const MutableBody&) = delete;
  MutableBody& operator=(const MutableBody&) = delete;

  // ---- nodes: first(), then next(id) until kNone; erased nodes are skipped. A rewrite
  // may erase the node it stands on, and insert before it.
  NodeId first() const { return next_live(head_); }
  NodeId next(NodeId id) const { return next_live(nodes_[id].next); }
  bool erased(NodeId id) const { return nodes_[id].erased; }
  // The node's op, domain and attributes (its inputs and outputs: input(), output()).
  const onnx::NodeProto& node(NodeId id) const { return *nodes_[id].proto; }
  size_t num_inputs(NodeId id) const { return nodes_[id].inputs.size(); }
  size_t num_outputs(NodeId id) const { return nodes_[id].outputs.size(); }
  // kNoValue for an omitted optional input or an unnamed output.
  ValueId input(NodeId id, size_t k) const { return k < nodes_[id].inputs.size() ? nodes_[id].inputs[k] : kNoValue; }
  ValueId output(NodeId id, size_t k) const { return k < nodes_[id].outputs.size() ? nodes_[id].outputs[k] : kNoValue; }

  // Whether a node of op `op_type` (in any domain) may be in the body: one it was built
  // with or an edit added, erased since or not. A pass that rewrites only around certain
  // ops asks first (PassContext::may_hold), and costs nothing on a body without them.
  bool may_hold(std::string_view op_type) const { return ops_.contains(op_type); }
  // ---- values
  const Fact* fact(ValueId v) const { return v == kNoValue ? nullptr : values_[v].fact; }
  std::string_view name(ValueId v) const { return values_[v].name; }
  // The node at this level that defines `v` (kNone for an input, an initializer, an outer
  // value), and which of its outputs it is.
  NodeId producer(ValueId v, size_t* output = nullptr) const;
  // Readers of `v`: node inputs at this level and in subgraphs, subgraph outputs; a body
  // output counts as one more.
  size_t uses(ValueId v) const;
  bool is_interface(ValueId v) const { return v != kNoValue && values_[v].interface; }
  // The top-level nodes that read `v`, once per read (a subgraph's reads count for the
  // node holding it), in no particular order.
  std::vector<NodeId> readers(ValueId v) const;
  // Calls `fn(reader)` for each of readers(v) in turn until one returns false; false then.
  // Without the list: a pass that gives up at the first reader that does not fit costs
  // that much, not the number of readers (a weight tied across a thousand layers).
  template <class Fn>
  bool all_readers(ValueId v, Fn&& fn) const {
    if (v == kNoValue) return true;
    for (const Use& u : values_[v].uses)
      if (live(u, v) && !fn(u.owner)) return false;
    return true;
  }
  // Values defined before the first node (inputs, initializers) that some node still
  // reads, by id.
  std::vector<ValueId> inputs_read() const;
  // The main graph's initializers (not graph inputs) the body started with, in order.
  const std::vector<ValueId>& initializers() const { return initializers_; }
  // The initializer or Constant tensor that defines `v` (no copy; nullptr otherwise).
  const onnx::TensorProto* stored_constant(ValueId v) const;
  // The value of a constant: stored, or a fact that knows every element.
  std::optional<onnx::TensorProto> constant(ValueId v) const;
  // The main graph (for its initializers), or nullptr in a function body.
  const onnx::GraphProto* main_graph() const { return main_graph_; }

  // ---- edits (each marks the body changed)
  // Readers of `from` read `to` instead, and what no longer has a reader goes. False (and
  // nothing done) when `from` must keep its name.
  bool replace_all_uses(ValueId from, ValueId to);
  // The node's only output is the value `to`: its readers read `to`, or, where the output
  // keeps its name, the node becomes Identity(to). False when nothing changes.
  bool forward(NodeId id, ValueId to);
  // Whether forward(id, to) would change anything.
  bool can_forward(NodeId id, ValueId to) const;
  // The node's input k reads `v` (kNoValue: omitted).
  void set_input(NodeId id, size_t k, ValueId v);
  // A new value, named after `base` apart from every name of the body, with `fact`.
  ValueId new_value(std::string_view base, const Fact* fact = nullptr);
  // Inserts a node (its op, domain, attributes: the proto's own inputs and outputs are
  // replaced) reading `inputs` and writing `outputs` before `before` (kNone: at the end).
  // Its outputs are new values, or values whose producer the caller erases.
  NodeId insert_before(NodeId before, onnx::NodeProto node, const std::vector<ValueId>& inputs,
                       const std::vector<ValueId>& outputs);
  // `node` reading `inputs`, writing what `id` writes (or its first output only: the
  // others must have no reader), in the place of `id`.
  NodeId replace_node(NodeId id, onnx::NodeProto node, const std::vector<ValueId>& inputs,
                      bool only_first_output = false);
  // The node no longer writes its output k, which nothing reads and which is not an
  // interface name (an omitted optional output: "", trailing ones removed). False when
  // the output is read or kept, or there is none.
  bool drop_output(NodeId id, size_t k);
  // The node's only output becomes the constant `value`. In the main graph its readers
  // read an equal remembered initializer instead where there is one (and the output may
  // lose its name); otherwise it becomes an initializer under the same name, remembered,
  // unless a subgraph defines that name too (ONNX's scoping lets one, before this node;
  // an initializer's name is everywhere in scope): then one under a fresh name, which the
  // readers read (or the node becomes an Identity of). Elsewhere it becomes a Constant node,
  // not remembered: a node that a later round folds may stand before it, and an equal
  // result there must not read it.
  void make_constant(NodeId id, onnx::TensorProto value);
  // Erases the node, then every producer it leaves without readers.
  void erase(NodeId id);
  // y = Identity(x): readers of y read x instead, in order; then, where y keeps its name
  // (an interface value), x's producer at this level writes y itself when x may lose its
  // name, and x's other readers read y (unless a subgraph defines y's name itself).
  // What ONNX's optimizer calls
  // eliminate_identity, on use lists rather than a rescan per identity.
  void collapse_identities();
  // Erases every node none of whose outputs is read or kept, the last first (so that a
  // producer goes when its readers have gone). Nodes in subgraphs are not looked at.
  void remove_dead_nodes();
  // A value holding `value`: an equal constant made or remembered already, or a new one
  // (an initializer of the main graph, a Constant node first in a function) named after
  // `base`.
  ValueId add_constant(onnx::TensorProto value, std::string_view base);
  // The first remembered constant equal to the one `v` holds, or `v`, remembered then.
  // add_constant reuses the constants remembered.
  ValueId remember_constant(ValueId v);

  // The main graph's initializers (not graph inputs) that nothing reads and no interface
  // name keeps go from the graph, in one pass over the values' use lists (a subgraph's
  // read counts, by ONNX's scoping: a read of a name the subgraph defines itself does
  // not). The body's last edit: its initializers are the graph's no longer. Returns how
  // many went; nothing in a function body.
  size_t remove_unread_initializers();

  bool changed() const { return changed_; }
  // The nodes as commit() would write them, copied, the body unchanged (to print it
  // between passes).
  NodeList copy_nodes() const;
  // Writes the nodes back in order, without the erased ones and, where an edit set the
  // node's inputs, without omitted inputs at the end of them; true when anything changed.
  bool commit();

 private:
  // One place that reads a value: input `slot` of top-level node `owner`, or, from
  // kNested on, the read `slot - kNested` in a subgraph of `owner`. A use whose node is
  // erased, or whose place reads another value since, is stale and skipped.
  static constexpr uint32_t kNested = 1u << 31;
  // Most values have one or two readers and most nodes at most three inputs and one
  // output: kept inline, building the body allocates nothing for them (a heap vector per
  // node and value would be much of the cost of building it).
  template <class T, size_t N>
  using SmallVector = boost::container::small_vector<T, N>;
  struct Use {
    NodeId owner;
    uint32_t slot;
  };
  struct Value {
    std::string name;
    const Fact* fact = nullptr;
    NodeId producer = kNone;
    uint32_t output = 0;
    SmallVector<Use, 2> uses;
    size_t live_uses = 0;
    const onnx::TensorProto* initializer = nullptr;  // main graph, not a graph input
    bool interface = false;
    bool defined_before = false;  // an input, an initializer or an outer value
  };
  // A read in a subgraph of a node: the value, and the string in the subgraph's proto.
  struct NestedRead {
    ValueId value;
    std::string* place;
  };
  struct Node {
    onnx::NodeProto* proto;
    SmallVector<ValueId, 3> inputs;
    SmallVector<ValueId, 1> outputs;
    std::vector<NestedRead> nested;
    NodeId prev = kNone, next = kNone;
    bool erased = false;
    bool inputs_set = false;  // set_input() changed an input: trailing omitted ones go at commit()
  };

  NodeList& list_;
  onnx::GraphProto* main_graph_;
  // Values in blocks that never move (the name index views the values' names while they
  // are added). std::deque's indexing is a call where the compiler does not inline it,
  // which it stopped doing here: indexing this is two loads.
  class Values {
   public:
    Value& operator[](size_t i) { return blocks_[i >> kShift][i & kMask]; }
    const Value& operator[](size_t i) const { return blocks_[i >> kShift][i & kMask]; }
    size_t size() const { return size_; }
    Value& emplace_back() {
      if (size_ == blocks_.size() << kShift) blocks_.push_back(std::make_unique<Value[]>(size_t{1} << kShift));
      return (*this)[size_++];
    }
    template <class Fn>
    void for_each(Fn&& fn) {
      for (size_t i = 0; i < size_; ++i) fn((*this)[i]);
    }

   private:
    static constexpr size_t kShift = 8;
    static constexpr size_t kMask = (size_t{1} << kShift) - 1;
    std::vector<std::unique_ptr<Value[]>> blocks_;
    size_t size_ = 0;
  };
  Values values_;
  std::vector<Node> nodes_;
  NodeId head_ = kNone, tail_ = kNone;
  std::deque<onnx::NodeProto> added_;  // nodes the rewrites made
  std::deque<Fact> constant_facts_;    // facts of the constants they made
  // The constants stored so far, by tensor_sample_hash; each with its tensor_value_hash
  // once one was needed (another constant of the same sample hash came).
  struct KnownConstant {
    ValueId value;
    mutable std::optional<uint64_t> full_hash;
  };
  std::unordered_multimap<uint64_t, KnownConstant> constants_;
  // Every name of the body, for new_value(): gather_names(). Copies: the edits rewrite the
  // names that the nodes and their subgraphs read.
  std::optional<NameSet> names_;
  const std::vector<std::string>* reserved_ = nullptr;
  std::optional<NameCounts> subgraph_definitions_;  // names the subgraphs of the nodes define: defined_in_subgraph()
  std::vector<ValueId> initializers_;
  bool changed_ = false;

  NodeId next_live(NodeId id) const {
    while (id != kNone && nodes_[id].erased) id = nodes_[id].next;
    return id;
  }
  // The value a use reads now.
  ValueId read_by(const Use& u) const {
    const Node& n = nodes_[u.owner];
    return u.slot >= kNested ? n.nested[u.slot - kNested].value : n.inputs[u.slot];
  }
  bool live(const Use& u, ValueId v) const { return !nodes_[u.owner].erased && read_by(u) == v; }
  using NameIndex = NameMap;  // views the values' names
  ValueId resolve(std::string_view name, NameIndex& by_name);
  void index_uses(NodeId id, NameIndex* by_name);
  void index_nested_reads(NodeId id, NameIndex& by_name);
  void set_outputs(NodeId id);
  void gather_names();
  bool defined_in_subgraph(std::string_view name);
  void add_use(ValueId v, Use u);
  void forget_uses(NodeId id);
  void erase_if_dead(ValueId v);
  NodeId link_before(NodeId before, onnx::NodeProto* proto);
  // Every op a node of the body has had (may_hold), in storage of its own.
  void note_op(const onnx::NodeProto& n) {
    if (ops_.contains(n.op_type())) return;
    op_names_.push_back(n.op_type());
    ops_.insert(op_names_.back());
  }
  NameMap ops_;
  std::deque<std::string> op_names_;
  std::optional<ValueId> find_constant(const onnx::TensorProto& value, uint64_t sample_hash) const;
};

// A Constant node defining `name` as `value` (whose own name it drops).
onnx::NodeProto constant_node(const std::string& name, onnx::TensorProto value);

// The element type, dims and data of a tensor, not its name: equal keys are equal
// constants (the same values stored differently may have different keys).
std::string tensor_value_key(const onnx::TensorProto& t);
// Whether two tensors' tensor_value_key()s are equal, compared without building them.
bool same_tensor_value(const onnx::TensorProto& a, const onnx::TensorProto& b);
// A hash of what tensor_value_key() holds, computed without it.
uint64_t tensor_value_hash(const onnx::TensorProto& t);
// A hash of the type, dims and sizes of a tensor and of the ends of its data (the first
// and last 64 bytes of each field): equal tensors have equal ones, and it costs the same
// for a weight of a million elements as for a scalar. Where two differ only inside, a
// tensor_value_hash tells them apart.
uint64_t tensor_sample_hash(const onnx::TensorProto& t);

}  // namespace shapeprop::ir
