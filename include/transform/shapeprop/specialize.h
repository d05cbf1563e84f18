// Specialize, fold and inline: rewrite the model so that what the inferred facts decide
// is gone (rank conditionals, CastLikes, shape arithmetic), keeping function boundaries
// (one folded copy per distinct context, identical copies shared) or not (inlining).
#pragma once

#include <string>
#include <vector>

#include "onnx/onnx_pb.h"
#include "shapeprop/call_graph.h"
#include "shapeprop/diagnostics.h"
#include "shapeprop/infer.h"
#include "shapeprop/passes.h"
#include "shapeprop/transform_options.h"

namespace shapeprop {

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
  PassTimes pass_times;           // time per pass, the rounds and bodies added up
  // The rewrites that hold only because symbolic dims are at least 1, one line each
  // ("graph 'main': Reshape 'view': ..."), in the order they were made.
  std::vector<std::string> rewrites_assuming_positive_dims;
  // The ONNX ops expanded (TransformOptions::expand), by op type, in first-met order.
  std::vector<ExpandedOp> expanded;
  int64_t converted_from_opset = 0;  // the ai.onnx opset --target-opset converted from, else 0
};

// Specializes every reached function per distinct context, folds what the facts decide
// in the main graph and every body, removes dead code (nodes, initializers, functions,
// opset imports), inlines by policy, and annotates the result. Deterministic: the same
// input gives the same output, and a second run changes nothing. With options.expand,
// the ONNX ops it names are first made calls of their bodies (expand_ops), which are
// inlined whatever the policy, and the result is then converted to its target opset
// (convert_opset) and, when that changed it, transformed once more at that opset.
Result<TransformResult> specialize(onnx::ModelProto& model, const TransformOptions& options);

// The same, for a model validation passed (validate_model) and that has not changed since
// but for declared types: `calls` is the call graph it built (validation checked the
// model's depths, which are not measured again), and the first round's analysis reads it.
Result<TransformResult> specialize(onnx::ModelProto& model, const TransformOptions& options, CallGraph calls);

// The passes --mode specialize (InlinePolicy::None) and --mode inline run, in order: one
// round of them is repeated until it changes nothing.
std::vector<Pass> default_pipeline(InlinePolicy policy);

// Every counter of every pass, as --debug-analysis prints them: a line of the module
// passes and fold ("passes: specialize (specializations 2, contexts shared 1), fold (Ifs
// folded 3, ...), ..."), then one of the rewrites ("rewrites: casts removed 0, ...").
std::string counter_lines(const TransformStats& stats);

// "3 Ifs folded, 2 CastLikes folded, 14 nodes removed (40 -> 26), functions 5 -> 3,
// 3 specializations (1 shared), 4 calls inlined"
std::string summary_line(const TransformStats& stats);

}  // namespace shapeprop
