// The passes of the transforms and their counters, as listed once in passes.def: what
// --list-passes prints, what --passes and the pipelines name, and what the summary line,
// --debug-analysis, the report and Python count.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace shapeprop {

enum class PassKind : uint8_t {
  Module,  // works on the whole model
  Body,    // works on one body: the main graph, or a function in one context
  OptIn,   // a body pass that only --passes runs, never a default pipeline
};

enum class Pass : uint8_t {
#define SHAPEPROP_PASS(ID, NAME, KIND, FILE, DESCRIPTION) ID,
#include "shapeprop/passes.def"
};

struct PassInfo {
  Pass id;
  std::string_view name;         // as --passes spells it: "cse"
  PassKind kind;
  std::string_view file;         // its source, under src/transform: "cse.cc"
  std::string_view description;  // what it does, in Markdown (`Cast` ...)
};

// Every pass, in the order the default pipelines run them.
std::span<const PassInfo> all_passes();
const PassInfo& pass_info(Pass pass);
std::optional<Pass> find_pass(std::string_view name);

inline constexpr size_t kPassCount = 0
#define SHAPEPROP_PASS(ID, NAME, KIND, FILE, DESCRIPTION) +1
#include "shapeprop/passes.def"
    ;

// The default pipeline: every pass but the opt-in ones, in registry order (--mode inline
// runs all of it, --mode specialize all but inline). One round of it is repeated until it
// changes nothing.
std::span<const Pass> default_passes();

// The round bounds. A pipeline round analyses the whole model anew and runs every stage
// once; the default pipeline repeats it until a round changes nothing, at most
// kMaxPipelineRounds times (--passes runs one), then warns naming the pass still changing.
// Within a round, the rewrites of one body repeat over that body alone, on the facts of
// the round's one analysis and without writing the model, until none changes anything, at
// most kMaxBodyRounds times: cheap local iterations (a rewrite often enables the next
// one's match in the same body), not a round of the pipeline, which is why the bound is
// its own; a body still changing after them is a warning, and the next pipeline round
// takes it up.
inline constexpr int kMaxPipelineRounds = 4;
inline constexpr int kMaxBodyRounds = 6;

enum class Counter : uint8_t {
#define SHAPEPROP_COUNTER(ID, PASS, KEY, ONE, MANY) ID,
#include "shapeprop/passes.def"
};

struct CounterInfo {
  Counter id;
  Pass pass;
  std::string_view key;   // in the report: "casts_removed"
  std::string_view one;   // in the summary line: "cast removed"
  std::string_view many;  // "casts removed"
};

// Every counter, in the order the summary line lists them.
std::span<const CounterInfo> all_counters();
const CounterInfo& counter_info(Counter counter);

// One count per counter.
class Counters {
 public:
  static constexpr size_t kSize = 0
#define SHAPEPROP_COUNTER(ID, PASS, KEY, ONE, MANY) +1
#include "shapeprop/passes.def"
      ;
  size_t& operator[](Counter c) { return values_[static_cast<size_t>(c)]; }
  size_t operator[](Counter c) const { return values_[static_cast<size_t>(c)]; }
  bool operator==(const Counters&) const = default;

 private:
  std::array<size_t, kSize> values_{};
};

// Wall time per pass (what the report lists as `pass_times`): every run of a pass added
// up, in every body and round; ran() tells the passes that ran at all.
class PassTimes {
 public:
  void add(Pass p, double seconds) {
    seconds_[static_cast<size_t>(p)] += seconds;
    ran_[static_cast<size_t>(p)] = true;
  }
  double seconds(Pass p) const { return seconds_[static_cast<size_t>(p)]; }
  bool ran(Pass p) const { return ran_[static_cast<size_t>(p)]; }
  double total() const {
    double sum = 0;
    for (double s : seconds_) sum += s;
    return sum;
  }
  PassTimes& operator+=(const PassTimes& more) {
    for (size_t i = 0; i < kPassCount; ++i)
      if (more.ran_[i]) add(static_cast<Pass>(i), more.seconds_[i]);
    return *this;
  }

 private:
  std::array<double, kPassCount> seconds_{};
  std::array<bool, kPassCount> ran_{};
};

// Measures one run of a pass into `times` (nothing when `times` is null): from
// construction to destruction.
class PassClock {
 public:
  PassClock(PassTimes* times, Pass pass)
      : times_(times), pass_(pass), start_(times ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point()) {}
  ~PassClock() {
    if (times_) times_->add(pass_, std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count());
  }
  PassClock(const PassClock&) = delete;
  PassClock& operator=(const PassClock&) = delete;

 private:
  PassTimes* times_;
  Pass pass_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace shapeprop
