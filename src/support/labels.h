// How diagnostics name things, the same way everywhere.
#pragma once

#include <string>

#include "onnx/onnx_pb.h"
#include "shapeprop/function_id.h"

namespace shapeprop {

// "node 'y' (pkg.onnxscript.torch_lib.aten_t)": the node's name, or else its first output.
inline std::string node_label(const onnx::NodeProto& n) {
  const std::string& name = !n.name().empty() ? n.name() : (n.output_size() > 0 ? n.output(0) : n.name());
  return "node '" + name + "' (" + FunctionId::of(n).str() + ")";
}

// "1 input", "3 inputs".
inline std::string counted(int n, const char* noun) { return std::to_string(n) + " " + noun + (n == 1 ? "" : "s"); }

}  // namespace shapeprop
