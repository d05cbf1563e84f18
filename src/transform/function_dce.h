// The module-level pieces the transform's stages share: function DCE (functions nothing
// reachable calls, opset imports no node uses, initializers nothing reads), finding and
// counting calls, and the small queries of a model the round and the inline stage ask.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "onnx/onnx_pb.h"
#include "shapeprop/function_id.h"
#include "shapeprop/transform_options.h"
#include "support/subgraphs.h"
#include "transform/fold_body.h"

namespace shapeprop::transform {

using onnx::FunctionProto;
using onnx::GraphProto;
using onnx::ModelProto;
using onnx::NodeProto;

std::string serialized(const google::protobuf::MessageLite& m);

size_t count_all_nodes(const ModelProto& m);

void collect_domains(const NodeList& nodes, std::set<std::string>& domains);

// Finds the calls among nodes (and their subgraphs) of a set of functions.
class CallFinder {
 public:
  explicit CallFinder(const std::set<FunctionId>& functions) : ids_(functions.begin(), functions.end()) {
    for (size_t k = 0; k < ids_.size(); ++k) {
      index_.emplace(FunctionId::view(ids_[k]), k);
      function_names_.insert(ids_[k].name);
      default_domain_ = default_domain_ || FunctionId::is_default_domain(ids_[k].domain);
    }
  }
  CallFinder(const CallFinder&) = delete;  // index_ and function_names_ view ids_' strings
  CallFinder& operator=(const CallFinder&) = delete;

  // Adds the functions `nodes` call to `called`, and counts the calls in `count`.
  void find(const NodeList& nodes, std::set<FunctionId>& called, size_t* count = nullptr) const {
    if (ids_.empty()) return;
    // Marked by index as found, and each added to the set once: a model calls a few
    // functions thousands of times.
    std::vector<char> hit(ids_.size(), 0);
    mark(nodes, hit, count);
    for (size_t k = 0; k < ids_.size(); ++k)
      if (hit[k]) called.insert(ids_[k]);
  }

 private:
  std::vector<FunctionId> ids_;  // sorted, as the set gave them
  // By id, looked up by a node's view: each id's place in ids_.
  std::unordered_map<FunctionId::View, size_t, FunctionId::Hash, FunctionId::Equal> index_;
  std::unordered_set<std::string_view> function_names_;  // views the ids' names
  bool default_domain_ = false;                          // a function is in ONNX's default domain

  void mark(const NodeList& nodes, std::vector<char>& hit, size_t* count) const {
    for (const auto& n : nodes) {
      // Most nodes are ONNX's ops, or ops no function is named after: told apart by their
      // domain, or without building an id.
      if ((default_domain_ || !FunctionId::is_default_domain(n.domain())) && function_names_.contains(n.op_type())) {
        if (auto it = index_.find(FunctionId::View::of(n)); it != index_.end()) {
          hit[it->second] = 1;
          if (count) ++*count;
        }
      }
      for_each_subgraph(n, [&](const GraphProto& g) { mark(g.node(), hit, count); });
    }
  }
};

std::set<FunctionId> function_ids(const ModelProto& m);

size_t count_calls(const ModelProto& m);

// Drops functions nothing reachable from the main graph calls, and opset imports no
// node uses (the default domain stays).
void remove_unused(ModelProto& m);

// Initializers nothing reads (graph inputs with a default stay: they are interface).
void remove_unused_initializers(GraphProto& g);

// The version of the default domain among `imports` (0 when absent).
int64_t onnx_opset(const google::protobuf::RepeatedPtrField<onnx::OperatorSetIdProto>& imports);

// The graph's inputs and outputs: names the rewrites keep.
ir::ValueNames interface_names(const GraphProto& g);

// Folded constants in the main graph become initializers, unless the model's IR version
// is below 4, where every initializer must also be a graph input: then they stay Constant
// nodes.
bool constants_may_be_initializers(const ModelProto& m);

// Whether --keep names the function (domain, name): a backend's, left as the model wrote it.
bool kept(const TransformOptions& options, const std::string& domain, const std::string& name);

}  // namespace shapeprop::transform
