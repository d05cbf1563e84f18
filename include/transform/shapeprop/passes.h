// The passes of the transforms and their counters, as listed once in passes.def: what
// --list-passes prints, what --passes and the pipelines name, and what the summary line,
// --debug-analysis, the report and Python count.
#pragma once

#include <array>
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

}  // namespace shapeprop
