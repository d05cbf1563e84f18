// What ONNX releases newer than the linked one changed, as far as shapeprop reads models of
// them through its rules (schemas/): the ai.onnx ops new or changed in opsets 27 and 28
// and IR 14's element types. Facts from ONNX's docs/Changelog.md (opset 27: ONNX 1.22;
// opset 28: ONNX's main branch for 1.23, read at f7546912, 2026-08-22) and, for the
// versions of opset 28 that Changelog did not list yet, ONNX Runtime's integration of
// ONNX 1.23 (microsoft/onnxruntime#32359, #32362, #32381) and shapeprop issue 56's list:
// an op listed here that did not change would only be read through its rule, which states
// the shape its previous version gives, so listing one too many costs nothing unsound.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace shapeprop::newer_onnx {

// The ai.onnx opset the rules start after: the linked ONNX must read it for the rules to
// cover everything up to kMaxOpset (the versions between are ONNX's own).
inline constexpr int64_t kBaseOpset = 26;
inline constexpr int64_t kBaseIrVersion = 13;
// The newest IR version and ai.onnx opset read through rules.
inline constexpr int64_t kMaxOpset = 28;
inline constexpr int64_t kMaxIrVersion = 14;

// Whether the linked ONNX reads kBaseOpset and kBaseIrVersion exactly (so rules carry it
// on to kMaxOpset); with an older or newer ONNX, its own limits are all shapeprop reads.
bool rules_extend_linked_onnx();

// The version of ai.onnx `op` that holds at `opset` where it is newer than the linked
// ONNX's registry (opsets after kBaseOpset); nullopt where ONNX's own schema holds.
std::optional<int> newer_version(std::string_view op, int64_t opset);

// The error for a node of `op` whose version `since` no rule states: it names the op and
// the version it needs.
std::string uncovered_message(std::string_view op, int since);

// The element types IR 9 to 14 added (float8e4m3fn = 17 ... float6e2m3 = 27, float6e3m2 =
// 28) by name and back, whether the linked ONNX knows them or not; 0 and "" for others.
int32_t newer_elem_type(std::string_view name);
// Whether the element type is one IR 14 added (float6e2m3, float6e3m2).
inline bool ir14_elem_type(int64_t elem_type) { return elem_type == 27 || elem_type == 28; }
std::string_view newer_elem_type_name(int32_t elem_type);

}  // namespace shapeprop::newer_onnx
