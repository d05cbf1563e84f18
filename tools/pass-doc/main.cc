// shapeprop-pass-doc passes|counters: the docs' tables of the pass registry (passes.def), in
// Markdown: docs/cli.md's table of passes (name, kind, what it does, file) and
// docs/report.md's table of each pass's counters (the report's keys). scripts/gen-pass-doc.sh
// writes them into the docs, and with --check (the ctest repo.pass_doc) finds them stale.
#include <iostream>
#include <string>
#include <string_view>

#include "shapeprop/passes.h"

namespace {

std::string_view kind_text(shapeprop::PassKind kind) {
  switch (kind) {
    case shapeprop::PassKind::Module: return "module";
    case shapeprop::PassKind::Body: return "body";
    case shapeprop::PassKind::OptIn: return "body, opt-in";
  }
  return "";
}

void print_passes() {
  std::cout << "| pass | kind | what it does | file |\n|---|---|---|---|\n";
  for (const shapeprop::PassInfo& p : shapeprop::all_passes())
    std::cout << "| `" << p.name << "` | " << kind_text(p.kind) << " | " << p.description << " | `src/transform/" << p.file
              << "` |\n";
}

void print_counters() {
  std::cout << "| pass | counters |\n|---|---|\n";
  for (const shapeprop::PassInfo& p : shapeprop::all_passes()) {
    std::string keys;
    for (const shapeprop::CounterInfo& c : shapeprop::all_counters())
      if (c.pass == p.id) keys += (keys.empty() ? "`" : ", `") + std::string(c.key) + "`";
    if (keys.empty()) continue;
    std::cout << "| `" << p.name << "`" << (p.kind == shapeprop::PassKind::OptIn ? " (opt-in)" : "") << " | " << keys
              << " |\n";
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::string_view what = argc == 2 ? argv[1] : "";
  if (what == "passes") {
    print_passes();
  } else if (what == "counters") {
    print_counters();
  } else {
    std::cerr << "usage: shapeprop-pass-doc passes|counters\n";
    return 2;
  }
  return 0;
}
