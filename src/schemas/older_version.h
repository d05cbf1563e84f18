// Where a version of an ai.onnx op newer than the linked ONNX's (support/newer_onnx.h)
// computes what the op's version in the linked registry computes: the node's attributes
// are the older version's (or one the newer version added, at the value that changes
// nothing), and its element types are ones the older version takes (none of IR 14's). The
// versions 27 and 28 widen their types or add such attributes (ONNX's Changelog.md), so
// such a node is the older op: the analysis reads it with ONNX's schema and folding rules
// (its facts as at opset 26), and --target-opset converts it to that version.
#pragma once

#include <string>
#include <vector>

#include "onnx/defs/schema.h"
#include "shapeprop/diagnostics.h"

namespace shapeprop::schemas {

struct OlderVersionFit {
  std::string why_not;                // empty where the node fits the older version
  std::vector<std::string> to_drop;   // attributes the newer version added, at their neutral value
};

// `older`: the op's schema in the linked registry; `input_types`, `output_types`: the
// node's element types by position (0 where not known; a node whose types are not all
// known does not fit); `output_types` may be empty (not checked: the older schema's
// inference gives them).
OlderVersionFit fits_older_version(const onnx::OpSchema& older, const std::string& op,
                                   const std::vector<const onnx::AttributeProto*>& attributes,
                                   const std::vector<std::string>& input_names, const std::vector<int32_t>& input_types,
                                   const std::vector<std::string>& output_names, const std::vector<int32_t>& output_types);

// ONNX 1.21's version converter knows no opset after 26 (--target-opset): the nodes of ops
// whose version at the model's opset `from` is newer than the linked ONNX's become their
// version at newer_onnx::kBaseOpset where they fit it, by the element types the model
// declares (as ONNX's own TypeRestriction adapters require); any other is one error naming
// each. Then the model imports that opset (and IR 13 where it was 14, unless it holds
// float6 values). The main graph and its subgraphs only: functions are inlined before.
Result<bool> lower_to_base_opset(onnx::ModelProto& model, int64_t from);

}  // namespace shapeprop::schemas
