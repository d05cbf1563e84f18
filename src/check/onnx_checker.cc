#include "check/onnx_checker.h"

#include <string>
#include <unordered_map>
#include <unordered_set>

namespace shapeprop {

void onnx_check_model(const onnx::ModelProto& model, onnx::checker::CheckerContext& ctx) {
  using onnx::checker::ValidationError;
  auto fail = [](const std::string& what) { throw ValidationError(what); };
  if (!model.ir_version()) fail("The model does not have an ir_version set properly.");
  if (model.ir_version() > onnx::IR_VERSION)
    fail("Your model ir_version " + std::to_string(model.ir_version()) + " is higher than the checker's (" +
         std::to_string(onnx::IR_VERSION) + ").");
  if (model.metadata_props_size() > 1) {
    std::unordered_set<std::string> keys;
    for (const auto& entry : model.metadata_props())
      if (!keys.insert(entry.key()).second) fail("Your model has duplicate keys in metadata_props.");
  }
  ctx.set_ir_version(static_cast<int>(model.ir_version()));
  std::unordered_map<std::string, int> opset_imports;
  for (const auto& opset_import : model.opset_import())
    opset_imports[opset_import.domain()] = static_cast<int>(opset_import.version());
  if (model.ir_version() >= 3) {
    if (opset_imports.empty()) fail("model with IR version >= 3 must specify opset_import for ONNX");
  } else if (opset_imports.empty()) {
    opset_imports[onnx::ONNX_DOMAIN] = 1;
  } else {
    fail("model with IR version < 3 cannot have opset_import specified");
  }
  ctx.set_opset_imports(opset_imports);
  onnx::checker::LexicalScopeContext lex_ctx;
  onnx::checker::check_graph(model.graph(), ctx, lex_ctx);
  if (ctx.get_ir_version() >= 8) onnx::checker::check_model_local_functions(model, ctx, lex_ctx);
}

}  // namespace shapeprop
