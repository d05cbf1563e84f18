// What shapeprop reads as ONNX's inference does although ONNX's checker (1.17 through
// 1.22) and ONNX Runtime reject the model, so that the tolerance is said, not silent:
//  - a call of a model-local function of the default domain whose name is no op there at
//    the caller's opset ("No Op registered for MyTranspose with domain_version of 18");
//  - a function whose opset import of a domain differs from the model's where an op of
//    its body has another schema at the two versions (ONNX's since-version rule, as its
//    check_opset_compatibility applies it: "Opset import for domain in function op
//    Squeeze is not compatible with the version imported by model").
// validate_model reports them as warnings (errors under --strict); --mode check, as
// ONNX's checker would, as errors.
#pragma once

#include <string_view>

#include "onnx/onnx_pb.h"
#include "shapeprop/diagnostics.h"
#include "shapeprop/schemas.h"

namespace shapeprop {

// One diagnostic of `severity` per function (and, for opsets, per domain), naming it and
// the place of the first call or op concerned. Ops with a rule in `rules` (the built-in
// rules when null) are ops, as ONNX's checker is run with them.
Diagnostics inference_tolerances(const onnx::ModelProto& model, std::string_view origin, const OpRules* rules,
                                 Severity severity);

}  // namespace shapeprop
