#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace shapeprop {

// The version of shapeprop itself (the project() version in CMakeLists.txt).
const char* version();

// The version of the ONNX library it was built against.
const char* onnx_version();

// That ONNX as --version names it: its version, whether it is linked statically or shared,
// whether it is built with protobuf-lite, and the folder of its CMake package, e.g.
// "1.20.0, shared, protobuf-lite, package /usr/lib/x86_64-linux-gnu/cmake/ONNX".
const char* onnx_build();

// What that ONNX reads: the highest IR version, and the highest opset version of one of
// its own domains ("" or "ai.onnx", "ai.onnx.ml", ...; 0 for a domain it does not know).
int64_t onnx_ir_version();
int64_t onnx_max_opset(std::string_view domain);

// What shapeprop reads beyond that ONNX through its rules (schemas/onnx/opset27, opset28):
// the highest IR version and ai.onnx opset; equal to the linked ONNX's where the rules do
// not extend it (any ONNX but 1.21).
int64_t rules_ir_version();
int64_t rules_max_opset();
// ONNX registers its schemas on the first lookup, under a guard in its own library that
// ThreadSanitizer does not see; each entry point (run's validation, infer_shapes,
// specialize, check_model) calls this first, so that the first lookup happens under a
// guard of ours and threads starting at once are seen to read the registry after it was
// built. With an ONNX built with shapeprop's patch (scripts/setup.sh's), it sets ONNX to
// register each schema at the first lookup that finds it instead of all of them at once
// (src/support/onnx_schemas.cc), unless the environment says SHAPEPROP_ONNX_SCHEMAS=all or
// a lookup came first.
void register_onnx_schemas_once();
// Whether ONNX registers schemas on demand (register_onnx_schemas_once set it so); how many
// schemas it has made so far that way; how many the linked ONNX has in all (0 where ONNX
// lacks the patch).
bool onnx_schemas_on_demand();
size_t onnx_schemas_made_on_demand();
size_t onnx_schema_classes();
// Makes each schema of the table on its own (not registered) and compares its name, domain
// and version with the table's row: the first that differs, or "" when none does (for the
// tests: a lookup registers the schema its row says it finds).
std::string onnx_schema_table_mismatch();

}  // namespace shapeprop
