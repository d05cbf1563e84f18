// The registry of passes and counters, from passes.def.
#include "shapeprop/passes.h"

#include <algorithm>

namespace shapeprop {

namespace {

constexpr PassInfo kPasses[] = {
#define SHAPEPROP_PASS(ID, NAME, KIND, FILE, DESCRIPTION) {Pass::ID, NAME, PassKind::KIND, FILE, DESCRIPTION},
#include "shapeprop/passes.def"
};

constexpr CounterInfo kCounters[] = {
#define SHAPEPROP_COUNTER(ID, PASS, KEY, ONE, MANY) {Counter::ID, Pass::PASS, KEY, ONE, MANY},
#include "shapeprop/passes.def"
};

static_assert(std::size(kCounters) == Counters::kSize);

}  // namespace

std::span<const PassInfo> all_passes() { return kPasses; }

const PassInfo& pass_info(Pass pass) { return kPasses[static_cast<size_t>(pass)]; }

std::optional<Pass> find_pass(std::string_view name) {
  for (const auto& p : kPasses)
    if (p.name == name) return p.id;
  return std::nullopt;
}

std::span<const CounterInfo> all_counters() { return kCounters; }

const CounterInfo& counter_info(Counter counter) { return kCounters[static_cast<size_t>(counter)]; }

}  // namespace shapeprop
