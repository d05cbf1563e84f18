// Outcomes of op nodes answered by a schema's inference function within one analysis,
// kept per what decides them, so that a node like one analysed before (the same op in the
// next layer of a model) takes the outcome without running ONNX's inference function and
// our folding again (Analyzer::Impl::call_op).
//
// What decides an op node's outcome: its schema, the opset version in force, its output
// count, its input facts and its attributes (references resolved). ONNX's inference
// functions read nothing else of the node but its display name, which only their error
// messages spell; the folding rules (src/eval) read these alone. The outcome is the output
// facts and the messages the node reported, which a later node replays at its own place.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "onnx/defs/schema.h"
#include "shapeprop/fact.h"

namespace shapeprop::infer {

class OpMemo {
 public:
  struct Outcome {
    std::vector<Fact> outputs;
    std::vector<std::string> reports;   // the soft reports the node made, in order
    bool relied_on_symbol_min = false;  // its folding relied on assume_positive_dims
    std::vector<std::string> conditions;  // and on these (eval::FoldInput::conditions)
  };

  // A node's key; its input facts are viewed, not copied, until keep() (the caller's list
  // of them too: it must outlive the key).
  struct Key {
    const onnx::OpSchema* schema = nullptr;
    int version = 0;
    size_t num_outputs = 0;
    std::span<const Fact* const> inputs;  // nullptr where an optional input is omitted
    std::string attributes;           // each attribute encoded (op_memo.cc: append_attribute), in order
    size_t hash = 0;
  };

  // The node's key, or nullopt when its outcome is not to be kept: nodes with graph
  // attributes (their outcome comes from walking the subgraph in the caller's frame) and
  // inputs of non-tensor types.
  static std::optional<Key> key(const onnx::OpSchema& schema, int version, size_t num_outputs,
                                const std::vector<const Fact*>& inputs,
                                const std::vector<const onnx::AttributeProto*>& attributes);
  // The key views `inputs`: a temporary list would be gone before the key is used.
  static std::optional<Key> key(const onnx::OpSchema&, int, size_t, std::vector<const Fact*>&&,
                                const std::vector<const onnx::AttributeProto*>&) = delete;

  const Outcome* find(const Key& key) const;
  void keep(const Key& key, Outcome outcome);

 private:
  struct Entry {
    const onnx::OpSchema* schema;
    int version;
    size_t num_outputs;
    std::vector<std::optional<Fact>> inputs;
    std::string attributes;
    Outcome outcome;
    bool matches(const Key& key) const;
  };
  std::unordered_map<size_t, std::vector<Entry>> entries_;  // by Key::hash
};

}  // namespace shapeprop::infer
