#include "schemas/older_version.h"

#include <algorithm>
#include <string_view>

#include "shapeprop/fact.h"
#include "support/newer_onnx.h"

namespace shapeprop::schemas {

namespace {

// Attributes a version newer than the linked ONNX's added, with the value at which they
// change nothing (empty: none, for any value: stash_type acts on float16 and bfloat16 only,
// which Range-11 does not take; SpaceToDepth's mode of ONNX Runtime's integration, DCR
// being what SpaceToDepth-13 does).
struct DroppableAttribute {
  std::string_view op, attribute, neutral;
};
constexpr DroppableAttribute kDroppable[] = {{"Range", "stash_type", ""}, {"SpaceToDepth", "mode", "DCR"}};

bool takes(const onnx::OpSchema::FormalParameter& formal, int32_t elem_type) {
  for (const auto* dt : formal.GetTypes()) {
    const onnx::TypeProto t = onnx::Utils::DataTypeUtils::ToTypeProto(dt);
    if (t.has_tensor_type() && t.tensor_type().elem_type() == elem_type) return true;
  }
  return false;
}

}  // namespace

OlderVersionFit fits_older_version(const onnx::OpSchema& older, const std::string& op,
                                   const std::vector<const onnx::AttributeProto*>& attributes,
                                   const std::vector<std::string>& input_names, const std::vector<int32_t>& input_types,
                                   const std::vector<std::string>& output_names, const std::vector<int32_t>& output_types) {
  OlderVersionFit fit;
  const std::string older_name = op + "-" + std::to_string(older.since_version());
  for (const auto* a : attributes) {
    if (older.attributes().count(a->name())) {
      if ((a->name() == "to" || a->name() == "output_dtype") && newer_onnx::ir14_elem_type(a->i()))
        fit.why_not = "attribute '" + a->name() + "' names " + elem_type_name(static_cast<int32_t>(a->i())) + ", which " +
                      older_name + " does not take";
      continue;
    }
    const auto drop = std::find_if(std::begin(kDroppable), std::end(kDroppable), [&](const DroppableAttribute& d) {
      return d.op == op && d.attribute == a->name() && (d.neutral.empty() || d.neutral == a->s());
    });
    if (drop == std::end(kDroppable)) {
      fit.why_not = "attribute '" + a->name() + "' has no counterpart in " + older_name;
      return fit;
    }
    fit.to_drop.push_back(a->name());
  }
  if (!fit.why_not.empty()) return fit;
  const auto check = [&](const std::vector<std::string>& names, const std::vector<int32_t>& types,
                         const std::vector<onnx::OpSchema::FormalParameter>& formals) {
    for (size_t i = 0; i < names.size() && i < types.size() && fit.why_not.empty(); ++i) {
      if (names[i].empty() || formals.empty()) continue;
      const auto& formal = formals[std::min(i, formals.size() - 1)];  // the last may be variadic
      if (types[i] == 0) fit.why_not = "the element type of '" + names[i] + "' is not known";
      else if (!takes(formal, types[i]))
        fit.why_not = "'" + names[i] + "' is " + elem_type_name(types[i]) + ", which " + older_name + " does not take";
    }
  };
  check(input_names, input_types, older.inputs());
  check(output_names, output_types, older.outputs());
  return fit;
}

}  // namespace shapeprop::schemas
