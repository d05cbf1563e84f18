// The table of engines the conformance driver can select by name.
#include <algorithm>

#include "engine.h"

namespace shapeprop::conformance {

namespace {
// A plain table rather than self-registration from static initialisers: those are
// dropped by the linker when an engine's object file sits unreferenced in a static library.
constexpr EngineEntry kEngines[] = {
    {"onnx", &make_onnx_engine},
    {"shapeprop", &make_shapeprop_engine},
};
}  // namespace

std::span<const EngineEntry> engines() { return kEngines; }

std::unique_ptr<Engine> make_engine(std::string_view name) {
  const auto* it = std::ranges::find(kEngines, name, &EngineEntry::name);
  return it == std::ranges::end(kEngines) ? nullptr : it->make();
}

}  // namespace shapeprop::conformance
