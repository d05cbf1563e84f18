// What a model needs of the ONNX library shapeprop is linked with: its IR version and the
// versions of ONNX's own opsets it imports (in the model and in its functions), against
// what that ONNX reads. A newer model is refused with one error naming both versions,
// before ONNX's checker (which would say only "ir_version 11 is higher than the checker's
// (10)", or read an opset it does not know as its latest one).
#pragma once

#include <optional>
#include <string_view>

#include "onnx/onnx_pb.h"
#include "shapeprop/diagnostics.h"

namespace shapeprop {

std::optional<Diagnostic> newer_than_linked_onnx(const onnx::ModelProto& model, std::string_view origin);

}  // namespace shapeprop
