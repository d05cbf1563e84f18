#include "schemas/checker_registry.h"

#include "support/newer_onnx.h"
#include "support/schema_key.h"

namespace shapeprop::schemas {

const onnx::OpSchema* CheckerRegistry::GetSchema(const std::string& key, int max_inclusive_version,
                                                 const std::string& domain) const {
  // Asked once per node: the key is spelled in a buffer kept for it, and copied only when new.
  std::string& id = id_;
  spell_schema_key(id, domain, key, max_inclusive_version);
  if (auto it = answered_.find(id); it != answered_.end()) return it->second;
  std::string fresh = id;  // (answer may come back here, spelling another key in id_)
  const onnx::OpSchema* schema = answer(key, max_inclusive_version, domain);
  answered_.emplace(std::move(fresh), schema);
  return schema;
}

const onnx::OpSchema* CheckerRegistry::answer(const std::string& key, int max_inclusive_version,
                                              const std::string& domain) const {
  const bool default_domain = domain.empty() || domain == "ai.onnx";
  // A version newer than the linked ONNX's holds: not ONNX's older schema, whose type
  // constraints and attributes may no longer be the op's; the rule's checks are the analysis's.
  const auto newer = default_domain ? newer_onnx::newer_version(key, max_inclusive_version) : std::nullopt;
  if (newer) {
    if (!rules_.find_version(key, *newer)) return nullptr;
  } else if (const auto* schema = onnx::OpSchemaRegistry::Instance()->GetSchema(key, max_inclusive_version, domain)) {
    return schema;
  } else if (!rules_.find(domain, key) && !(accept_unknown_default_ops_ && default_domain)) {
    return nullptr;
  }
  auto& made = made_[{domain, key}];
  if (!made) {
    made = std::make_unique<onnx::OpSchema>(key, "shapeprop schemas/", 0);
    made->SetDomain(domain)
        .SinceVersion(1)
        .AllowUncheckedAttributes()
        .Input(0, "inputs", "", "T", onnx::OpSchema::Variadic, /*is_homogeneous=*/false, /*min_arity=*/0)
        .Output(0, "outputs", "", "T", onnx::OpSchema::Variadic, /*is_homogeneous=*/false, /*min_arity=*/0)
        .TypeConstraint("T", onnx::OpSchema::all_tensor_types_ir10(), "any tensor");
    made->Finalize();
  }
  return made.get();
}

}  // namespace shapeprop::schemas
