// Time per phase of a run (loading, validation, analysis, specialization, ...): what the
// report lists, and what a driver's progress display announces.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace shapeprop {

struct PhaseTime {
  std::string phase;   // "load", "validation", "analysis", "specialization", "inlining", "annotation", "write", ...
  double seconds = 0;  // wall time; a phase met several times (every round analyses) adds up
};

// Adds `more` to `into`, phase by phase (a phase already there adds up, a new one goes last).
void add_phases(std::vector<PhaseTime>& into, const std::vector<PhaseTime>& more);

// Measures one phase: from construction to stop() (or destruction), added to `phases`.
// Announces the phase to `on_start` first, when given.
class PhaseClock {
 public:
  PhaseClock(std::vector<PhaseTime>& phases, std::string phase,
             const std::function<void(std::string_view)>& on_start = nullptr);
  ~PhaseClock() { stop(); }
  PhaseClock(const PhaseClock&) = delete;
  PhaseClock& operator=(const PhaseClock&) = delete;

  void stop();

 private:
  std::vector<PhaseTime>& phases_;
  std::string phase_;
  std::chrono::steady_clock::time_point start_;
  bool running_ = true;
};

}  // namespace shapeprop
