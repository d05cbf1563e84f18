// See huge_pages.h.
#include "heap/huge_pages.h"

#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>
#include <string>

namespace shapeprop::heap {

namespace {

std::optional<std::string> read_file(const char* path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The words of a line, split at blanks and commas.
template <class Fn>
void for_each_word(std::string_view line, Fn&& fn) {
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == ',')) ++i;
    const size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != ',') ++i;
    if (i > start) fn(line.substr(start, i - start));
  }
}

}  // namespace

std::optional<uint64_t> free_in_blocks(std::string_view buddyinfo, uint64_t page_bytes, uint64_t block_bytes) {
  if (page_bytes == 0 || block_bytes < page_bytes) return std::nullopt;
  uint64_t total = 0;
  bool any = false;
  while (!buddyinfo.empty()) {
    const size_t end = std::min(buddyinfo.find('\n'), buddyinfo.size());
    const std::string_view line = buddyinfo.substr(0, end);
    buddyinfo.remove_prefix(std::min(end + 1, buddyinfo.size()));
    if (line.find_first_not_of(" \t") == std::string_view::npos) continue;
    // "Node", N, "zone", NAME, then the counts by order.
    int word = 0, order = 0;
    bool bad = false;
    for_each_word(line, [&](std::string_view w) {
      if (bad) return;
      const int at = word++;
      if (at == 0 || at == 2) {
        bad = w != (at == 0 ? "Node" : "zone");
        return;
      }
      if (at < 4) return;
      uint64_t count = 0;
      auto [p, ec] = std::from_chars(w.data(), w.data() + w.size(), count);
      if (ec != std::errc() || p != w.data() + w.size() || order >= 40) {
        bad = true;
        return;
      }
      const uint64_t block = page_bytes << order++;
      if (block >= block_bytes) total += count * block;
    });
    if (bad || word < 5) return std::nullopt;
    any = true;
  }
  if (!any) return std::nullopt;
  return total;
}

uint64_t run_estimate(uint64_t input_bytes) {
  constexpr uint64_t kBase = uint64_t{256} << 20;
  return kBase + 12 * input_bytes;
}

bool settle(uint64_t needed_bytes) {
  const auto enabled = read_file("/sys/kernel/mm/transparent_hugepage/enabled");
  if (!enabled || enabled->find("[never]") != std::string::npos) return false;
  uint64_t huge = 2 << 20;
  if (auto size = read_file("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size")) {
    uint64_t v = 0;
    auto [p, ec] = std::from_chars(size->data(), size->data() + size->size(), v);
    if (ec == std::errc() && v > 0) huge = v;
  }
  const long page = ::sysconf(_SC_PAGESIZE);
  const auto buddyinfo = read_file("/proc/buddyinfo");
  const auto free_huge =
      buddyinfo ? free_in_blocks(*buddyinfo, page > 0 ? static_cast<uint64_t>(page) : 4096, huge) : std::nullopt;
  if (free_huge && *free_huge >= needed_bytes) return true;
  // Fails only on kernels without the option (before 3.15), where nothing can be done.
  ::prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0);
  return false;
}

}  // namespace shapeprop::heap
