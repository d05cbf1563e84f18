// Body: one graph or function body with its values numbered.
//
// Every definition (a formal input, an initializer, a node output) gets a ValueId, and
// every node its inputs as Operands (a ValueId in this body or in an enclosing one, which
// a subgraph may read) and its outputs as ValueIds. Names are resolved once, when the body
// is indexed, so that an analysis keeps its facts in vectors indexed by ValueId instead of
// string-keyed maps, and a rewrite finds the readers of a value through its use list
// instead of rescanning the body. A Body points into the proto it indexes, which must stay
// unchanged while the Body is in use. Bodies are built lazily, once per proto, by a
// BodyIndex, and shared by every analysis of that proto.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "onnx/onnx_pb.h"
#include "shapeprop/call_graph.h"
#include "shapeprop/hash_combine.h"
#include "support/name_map.h"

namespace shapeprop::ir {

using ValueId = uint32_t;
inline constexpr ValueId kNoValue = UINT32_MAX;

// A name read by a node: the value `id` of the body `depth` levels out (0 is this body).
// An omitted optional input ("") has id kNoValue; a name defined nowhere in reach has
// depth kUnresolved.
struct Operand {
  static constexpr uint32_t kUnresolved = UINT32_MAX;
  uint32_t depth = 0;
  ValueId id = kNoValue;

  bool omitted() const { return id == kNoValue && depth != kUnresolved; }
  bool resolved() const { return depth != kUnresolved; }
};

// How the analysis treats a node, decided once per node.
enum class NodeKind : uint8_t { Op, Call, If, Loop, Scan };

class Body {
 public:
  struct Node {
    const onnx::NodeProto* proto = nullptr;
    NodeKind kind = NodeKind::Op;
    const onnx::FunctionProto* callee = nullptr;  // for NodeKind::Call
    uint32_t first_input = 0, first_output = 0;   // into operands_ and outputs_
  };

  // Indexes a function body, or a graph (the main graph, or a subgraph whose enclosing
  // body is `parent`). `calls` tells which nodes call model-local functions (nullptr: none
  // are told apart from ops).
  Body(const onnx::FunctionProto& function, const CallGraph* calls);
  Body(const onnx::GraphProto& graph, const Body* parent, const CallGraph* calls);

  const Body* parent() const { return parent_; }
  const onnx::GraphProto* graph() const { return graph_; }  // nullptr for a function body

  size_t num_values() const { return names_.size(); }
  std::string_view name(ValueId v) const { return names_[v]; }
  // The value a name denotes at the end of this body (its last definition), or kNoValue.
  ValueId find(std::string_view name) const;

  std::span<const ValueId> inputs() const { return inputs_; }              // formal/graph inputs
  std::span<const ValueId> initializers() const { return initializers_; }  // not also inputs; in proto order
  std::span<const Operand> outputs() const { return results_; }            // graph/function outputs

  std::span<const Node> nodes() const { return nodes_; }
  std::span<const Operand> inputs_of(const Node& n) const {
    return {operands_.data() + n.first_input, static_cast<size_t>(n.proto->input_size())};
  }
  std::span<const ValueId> outputs_of(const Node& n) const {
    return {outputs_.data() + n.first_output, static_cast<size_t>(n.proto->output_size())};
  }
  size_t index_of(const Node& n) const { return static_cast<size_t>(&n - nodes_.data()); }

 private:
  const Body* parent_ = nullptr;
  const onnx::GraphProto* graph_ = nullptr;
  std::vector<std::string_view> names_;
  NameMap by_name_;
  std::vector<ValueId> inputs_;
  std::vector<ValueId> initializers_;
  std::vector<Operand> results_;
  std::vector<Node> nodes_;
  std::vector<Operand> operands_;
  std::vector<ValueId> outputs_;

  ValueId define(std::string_view name);
  Operand resolve(std::string_view name) const;
  void index_nodes(const google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes, const CallGraph* calls);
};

// The Bodies of one model, built on first request and kept for the index's lifetime.
class BodyIndex {
 public:
  explicit BodyIndex(const CallGraph& calls) : calls_(calls) {}
  const Body& of(const onnx::FunctionProto& function);
  const Body& of(const onnx::GraphProto& graph, const Body* parent);

 private:
  const CallGraph& calls_;
  std::unordered_map<const void*, std::unique_ptr<Body>> functions_;
  struct PairHash {
    size_t operator()(const std::pair<const void*, const void*>& p) const {
      size_t h = std::hash<const void*>()(p.first);
      hash_combine(h, std::hash<const void*>()(p.second));
      return h;
    }
  };
  std::unordered_map<std::pair<const void*, const void*>, std::unique_ptr<Body>, PairHash> graphs_;
};

}  // namespace shapeprop::ir
