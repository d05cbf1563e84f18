#include "shapeprop/version.h"

#include <string>

#include "onnx/defs/schema.h"

namespace shapeprop {

const char* version() { return SHAPEPROP_VERSION; }
const char* onnx_version() { return SHAPEPROP_ONNX_VERSION; }

int64_t onnx_ir_version() { return onnx::IR_VERSION; }

int64_t onnx_max_opset(std::string_view domain) {
  const std::string key = domain == "ai.onnx" ? std::string() : std::string(domain);
  const auto& ranges = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  auto it = ranges.find(key);
  return it == ranges.end() ? 0 : it->second.second;
}

}  // namespace shapeprop
