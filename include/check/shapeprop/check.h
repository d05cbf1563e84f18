// The checker: a non-mutating type check, a drop-in for ONNX's
// onnx::checker::check_model(model, full_check=true).
//
// It runs ONNX's structural checker, then shapeprop's strict inference (per call site of
// model-local functions, only the branches a context takes), then compares every
// declared type with what that inference proves from the graph's inputs and
// initializers alone (no declaration vouches for another):
//   - the main graph's outputs and value_info, and the inputs that have an initializer;
//   - inside subgraphs (If branches, Loop and Scan bodies) of the graph and of function
//     bodies: value_info, inputs and outputs, in each context that runs the subgraph;
//   - FunctionProto.value_info, in every context the function is called in;
//   - legacy qualified entries ("domain::function/value" in the graph's value_info, as
//     exporters wrote them before IR 10), in every context of that function.
// A declaration is an error when it is false in some context: another element type, rank
// or dim, or a dim_param that stands for two sizes that differ. Within the main graph a
// dim_param names one size throughout; within one call of a function, one size for that
// call (so a function value_info entry stricter than the join over its contexts is an
// error). A declaration that says more than is proven is not: missing information is
// not a problem. Values of a branch that is never taken are never checked.
//
// The model is never changed.
#pragma once

#include <filesystem>
#include <string>

#include "onnx/onnx_pb.h"
#include "shapeprop/analysis_options.h"
#include "shapeprop/diagnostics.h"
#include "shapeprop/limits.h"

namespace shapeprop {

// The analysis options (the rules of --schemas among them) as for every job; the check is
// always strict, whatever `strict` says.
struct CheckOptions : AnalysisOptions {
  std::string origin;  // names the model in diagnostics (its file), may be empty
};

// Errors for every problem found (a structural one stops the check before inference);
// warnings and notes beside them; the last entry is a note that counts what was checked.
// No errors means the model passes.
Diagnostics check_model(const onnx::ModelProto& model, const CheckOptions& options = {});

}  // namespace shapeprop
