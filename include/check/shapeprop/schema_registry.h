// SchemaRegistry: the one extension point ONNX's shape inference offers, used to infer a
// model's functions per call site and only along the branches each call takes.
//
// For each node, onnx::shape_inference::InferShapes asks its ISchemaRegistry for a schema
// before it looks at the model's functions. This registry forwards every question to
// ONNX's own registry (or another base), except for the model's functions: for each it
// answers with a schema whose inference function runs shapeprop's analysis of the call in
// the context ONNX gives it (input types, constant inputs, the shape values ONNX's data
// propagation knows, attribute values), memoised per distinct context, and whose data
// propagation function hands the shape values the call computes back to ONNX. So ONNX's
// own InferShapes, and a full check built on it, analyses each call once per context,
// never infers a branch the call does not take, and fails (in strict mode) only on what
// the analysis finds wrong in that call, with the call path inside the function.
//
//   shapeprop::SchemaRegistry registry(model);
//   onnx::ShapeInferenceOptions strict{true, 1, false};
//   onnx::shape_inference::InferShapes(model, &registry, strict);
//
// Functions whose name is overloaded (FunctionProto.overload) are left to ONNX: a schema
// is looked up by domain and name only, and its inference function cannot see which
// overload the node names. An ONNX operator keeps its own schema even where a function
// of the same domain and name exists, as in ONNX's own lookup.
#pragma once

#include <memory>
#include <string>

#include "onnx/defs/schema.h"
#include "onnx/onnx_pb.h"
#include "shapeprop/infer.h"

namespace shapeprop {

class SchemaRegistry final : public onnx::ISchemaRegistry {
 public:
  // `model` must outlive the registry unchanged (InferShapes on a copy of it is fine).
  // By default the analysis is strict (a call whose analysis finds an error fails its
  // inference) and trusts no declaration: a dim_param of a function's value_info names a
  // size within one call and must not reach the calling graph (shapeprop::check_model,
  // not the registry, checks declared types).
  explicit SchemaRegistry(const onnx::ModelProto& model,
                          const onnx::ISchemaRegistry* base = onnx::OpSchemaRegistry::Instance(),
                          const InferOptions& options = strict_options());
  ~SchemaRegistry() override;
  SchemaRegistry(const SchemaRegistry&) = delete;
  SchemaRegistry& operator=(const SchemaRegistry&) = delete;

  const onnx::OpSchema* GetSchema(const std::string& key, const int maxInclusiveVersion,
                                  const std::string& domain) const override;

  // Distinct call contexts analysed so far (the memo's misses), and calls answered.
  size_t contexts_analysed() const;
  size_t calls_answered() const;

  static InferOptions strict_options() {
    InferOptions o;
    o.strict = true;
    o.use_declared_types = false;
    return o;
  }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace shapeprop
