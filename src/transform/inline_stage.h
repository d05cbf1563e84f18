// The inline stage: calls replaced by their bodies as the policy decides (ONNX's
// inliner), after the opsets of caller and callee are reconciled, then the folding the
// inlined graph allows at once.
#pragma once

#include "onnx/onnx_pb.h"
#include "shapeprop/diagnostics.h"
#include "shapeprop/specialize.h"

namespace shapeprop::transform {

// Runs the inline pass on `m` (the transform's own copy); true when it inlined calls.
// `round_follows`: where it inlines calls, a round with dead code removal runs next (the
// pipeline's next loop), which collapses Identity chains and removes dead nodes: the
// inlined graph is then left to it.
Result<bool> inline_stage(onnx::ModelProto& m, const TransformOptions& options, TransformResult& result,
                          bool round_follows);

}  // namespace shapeprop::transform
