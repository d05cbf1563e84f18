// Specialize, fold and inline: rewrite the model so that what the inferred facts decide
// is gone (rank conditionals, CastLikes, shape arithmetic), keeping function boundaries
// (one folded copy per distinct context, identical copies shared) or not (inlining).
#pragma once

#include <cstddef>
#include <functional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "onnx/onnx_pb.h"
#include "shapeprop/diagnostics.h"
#include "shapeprop/infer.h"

namespace shapeprop {

enum class InlinePolicy {
  None,   // keep every (specialized) function
  All,    // a flat graph, for backends such as TensorRT
  Small,  // only bodies of at most TransformOptions::small_limit nodes after folding
};

// How specializations of one function are told apart.
enum class Naming {
  Copies,     // renamed copies: f__0, f__1, ... (one specialization keeps f's name)
  Overloads,  // IR-10 overloads of f: (domain, f, "__0"), ... for tools that look functions up by name
};

struct TransformOptions {
  InferOptions infer;
  InlinePolicy inline_policy = InlinePolicy::None;
  size_t small_limit = 8;
  Naming naming = Naming::Copies;
  // Functions, by (domain, name), that a backend claims (--keep): their calls stay as the
  // model wrote them, attributes included, through every inlining policy, and their bodies
  // are not specialized (a plugin registered under the name takes the call's attributes).
  std::set<std::pair<std::string, std::string>> keep;
  // When set, models the transform is done with (each round's input, and the caller's
  // model as it was) are handed here rather than destroyed. A process about to exit can
  // keep them to the end, as clang's -disable-free keeps its ASTs: freeing a large model
  // message by message is a noticeable part of a run (onnx-infer-shapes does this).
  std::function<void(onnx::ModelProto&&)> retire;
};

struct TransformStats {
  size_t ifs_folded = 0;        // If nodes replaced by their taken branch
  size_t castlikes_folded = 0;  // CastLike nodes that became Cast or disappeared
  size_t castlikes_to_cast = 0;    // of those: became Cast
  size_t castlikes_removed = 0;    // of those: the input had the type already (the rest became constants)
  size_t constants_folded = 0;  // nodes replaced by the constants they compute
  size_t identities_folded = 0;  // nodes giving their input back (Expand/Reshape to its shape, no-op reductions)
  size_t nodes_before = 0;      // nodes in the graph, functions and subgraphs
  size_t nodes_after = 0;
  size_t functions_before = 0;
  size_t functions_after = 0;
  size_t specializations = 0;   // specialized functions in the output (of functions called in several contexts)
  size_t shared = 0;            // contexts beyond the first that a specialization serves (equal or identical bodies)
  size_t calls_inlined = 0;     // function calls replaced by bodies
  size_t calls_kept = 0;        // calls that inlining left (policy, or opsets that differ)

  // Rewrites the facts justify after folding (src/transform/rewriter.h), one counter per
  // kind; rewrite_kinds() names them for reports.
  size_t casts_removed = 0;          // Cast to the type its input has; Cast of a widening integral Cast
  size_t subexpressions_merged = 0;  // nodes equal to an earlier one (op, attributes, inputs)
  size_t equal_values_merged = 0;    // values the facts prove equal to an earlier one (shape values)
  size_t constants_shared = 0;       // initializers equal to an earlier one
  size_t shape_inputs_folded = 0;    // Reshape/Expand shape inputs made constants (0, -1 and 1 entries)
  size_t sequence_patterns = 0;      // SplitToSequence read by SequenceAt -> Split; SequenceConstruct -> Concat or its tensor
  size_t gemms_formed = 0;           // MatMul (+ Add) -> Gemm; Transpose of a Gemm input -> transA/transB
  size_t transposes_folded = 0;      // Transpose of Transpose, identity permutations
  size_t squeezes_folded = 0;        // Squeeze of Unsqueeze (and back) of the same axes
  size_t reshapes_folded = 0;        // Reshape of Reshape
  size_t concats_folded = 0;         // Concat of one input
  size_t wheres_folded = 0;          // Where with a constant condition
  size_t expands_folded = 0;         // Expand/Tile by ones, Slice of everything
  size_t neutral_ops_removed = 0;    // Mul/Div by one, Dropout in inference
  size_t constants_computed = 0;     // nodes of constant inputs computed (results of at most 1024 elements)
};

// Each rewrite counter of TransformStats with its name ("casts removed"), in a fixed order.
std::vector<std::pair<const char*, size_t>> rewrite_kinds(const TransformStats& stats);

struct TransformResult {
  TransformStats stats;
  Diagnostics diagnostics;
  InferResult annotation;  // the final annotation of the rewritten model
  // The input's reached functions, their contexts and the specialization serving each
  // (InferOptions::describe_contexts).
  std::vector<FunctionContexts> functions;
  // What relied on symbolic dims >= 1, in any round and in the final annotation.
  std::vector<AssumptionUse> assumptions;
  std::vector<PhaseTime> phases;  // time per phase, the rounds added up
  // The rewrites that hold only because symbolic dims are at least 1, one line each
  // ("graph 'main': Reshape 'view': ..."), in the order they were made.
  std::vector<std::string> rewrites_assuming_positive_dims;
};

// Specializes every reached function per distinct context, folds what the facts decide
// in the main graph and every body, removes dead code (nodes, initializers, functions,
// opset imports), inlines by policy, and annotates the result. Deterministic: the same
// input gives the same output, and a second run changes nothing.
Result<TransformResult> specialize(onnx::ModelProto& model, const TransformOptions& options);

// "3 Ifs folded, 2 CastLikes folded, 14 nodes removed (40 -> 26), functions 5 -> 3,
// 3 specializations (1 shared), 4 calls inlined"
std::string summary_line(const TransformStats& stats);

}  // namespace shapeprop
