// ONNX's checker knows nothing of ops outside its registry. In a custom domain it lets
// them pass; in the default domain (ONNX Runtime registers SimplifiedLayerNormalization
// there) it rejects the model. This registry answers as ONNX's does, and for an op with
// a rule but no ONNX schema gives a schema that accepts any inputs, outputs and
// attributes, so that the checker (and its strict inference, which leaves the op's
// outputs as declared) lets a model with such an op pass. Asked to, it does the same for
// any op of the default domain that it does not know (ONNX's infer_shapes lets those pass).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <unordered_map>

#include "onnx/defs/schema.h"
#include "shapeprop/schemas.h"

namespace shapeprop::schemas {

class CheckerRegistry : public onnx::ISchemaRegistry {
 public:
  explicit CheckerRegistry(const OpRules& rules, bool accept_unknown_default_ops = false)
      : rules_(rules), accept_unknown_default_ops_(accept_unknown_default_ops) {}
  const onnx::OpSchema* GetSchema(const std::string& key, int max_inclusive_version,
                                  const std::string& domain) const override;

 private:
  const onnx::OpSchema* answer(const std::string& key, int max_inclusive_version, const std::string& domain) const;

  const OpRules& rules_;
  const bool accept_unknown_default_ops_;
  mutable std::map<std::pair<std::string, std::string>, std::unique_ptr<onnx::OpSchema>> made_;
  // Answers given, by (domain, op, version): ONNX's checker asks once per node, and ONNX's
  // registry takes thousands of instructions to answer.
  mutable std::unordered_map<std::string, const onnx::OpSchema*> answered_;
  mutable std::string id_;  // GetSchema's key, spelled here
};

}  // namespace shapeprop::schemas
