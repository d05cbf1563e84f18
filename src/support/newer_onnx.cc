#include "support/newer_onnx.h"

#include "shapeprop/version.h"

namespace shapeprop::newer_onnx {

namespace {

struct OpVersion {
  std::string_view op;
  int since;
};
// Sorted by version; an op may appear once per version it changed in.
constexpr OpVersion kNewerVersions[] = {
    // Opset 27 (ONNX 1.22, Changelog.md).
    {"CausalConvWithState", 27},
    {"LinearAttention", 27},
    {"Range", 27},
    // Opset 28: Changelog.md of ONNX's main branch.
    {"Celu", 28},
    {"SwiGLU", 28},
    // Opset 28: ONNX Runtime's ONNX 1.23 integration and issue 56 (see the header).
    {"Cast", 28},
    {"QuantizeLinear", 28},
    {"DequantizeLinear", 28},
    {"DepthToSpace", 28},
    {"SpaceToDepth", 28},
    {"Mod", 28},
    {"Einsum", 28},
    {"ReduceL1", 28},
    {"ReduceL2", 28},
    {"ReduceLogSum", 28},
    {"ReduceLogSumExp", 28},
    {"ReduceMax", 28},
    {"ReduceMean", 28},
    {"ReduceMin", 28},
    {"ReduceProd", 28},
    {"ReduceSum", 28},
    {"ReduceSumSquare", 28},
};

}  // namespace

bool rules_extend_linked_onnx() {
  return onnx_max_opset("") == kBaseOpset && onnx_ir_version() == kBaseIrVersion;
}

std::optional<int> newer_version(std::string_view op, int64_t opset) {
  if (opset <= kBaseOpset || !rules_extend_linked_onnx()) return std::nullopt;
  std::optional<int> found;
  for (const auto& v : kNewerVersions)
    if (v.op == op && v.since <= opset) found = v.since;
  return found;
}

std::string uncovered_message(std::string_view op, int since) {
  const std::string name = std::string(op) + "-" + std::to_string(since);
  return "ai.onnx op " + name + " (opset " + std::to_string(since) + ") is newer than ONNX " + onnx_version() +
         ", which shapeprop is built against, and no rule states it: add one ('op " + std::string(op) + " since " +
         std::to_string(since) + "') in a --schemas folder";
}

int32_t newer_elem_type(std::string_view name) {
  if (name == "float6e2m3") return 27;
  if (name == "float6e3m2") return 28;
  return 0;
}

std::string_view newer_elem_type_name(int32_t elem_type) {
  switch (elem_type) {
    case 27: return "float6e2m3";
    case 28: return "float6e3m2";
    default: return "";
  }
}

}  // namespace shapeprop::newer_onnx
