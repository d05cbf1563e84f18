// The before/after table a terminal shows after the summary line.
#include <algorithm>
#include <cstdio>
#include <set>

#include "terminal/table.h"

namespace shapeprop {

namespace {

constexpr size_t kLabelWidth = 40;

// Long labels (qualified function names) keep their end, where the name is.
std::string row(const std::string& label, size_t before, size_t after) {
  const std::string shown = label.size() <= kLabelWidth ? label : "..." + label.substr(label.size() - (kLabelWidth - 3));
  char line[160];
  std::snprintf(line, sizeof line, "  %-40s %9zu %9zu\n", shown.c_str(), before, after);
  return line;
}

size_t count_of(const std::map<std::string, size_t>& ops, const std::string& op) {
  auto it = ops.find(op);
  return it == ops.end() ? 0 : it->second;
}

}  // namespace

std::string counts_table(const ModelCounts& before, const ModelCounts& after, size_t op_rows) {
  std::string table;
  char header[160];
  std::snprintf(header, sizeof header, "  %-40s %9s %9s\n", "", "before", "after");
  table += header;
  table += row("nodes", before.nodes, after.nodes);
  table += row("functions", before.functions, after.functions);
  table += row("calls of functions", before.calls, after.calls);
  table += row("If", before.ifs, after.ifs);
  table += row("CastLike", before.castlikes, after.castlikes);

  // Op types: those that changed most first, then the most frequent.
  std::set<std::string> names;
  for (const auto& [op, n] : before.ops) names.insert(op);
  for (const auto& [op, n] : after.ops) names.insert(op);
  struct Op {
    std::string name;
    size_t before, after;
    size_t change() const { return before > after ? before - after : after - before; }
  };
  std::vector<Op> ops;
  for (const auto& name : names) ops.push_back({name, count_of(before.ops, name), count_of(after.ops, name)});
  std::stable_sort(ops.begin(), ops.end(), [](const Op& a, const Op& b) {
    if (a.change() != b.change()) return a.change() > b.change();
    return std::max(a.before, a.after) > std::max(b.before, b.after);
  });
  const size_t shown = std::min(op_rows, ops.size());
  for (size_t i = 0; i < shown; ++i) table += row("op " + ops[i].name, ops[i].before, ops[i].after);
  if (ops.size() > shown)
    table += "  (" + std::to_string(ops.size() - shown) + " more op types; --report FILE.json lists every one)\n";
  return table;
}

}  // namespace shapeprop
