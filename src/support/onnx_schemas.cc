// ONNX's schemas, registered for what a run uses.
//
// ONNX registers every schema of every operator set (606 in ONNX 1.21, and the ML, training
// and preview sets) at its first lookup: 49 M instructions, 9% of annotating the 128-layer
// transformer of scripts/bench.sh, for a model that uses 30 ops (docs/performance.md,
// "Start-up"). Upstream offers that, or registration per opset version
// (__ONNX_DISABLE_STATIC_REGISTRATION), which still makes every schema up to the version.
// scripts/setup.sh builds ONNX with shapeprop's patch
// (cmake/onnx/patches/lazy-schema-loader.patch), which lets a program register on demand:
// a lookup of an op (name, domain, opset version) registers the one schema it finds, made
// alone from the operator-set classes cmake/onnx_schema_table.cmake lists with their
// domain and version (a model at one opset makes one schema of each op it uses). Every
// lookup, ONNX's own (checker, inference, inliner, version converter, function bodies) as
// well as shapeprop's, goes through OpSchemaRegistry::Schema, so nothing can find a
// schema missing that static registration would have had, nor an older one than it would
// have found. An ONNX without the patch (Debian's
// libonnx-dev, the 1.17 configuration) registers all at once, as before.
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "onnx/defs/operator_sets.h"
#include "onnx/defs/schema.h"
#include "shapeprop/version.h"
#include "support/name_map.h"
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
  std::string_view domain;  // as the registry keys it: "" for ONNX's own
  int since_version;
  // Registered: written under the registry's exclusive lock, read under its shared one.
  mutable bool made = false;
};

// Constant-initialized: nothing to build at start-up.
constinit SchemaMaker kSchemaMakers[] = {
#define SHAPEPROP_ONNX_SCHEMA(op, schema_class, domain, version) \
  {#op, &onnx::GetOpSchema<onnx::schema_class>, domain, version},
#ifdef ONNX_ML
#define SHAPEPROP_ONNX_ML_SCHEMA SHAPEPROP_ONNX_SCHEMA
#else
#define SHAPEPROP_ONNX_ML_SCHEMA(...)
#endif
#include "onnx_schema_table.inc"
#undef SHAPEPROP_ONNX_ML_SCHEMA
#undef SHAPEPROP_ONNX_SCHEMA
};
std::span<SchemaMaker> schema_makers() { return kSchemaMakers; }

// Where the makers of each op name start in the table (an op of several domains, or of
// several versions, has several, which the table lists together: it is sorted by name).
// Built at every run's start, one entry per name (a map node and a vector per name, built
// from a vector copy of the table, were 7% of the smallest real export's run).
struct MakersByName {
  NameMap group;                                   // name -> its rows' place in `rows`
  std::vector<std::pair<uint32_t, uint32_t>> rows;  // [first, end) in the table
};
const MakersByName& makers_by_name() {
  static const MakersByName by_name = [] {
    const auto& makers = schema_makers();
    MakersByName m;
    m.group.reserve(makers.size());
    for (size_t i = 0; i < makers.size(); ++i) {
      if (i > 0 && std::string_view(makers[i].name) == makers[i - 1].name) {
        ++m.rows.back().second;
        continue;
      }
      m.group.insert(makers[i].name, static_cast<uint32_t>(m.rows.size()));
      m.rows.emplace_back(static_cast<uint32_t>(i), static_cast<uint32_t>(i + 1));
    }
    return m;
  }();
  return by_name;
}

// How many schemas load and load_all made (written under the registry's exclusive lock).
std::atomic<size_t> made{0};

// The schema a lookup of `name` in `domain` at `version` finds, as the registry does: the
// newest of that name and domain not newer than the version. Null when there is none.
const SchemaMaker* maker_for(const std::string& name, const std::string& domain, int version) {
  const auto& by_name = makers_by_name();
  const uint32_t group = by_name.group.find(name);
  if (group == NameMap::kMissing) return nullptr;  // a model-local function, a custom op: no schema
  const auto& makers = schema_makers();
  const SchemaMaker* found = nullptr;
  for (uint32_t k = by_name.rows[group].first; k < by_name.rows[group].second; ++k) {
    const SchemaMaker* maker = &makers[k];
    if (maker->domain == domain && maker->since_version <= version &&
        (!found || maker->since_version > found->since_version))
      found = maker;
  }
  return found;
}

// Called by ONNX under the registry's shared lock, at each lookup.
bool loaded(const std::string& name, const std::string& domain, int version) {
  const SchemaMaker* maker = maker_for(name, domain, version);
  return !maker || maker->made;
}

// Called by ONNX under the registry's exclusive lock, when `loaded` said no.
void load(const std::string& name, const std::string& domain, int version) {
  const SchemaMaker* maker = maker_for(name, domain, version);
  if (!maker || maker->made) return;
  onnx::RegisterSchema(maker->make(), 0, /*fail_duplicate_schema=*/false);
  maker->made = true;
  ++made;
}

// Once, for get_all_schemas*: the schemas not registered yet.
void load_all() {
  for (const auto& maker : schema_makers()) {
    if (maker.made) continue;
    onnx::RegisterSchema(maker.make(), 0, /*fail_duplicate_schema=*/false);
    maker.made = true;
    ++made;
  }
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

std::string onnx_schema_table_mismatch() {
#ifdef ONNX_LAZY_SCHEMA_LOADER
  // Sorted by name: makers_by_name() finds a name's first row, and its rows follow it.
  const auto& makers = schema_makers();
  for (size_t i = 1; i < makers.size(); ++i)
    if (std::string_view(makers[i - 1].name) > makers[i].name)
      return std::string("the table is not sorted by name: ") + makers[i - 1].name + " before " + makers[i].name;
  for (const auto& maker : makers) {
    const onnx::OpSchema schema = maker.make();
    if (schema.Name() != maker.name || schema.domain() != maker.domain || schema.SinceVersion() != maker.since_version)
      return std::string(maker.name) + " of '" + std::string(maker.domain) + "' version " +
             std::to_string(maker.since_version) + " in the table makes " + schema.Name() + " of '" + schema.domain() +
             "' version " + std::to_string(schema.SinceVersion());
  }
#endif
  return {};
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
      onnx::OpSchemaRegistry::SetLazySchemaLoader(&loaded, &load, &load_all);
      onnx::OpSchemaRegistry::Instance()->SetLoadedSchemaVersion(0);  // every version may be loaded
    }
#endif
    // The registry built by a lookup (every schema, without the loader): one of an op no
    // schema has, which makes none with the loader (a model without Relu never needs Relu's).
    (void)onnx::OpSchemaRegistry::Schema("", 1, "");
    (void)onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
    return true;
  }();
  (void)registered;
}

}  // namespace shapeprop
