// Overrides: a backend's library of functions replaces the model's functions of the same
// (domain, name, overload) before analysis, as a backend would have them exported (a
// TensorRT plugin call for aten_gelu, say), after export instead of at export time.
//
// Each replacement is checked, and a mismatch is an error that leaves the model as it
// was: the same number of inputs and outputs; the same attributes with the same
// defaults; opset imports ONNX's checker accepts beside the model's (an op the library
// function imports at another version than the model must have the same definition at
// both); and, for every context in which the model calls the function (its input
// types, shapes and attributes), the same output element types and shapes, where both
// are known. An output the analysis cannot type (an op without a schema or rule) is not
// checked, and a warning says so.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "onnx/onnx_pb.h"
#include "shapeprop/diagnostics.h"
#include "shapeprop/function_id.h"
#include "shapeprop/infer.h"

namespace shapeprop {

// A library file: ONNX text syntax holding functions only (each with its own <domain:
// ..., opset_import: ...> header), or a binary model whose functions are the library.
Result<std::vector<onnx::FunctionProto>> load_function_library(const std::filesystem::path& path,
                                                                const Limits& limits = {});

struct OverrideResult {
  std::vector<FunctionId> replaced;  // model functions replaced, in the model's order
  std::vector<FunctionId> added;     // library functions the replacements call, added
  size_t contexts_checked = 0;       // contexts whose outputs were compared
  Diagnostics diagnostics;           // warnings: outputs not checked, library functions unused
};

// Replaces `model`'s functions by those of `library` with the same id. `origin` names
// the library in diagnostics. On error the model is unchanged.
Result<OverrideResult> apply_overrides(onnx::ModelProto& model, const std::vector<onnx::FunctionProto>& library,
                                       const std::string& origin, const InferOptions& options = {});

}  // namespace shapeprop
