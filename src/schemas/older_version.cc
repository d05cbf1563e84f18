#include "schemas/older_version.h"

#include <algorithm>
#include <map>
#include <string_view>

#include "shapeprop/fact.h"
#include "shapeprop/function_id.h"
#include "shapeprop/version.h"
#include "support/subgraphs.h"
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

Result<bool> lower_to_base_opset(onnx::ModelProto& model, int64_t from) {
  std::map<std::string, int32_t> types;  // element types the model declares, by value name
  const auto note = [&types](const std::string& name, int32_t t) {
    auto [it, fresh] = types.try_emplace(name, t);
    if (!fresh && it->second != t) it->second = 0;  // two declarations that differ: unknown
  };
  const auto declare = [&](const onnx::GraphProto& g) {
    for (const auto* list : {&g.input(), &g.output(), &g.value_info()})
      for (const auto& v : *list)
        if (v.type().has_tensor_type()) note(v.name(), v.type().tensor_type().elem_type());
    for (const auto& t : g.initializer()) note(t.name(), t.data_type());
  };
  std::vector<onnx::GraphProto*> graphs{model.mutable_graph()};
  for (size_t i = 0; i < graphs.size(); ++i) {
    declare(*graphs[i]);
    for (auto& n : *graphs[i]->mutable_node()) for_each_subgraph(n, [&](onnx::GraphProto& g) { graphs.push_back(&g); });
  }
  bool float6 = false;
  for (const auto& [name, t] : types) float6 = float6 || newer_onnx::ir14_elem_type(t);
  std::vector<std::string> refused;
  for (onnx::GraphProto* g : graphs)
    for (auto& n : *g->mutable_node()) {
      if (!FunctionId::is_default_domain(n.domain())) continue;
      const auto since = newer_onnx::newer_version(n.op_type(), from);
      if (!since) continue;
      const std::string label = "node '" + (n.name().empty() && n.output_size() > 0 ? n.output(0) : n.name()) + "' (" +
                                n.op_type() + "-" + std::to_string(*since) + ")";
      const onnx::OpSchema* older = onnx::OpSchemaRegistry::Schema(n.op_type(), static_cast<int>(newer_onnx::kBaseOpset), "");
      if (!older) {
        refused.push_back(label + ": no version at opset " + std::to_string(newer_onnx::kBaseOpset) +
                          " (expand it first: --expand-ops " + n.op_type() + ", where its rule gives a body)");
        continue;
      }
      std::vector<const onnx::AttributeProto*> attributes;
      for (const auto& a : n.attribute()) attributes.push_back(&a);
      const auto elem_types = [&types](const auto& names) {
        std::vector<int32_t> out;
        for (const auto& name : names) {
          const auto t = types.find(name);
          out.push_back(t == types.end() ? 0 : t->second);
        }
        return out;
      };
      const std::vector<std::string> inputs(n.input().begin(), n.input().end());
      const std::vector<std::string> outputs(n.output().begin(), n.output().end());
      auto fit = fits_older_version(*older, n.op_type(), attributes, inputs, elem_types(inputs), outputs,
                                             elem_types(outputs));
      const std::string why = fit.why_not;
      if (why.empty()) {
        auto& list = *n.mutable_attribute();
        list.erase(std::remove_if(list.begin(), list.end(),
                                  [&](const onnx::AttributeProto& a) { return std::find(fit.to_drop.begin(), fit.to_drop.end(), a.name()) != fit.to_drop.end(); }),
                   list.end());
      }
      if (!why.empty()) refused.push_back(label + ": " + why);
    }
  if (!refused.empty()) {
    std::string message;
    for (const auto& r : refused) message += (message.empty() ? "" : "; ") + r;
    return Diagnostic::error("cannot convert from ai.onnx opset " + std::to_string(from) + " to " +
                             std::to_string(newer_onnx::kBaseOpset) + ": " + message);
  }
  if (model.ir_version() > onnx_ir_version()) {
    if (float6)
      return Diagnostic::error("cannot convert from IR " + std::to_string(model.ir_version()) +
                               ": the model has float6 values, which IR " + std::to_string(onnx_ir_version()) + " lacks");
    model.set_ir_version(onnx_ir_version());
  }
  for (auto& o : *model.mutable_opset_import())
    if (FunctionId::is_default_domain(o.domain())) o.set_version(newer_onnx::kBaseOpset);
  return true;
}

}  // namespace shapeprop::schemas
