// Fuzz target: a differential test against ONNX itself. A generated model (model_gen.h)
// is specialized and inlined by shapeprop (--mode inline) and, separately, inlined by
// ONNX's inliner and typed by ONNX's InferShapes (data propagation on). Where ONNX's
// strict inference finds no error, the graph outputs' types must agree wherever both
// know them: element type, rank, and each dim that both give as a number. The model
// written is held to the oracles of every pipeline (fuzz_support.h: ONNX's full checker,
// the dim_params written, ONNX Runtime's tensors).
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include "fuzz_support.h"
#include "model_gen.h"
#include "onnx/inliner/inliner.h"
#include "onnx/shape_inference/implementation.h"
#include "shapeprop/infer.h"
#include "shapeprop/io.h"
#include "shapeprop/specialize.h"
#include "shapeprop/validate.h"

namespace {

using shapeprop::fuzz::require;

// ONNX's inliner and inference on a copy of `model`: the graph outputs' types by name, or
// nothing when ONNX fails or reports an inference error (the model is then not one ONNX
// calls valid, and nothing is compared).
std::optional<std::map<std::string, onnx::TypeProto>> onnx_types(const onnx::ModelProto& model) {
  onnx::ModelProto copy = model;
  try {
    onnx::inliner::InlineLocalFunctions(copy, /*convert_version=*/false);
    onnx::ShapeInferenceOptions options{/*check_type=*/true, /*error_mode=*/1, /*enable_data_propagation=*/true};
    onnx::shape_inference::InferShapes(copy, onnx::OpSchemaRegistry::Instance(), options);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  std::map<std::string, onnx::TypeProto> out;
  for (const auto& o : copy.graph().output()) out[o.name()] = o.type();
  return out;
}

void compare(const std::string& name, const onnx::TypeProto& ours, const onnx::TypeProto& theirs, const std::string& text) {
  if (ours.value_case() != onnx::TypeProto::kTensorType || theirs.value_case() != onnx::TypeProto::kTensorType) return;
  const auto &a = ours.tensor_type(), &b = theirs.tensor_type();
  const std::string where = "output '" + name + "': shapeprop says " + ours.ShortDebugString() + ", ONNX " +
                            theirs.ShortDebugString() + "\n" + text;
  if (a.elem_type() != 0 && b.elem_type() != 0) require(a.elem_type() == b.elem_type(), "element types differ, " + where);
  if (!a.has_shape() || !b.has_shape()) return;
  require(a.shape().dim_size() == b.shape().dim_size(), "ranks differ, " + where);
  for (int i = 0; i < a.shape().dim_size(); ++i) {
    const auto &da = a.shape().dim(i), &db = b.shape().dim(i);
    if (da.has_dim_value() && db.has_dim_value()) require(da.dim_value() == db.dim_value(), "dims differ, " + where);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace shapeprop;
  fuzz::ByteReader in(data, size);
  const std::string text = fuzz::generate_model(in);
  auto model = parse_model_text(text, "<generated>", fuzz::fuzz_limits());
  require(model.ok(), "the generator wrote text that does not parse: " + (model.ok() ? "" : model.error().str()));
  if (has_errors(validate_model(*model, "<generated>", nullptr, CheckerMode::as_inference, fuzz::fuzz_limits())))
    return 0;
  auto theirs = onnx_types(*model);
  if (!theirs) return 0;

  TransformOptions options;
  options.infer.limits = fuzz::fuzz_limits();
  options.inline_policy = InlinePolicy::All;
  onnx::ModelProto flat = *model;
  auto done = specialize(flat, options);
  if (!done || has_errors(done->diagnostics)) return 0;
  fuzz::written_model_holds(*model, dim_params_of(*model), fuzz::passes_full_checker(*model), flat,
                            done->diagnostics, "inlined");
  for (const auto& o : flat.graph().output()) {
    auto it = theirs->find(o.name());
    if (it != theirs->end()) compare(o.name(), o.type(), it->second, text);
  }
  return 0;
}
