// What a model needs of the ONNX library shapeprop is linked with: its IR version and the
// versions of ONNX's own opsets it imports (in the model and in its functions), against
// what that ONNX reads. A newer model is refused with one error naming both versions,
// before ONNX's checker (which would say only "ir_version 11 is higher than the checker's
// (10)", or read an opset it does not know as its latest one). Where the linked ONNX is
// 1.21, shapeprop reads IR 14 and ai.onnx opsets up to 28 too, the ops new or changed
// since through its rules (support/newer_onnx.h): a node of such an op without a rule is
// the one error then, naming the op and the version it needs.
#pragma once

#include <optional>
#include <string_view>

#include "onnx/onnx_pb.h"
#include "shapeprop/diagnostics.h"
#include "shapeprop/schemas.h"

namespace shapeprop {

// `rules`: the rules the run reads (the shipped ones when null).
std::optional<Diagnostic> newer_than_linked_onnx(const onnx::ModelProto& model, std::string_view origin,
                                                 const OpRules* rules = nullptr);

}  // namespace shapeprop
