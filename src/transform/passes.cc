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
static_assert(std::size(kPasses) == kPassCount);

constexpr size_t kDefaultCount = static_cast<size_t>(
    std::count_if(std::begin(kPasses), std::end(kPasses), [](const PassInfo& p) { return p.kind != PassKind::OptIn; }));

constexpr std::array<Pass, kDefaultCount> kDefaultPasses = [] {
  std::array<Pass, kDefaultCount> passes{};
  size_t n = 0;
  for (const PassInfo& p : kPasses)
    if (p.kind != PassKind::OptIn) passes[n++] = p.id;
  return passes;
}();

}  // namespace

std::span<const PassInfo> all_passes() { return kPasses; }

std::span<const Pass> default_passes() { return kDefaultPasses; }

const PassInfo& pass_info(Pass pass) { return kPasses[static_cast<size_t>(pass)]; }

std::optional<Pass> find_pass(std::string_view name) {
  for (const auto& p : kPasses)
    if (p.name == name) return p.id;
  return std::nullopt;
}

std::span<const CounterInfo> all_counters() { return kCounters; }

const CounterInfo& counter_info(Counter counter) { return kCounters[static_cast<size_t>(counter)]; }

}  // namespace shapeprop
