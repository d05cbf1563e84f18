// The transform's texts (stats_text.h) and the public summary_line and counter_lines.
#include "transform/stats_text.h"

#include "shapeprop/specialize.h"  // summary_line, counter_lines

#include <algorithm>
#include <vector>

namespace shapeprop {

namespace transform {

namespace {

// Whether a counter is one of the rewrites after folding (the passes over a folded body).
bool counts_a_rewrite(const CounterInfo& c) {
  return pass_info(c.pass).kind != PassKind::Module && c.pass != Pass::Fold;
}

}  // namespace

std::string assumption_report(const std::vector<std::string>& rewrites_assuming_positive_dims) {
  if (rewrites_assuming_positive_dims.empty()) return "";
  std::string text = "rewrites that assume symbolic dims are at least 1:\n";
  for (const auto& line : rewrites_assuming_positive_dims) text += "  " + line + "\n";
  return text;
}

std::string passes_that_counted(const Counters& before, const Counters& after) {
  std::vector<Pass> passes;
  for (const CounterInfo& c : all_counters())
    if (before[c.id] != after[c.id] && std::find(passes.begin(), passes.end(), c.pass) == passes.end())
      passes.push_back(c.pass);
  std::sort(passes.begin(), passes.end());
  std::string names;
  for (Pass p : passes) names += (names.empty() ? "" : ", ") + std::string(pass_info(p).name);
  return names;
}

}  // namespace transform

std::string counter_lines(const TransformStats& stats) {
  std::string passes = "passes:";
  for (const PassInfo& p : all_passes()) {
    if (p.kind != PassKind::Module && p.id != Pass::Fold) continue;  // the rewrites: the next line
    std::string counts;
    for (const CounterInfo& c : all_counters())
      if (c.pass == p.id) counts += (counts.empty() ? "" : ", ") + std::string(c.many) + " " + std::to_string(stats.counters[c.id]);
    if (!counts.empty()) passes += " " + std::string(p.name) + " (" + counts + "),";
  }
  passes.back() = '\n';
  std::string rewrites = "rewrites:";
  for (const CounterInfo& c : all_counters())
    if (transform::counts_a_rewrite(c)) rewrites += " " + std::string(c.many) + " " + std::to_string(stats.counters[c.id]) + ",";
  rewrites.back() = '\n';
  return passes + rewrites;
}

std::string summary_line(const TransformStats& s) {
  auto plural = [](size_t n, const char* one, const char* many) { return std::to_string(n) + " " + (n == 1 ? one : many); };
  auto counted = [&s](Counter c) {
    const CounterInfo& info = counter_info(c);
    const size_t n = s.counters[c];
    return std::to_string(n) + " " + std::string(n == 1 ? info.one : info.many);
  };
  const size_t removed = s.nodes_before > s.nodes_after ? s.nodes_before - s.nodes_after : 0;
  std::string line = counted(Counter::IfsFolded) + ", " + counted(Counter::CastLikesFolded) + ", " +
                     counted(Counter::ConstantsFolded) + ", " + plural(removed, "node removed", "nodes removed") + " (" +
                     std::to_string(s.nodes_before) + " -> " + std::to_string(s.nodes_after) + "), functions " +
                     std::to_string(s.functions_before) + " -> " + std::to_string(s.functions_after) + ", " +
                     counted(Counter::Specializations) + " (" + std::to_string(s.counters[Counter::Shared]) + " shared)";
  if (s.counters[Counter::CallsInlined] > 0 || s.calls_kept > 0)
    line += ", " + counted(Counter::CallsInlined) + ", " + plural(s.calls_kept, "call kept", "calls kept");
  // The rewrites after folding: each counter of the rewrite passes that counted something.
  std::string rewrites;
  for (const CounterInfo& c : all_counters())
    if (transform::counts_a_rewrite(c) && s.counters[c.id] > 0)
      rewrites += (rewrites.empty() ? "" : ", ") + std::to_string(s.counters[c.id]) + " " + std::string(c.many);
  if (!rewrites.empty()) line += "; rewrites: " + rewrites;
  return line;
}

}  // namespace shapeprop
