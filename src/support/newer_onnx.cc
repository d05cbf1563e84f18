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

namespace {

// Element types from IR 9 (float8) to IR 14 (float6), as onnx.proto numbers them: rules name
// them whichever ONNX is linked (ONNX 1.17's registry knows none after int4).
struct ElemType {
  std::string_view name;
  int32_t code;
};
constexpr ElemType kElemTypes[] = {
    {"float8e4m3fn", 17}, {"float8e4m3fnuz", 18}, {"float8e5m2", 19}, {"float8e5m2fnuz", 20},
    {"uint4", 21},        {"int4", 22},           {"float4e2m1", 23}, {"float8e8m0", 24},
    {"uint2", 25},        {"int2", 26},           {"float6e2m3", 27}, {"float6e3m2", 28},
};

}  // namespace

int32_t newer_elem_type(std::string_view name) {
  for (const auto& t : kElemTypes)
    if (t.name == name) return t.code;
  return 0;
}

std::string_view newer_elem_type_name(int32_t elem_type) {
  for (const auto& t : kElemTypes)
    if (t.code == elem_type) return t.name;
  return "";
}

}  // namespace shapeprop::newer_onnx
