#include "shapeprop/phases.h"

#include <algorithm>

namespace shapeprop {

namespace {

void add_phase(std::vector<PhaseTime>& into, const std::string& phase, double seconds) {
  auto it = std::find_if(into.begin(), into.end(), [&](const PhaseTime& p) { return p.phase == phase; });
  if (it == into.end()) it = into.insert(into.end(), PhaseTime{phase, 0});
  it->seconds += seconds;
}

}  // namespace

void add_phases(std::vector<PhaseTime>& into, const std::vector<PhaseTime>& more) {
  for (const auto& p : more) add_phase(into, p.phase, p.seconds);
}

PhaseClock::PhaseClock(std::vector<PhaseTime>& phases, std::string phase,
                       const std::function<void(std::string_view)>& on_start)
    : phases_(phases), phase_(std::move(phase)) {
  if (on_start) on_start(phase_);
  start_ = std::chrono::steady_clock::now();
}

void PhaseClock::stop() {
  if (!running_) return;
  running_ = false;
  add_phase(phases_, phase_, std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count());
}

}  // namespace shapeprop
