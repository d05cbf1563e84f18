// Validation of a loaded model before any analysis: ONNX's own checker, and the
// structural rules ONNX's checker lets pass (calls to functions the model does not
// define, domains used without an opset import inside function bodies).
#pragma once

#include <filesystem>
#include <optional>
#include <string_view>

#include "onnx/onnx_pb.h"
#include "shapeprop/call_graph.h"
#include "shapeprop/diagnostics.h"
#include "shapeprop/limits.h"
#include "shapeprop/schemas.h"

namespace shapeprop {

// How ONNX's checker is run.
//  - onnx: as ONNX 1.17's check_model (--mode check reports what ONNX's checker says).
//  - as_inference: what ONNX's infer_shapes accepts passes too: an op of the default
//    domain that no schema knows (the analysis warns, or reports an error under --strict,
//    and leaves its outputs unknown), and a model-local function that imports another
//    opset version than the model (the analysis and the inliner take the function at its
//    own opset). ONNX's checker (1.17 through 1.22) and ONNX Runtime reject a call of a
//    default-domain function that is no op, and a function importing another version
//    where an op it uses has another schema there; validate_model says so
//    (check/inference_tolerance.h).
enum class CheckerMode { onnx, as_inference };

// ONNX's checker. With `full_check` it also runs ONNX's strict shape inference, which
// rejects some valid models (it infers both branches of every If); unlike ONNX's own
// full check, each model-local function body is inferred once per distinct call
// signature, not once per call path (which grows exponentially with call depth).
// External data is never looked for: a graph whose weights are in files that are absent
// (large models are shared that way) is checked from the tensors' dims, as ONNX's
// inference types it (check_external_data, at load, keeps every location inside the
// model's folder). An op with a rule in `rules` (the built-in rules when null) passes as
// ONNX's checker lets an op of a custom domain pass, also in the default domain, where
// ONNX Runtime registers some.
Diagnostics run_onnx_checker(const onnx::ModelProto& model, bool full_check, std::string_view origin,
                             const OpRules* rules = nullptr, CheckerMode mode = CheckerMode::as_inference);

// Rules every model must keep for shapeprop to analyse it:
//  - its IR version and the opsets of ONNX's domains it imports are ones the linked ONNX
//    reads (checked before anything else: otherwise the one error names the ONNX release
//    the model needs);
//  - subgraphs and calls nest no deeper than `limits` allow (checked first; see
//    limits.h);
//  - each opset_import list names a domain once;
//  - each node's domain has an opset import where the node stands (the model's for the
//    graph and its subgraphs, the function's own for a function body);
//  - a node whose domain holds model-local functions names one of them
//    (domain, name, overload);
//  - each output of a function is one of its inputs or an output of a node of its body
//    (ONNX's checker lets one that nothing defines pass; ONNX Runtime refuses the model);
//  - function ids are unique.
// `rules`: the rules the run reads, which state the ai.onnx ops newer than the linked ONNX
// (the shipped ones when null).
Diagnostics validate_structure(const onnx::ModelProto& model, std::string_view origin, const Limits& limits = {},
                               const OpRules* rules = nullptr);

// Both of the above, ours first (its messages name the place more precisely). With
// CheckerMode::as_inference, what ONNX's checker and ONNX Runtime reject but inference
// reads comes between them: warnings, or with `strict` errors.
Diagnostics validate_model(const onnx::ModelProto& model, std::string_view origin, const OpRules* rules = nullptr,
                           CheckerMode mode = CheckerMode::as_inference, const Limits& limits = {},
                           bool strict = false);

// The same, keeping in `calls` the call graph validation built of the model (left empty
// when its structure has errors), for infer_shapes to reuse while the model stays as it is.
Diagnostics validate_model(const onnx::ModelProto& model, std::string_view origin, const OpRules* rules,
                           CheckerMode mode, const Limits& limits, bool strict, std::optional<CallGraph>& calls);

// validate_model but for its last step, ONNX's checker (run_onnx_checker with
// full_check false and the same mode, which completes it when this finds no error): the
// driver runs the checker on a second thread while the analysis reads the model
// (JobOptions::check_alongside). A model this passes may still be one ONNX's checker
// refuses: the analysis reads any such model without harm (infer_shapes' contract), and
// the fuzz targets run it on those too.
Diagnostics validate_model_but_onnx_checker(const onnx::ModelProto& model, std::string_view origin,
                                            const OpRules* rules, CheckerMode mode, const Limits& limits,
                                            bool strict, std::optional<CallGraph>& calls);

}  // namespace shapeprop
