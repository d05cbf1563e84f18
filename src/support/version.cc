#include "shapeprop/version.h"

#include <string>
#include <string_view>

#include "onnx/defs/schema.h"
#include "support/newer_onnx.h"

namespace shapeprop {

const char* version() { return SHAPEPROP_VERSION; }
const char* onnx_version() { return SHAPEPROP_ONNX_VERSION; }

const char* onnx_build() {
  // ONNX_USE_LITE_PROTO: the ONNX package's definition, or the build's when the package's
  // headers are lite without it (cmake/onnx_protobuf_lite.cmake).
#ifdef ONNX_USE_LITE_PROTO
  constexpr std::string_view protobuf = "protobuf-lite";
#else
  constexpr std::string_view protobuf = "protobuf";
#endif
  constexpr std::string_view linkage = SHAPEPROP_ONNX_LINKAGE;
  static const std::string text = std::string(SHAPEPROP_ONNX_VERSION) + (linkage.empty() ? "" : ", ") +
                                  std::string(linkage) + ", " + std::string(protobuf) +
                                  ", package " SHAPEPROP_ONNX_PACKAGE_DIR;
  return text.c_str();
}

int64_t onnx_ir_version() { return onnx::IR_VERSION; }

int64_t onnx_max_opset(std::string_view domain) {
  const std::string key = domain == "ai.onnx" ? std::string() : std::string(domain);
  // ONNX builds the map on first use (a function-local static of its library) and never
  // changes it after. A static of ours holds it, so that every thread reads it after the
  // thread that built it through a guard ThreadSanitizer sees: ONNX's own guard is in
  // uninstrumented code, and threads validating their first models at once were reported
  // reading the map as it was built (docs/library.md, "Concurrency").
  static const auto& ranges = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  auto it = ranges.find(key);
  return it == ranges.end() ? 0 : it->second.second;
}

int64_t rules_ir_version() {
  return newer_onnx::rules_extend_linked_onnx() ? newer_onnx::kMaxIrVersion : onnx_ir_version();
}

int64_t rules_max_opset() { return newer_onnx::rules_extend_linked_onnx() ? newer_onnx::kMaxOpset : onnx_max_opset(""); }

}  // namespace shapeprop
