// ONNX's schemas, registered for what a run uses.
//
// ONNX registers every schema of every operator set (606 in ONNX 1.21, and the ML, training
// and preview sets) at its first lookup: 49 M instructions, 9% of annotating the 128-layer
// transformer of scripts/bench.sh, for a model that uses 30 ops (docs/performance.md,
// "Start-up"). Upstream offers that, or registration per opset version
// (__ONNX_DISABLE_STATIC_REGISTRATION), which still makes every schema up to the version.
// scripts/setup.sh builds ONNX with shapeprop's patch
// (cmake/onnx/patches/lazy-schema-loader.patch), which lets a program register on demand:
// the first lookup of an op name registers that name's schemas, made alone from the
// operator-set classes cmake/onnx_schema_table.cmake lists. Every lookup, ONNX's own
// (checker, inference, inliner, version converter, function bodies) as well as
// shapeprop's, goes through OpSchemaRegistry::Schema, so nothing can find a schema
// missing that static registration would have had. An ONNX without the patch (Debian's
// libonnx-dev, the 1.17 configuration) registers all at once, as before.
#include <atomic>
#include <cstdlib>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "onnx/defs/operator_sets.h"
#include "onnx/defs/schema.h"
#include "shapeprop/version.h"
#ifdef ONNX_LAZY_SCHEMA_LOADER
#ifdef ONNX_ML
#include "onnx/defs/operator_sets_ml.h"
#endif
#include "onnx/defs/operator_sets_preview.h"
#include "onnx/defs/operator_sets_training.h"
#endif

namespace shapeprop {

namespace {

#ifdef ONNX_LAZY_SCHEMA_LOADER
struct SchemaMaker {
  const char* name;
  onnx::OpSchema (*make)();
};

const std::vector<SchemaMaker>& schema_makers() {
  static const std::vector<SchemaMaker> makers = {
#define SHAPEPROP_ONNX_SCHEMA(op, schema_class) {#op, &onnx::GetOpSchema<onnx::schema_class>},
#include "onnx_schema_table.inc"
#undef SHAPEPROP_ONNX_SCHEMA
  };
  return makers;
}

// The makers of each op name (an op of several domains, or of several versions, has several).
const std::unordered_map<std::string_view, std::vector<const SchemaMaker*>>& makers_by_name() {
  static const auto by_name = [] {
    std::unordered_map<std::string_view, std::vector<const SchemaMaker*>> m;
    for (const auto& maker : schema_makers()) m[maker.name].push_back(&maker);
    return m;
  }();
  return by_name;
}

// How many schemas load_name and load_all made (written under the registry's exclusive lock).
std::atomic<size_t> made{0};

// Called by ONNX under the registry's exclusive lock, once per name.
void load_name(const std::string& name) {
  const auto& by_name = makers_by_name();
  auto it = by_name.find(name);
  if (it == by_name.end()) return;  // a model-local function, a custom op: no schema
  for (const SchemaMaker* maker : it->second) onnx::RegisterSchema(maker->make(), 0, /*fail_duplicate_schema=*/false);
  made += it->second.size();
}

// Once, for get_all_schemas*: those a name registered already are made again and dropped.
void load_all() {
  for (const auto& maker : schema_makers()) onnx::RegisterSchema(maker.make(), 0, /*fail_duplicate_schema=*/false);
  made += schema_makers().size();
}
#endif

}  // namespace

size_t onnx_schemas_made_on_demand() {
#ifdef ONNX_LAZY_SCHEMA_LOADER
  return made.load();
#else
  return 0;
#endif
}

size_t onnx_schema_classes() {
#ifdef ONNX_LAZY_SCHEMA_LOADER
  return schema_makers().size();
#else
  return 0;
#endif
}

bool onnx_schemas_on_demand() {
#ifdef ONNX_LAZY_SCHEMA_LOADER
  return onnx::OpSchemaRegistry::LazySchemaLoading();
#else
  return false;
#endif
}

void register_onnx_schemas_once() {
  static const bool registered = [] {
#ifdef ONNX_LAZY_SCHEMA_LOADER
    // SHAPEPROP_ONNX_SCHEMAS=all: every schema at the first lookup, as upstream ONNX does
    // (tests/repo/same_outputs.sh compares the two; the benchmarks measure the difference).
    const char* all = std::getenv("SHAPEPROP_ONNX_SCHEMAS");
    if (!(all && std::string_view(all) == "all")) {
      (void)makers_by_name();
      onnx::OpSchemaRegistry::SetLazySchemaLoader(&load_name, &load_all);
      onnx::OpSchemaRegistry::Instance()->SetLoadedSchemaVersion(0);  // every version may be loaded
    }
#endif
    (void)onnx::OpSchemaRegistry::Schema("Relu", 14, "");
    (void)onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
    return true;
  }();
  (void)registered;
}

}  // namespace shapeprop
