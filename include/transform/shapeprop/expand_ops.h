// Lowering: calls of ONNX ops that ONNX defines as functions (Attention, RMSNormalization,
// LayerNormalization, ...) replaced by their bodies, and the model converted to another
// ai.onnx opset.
//
// Each call of an op to expand becomes a call of a model-local function in the domain
// kExpandedDomain that holds the op's body as the linked ONNX builds it: its fixed body
// (OpSchema::GetFunction) or, for a context-dependent one, the body its builder makes from
// the call's attributes and input types (OpSchema::BuildContextDependentFunction), at the
// opset the call's scope imports. Calls whose bodies are the same share one function. The
// transform (specialize) then specializes and folds each body for its call sites like any
// model-local function, and inlines it whatever the inline policy.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "onnx/onnx_pb.h"
#include "shapeprop/diagnostics.h"
#include "shapeprop/infer.h"

namespace shapeprop {

// The domain of the functions the expansion makes; the inline stage inlines them always.
inline constexpr const char* kExpandedDomain = "shapeprop.expanded";

struct ExpandRequest {
  std::set<std::string> ops;   // ai.onnx op types to expand (--expand-ops)
  bool all_functions = false;  // every ai.onnx op the linked ONNX has a function for
  // --target-opset: the ai.onnx opset of the result; ops it lacks are expanded too.
  std::optional<int64_t> target_opset;
  bool any() const { return !ops.empty() || all_functions || target_opset; }
};

// What the expansion did to one op type.
struct ExpandedOp {
  std::string op;         // as "Attention"
  size_t calls = 0;       // calls expanded
  size_t functions = 0;   // distinct bodies they took
  // The nodes the result holds that came from these bodies, by op type (`domain.op`
  // outside ai.onnx), once folded and inlined: count_expanded_nodes fills it.
  std::map<std::string, size_t> nodes;
};

// Replaces each call to expand (in the graph, its subgraphs and the model's functions,
// and in the bodies it brings, until none is left) by a call of its body as a model-local
// function. An op without a function in the linked ONNX, a body ONNX's builder refuses
// for the call's types, or an op the target opset lacks that has no function, is an
// error naming them all; the model is then unchanged. `options` analyse the model when a
// context-dependent body needs the call's input types.
Result<std::vector<ExpandedOp>> expand_ops(onnx::ModelProto& model, const ExpandRequest& request,
                                           const InferOptions& options);

// Counts, in `model` (the transformed result), the nodes that came from the expanded bodies.
void count_expanded_nodes(const onnx::ModelProto& model, std::vector<ExpandedOp>& expanded);

// Converts the main graph to ai.onnx opset `target` with ONNX's version converter; true
// when it changed the model. A model that still has functions, or an op the converter
// cannot convert, is an error naming it and why; the model is then unchanged.
Result<bool> convert_opset(onnx::ModelProto& model, int64_t target);

}  // namespace shapeprop
