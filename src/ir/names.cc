#include "ir/names.h"

#include <algorithm>
#include <cstring>

#include "support/subgraphs.h"

namespace shapeprop::ir {

using onnx::GraphProto;
using onnx::NodeProto;

std::string_view NameArena::store(std::string_view name) {
  if (name.empty()) return {};
  if (name.size() > left_) {
    // Blocks double from 256 bytes to 64 KiB: most arenas (an inlined call's renaming, a
    // scope's) hold a few names, and there are many of them, so a first block is small;
    // and a block is not zeroed, since every byte of it is written before it is read.
    const size_t size = std::max(name.size(), next_block_);
    next_block_ = std::min<size_t>(next_block_ * 2, 64 * 1024);
    blocks_.push_back(std::make_unique_for_overwrite<char[]>(size));
    free_ = blocks_.back().get();
    left_ = size;
  }
  std::memcpy(free_, name.data(), name.size());
  const std::string_view stored(free_, name.size());
  free_ += name.size();
  left_ -= name.size();
  return stored;
}

std::string NameSet::fresh(std::string_view base) {
  if (insert(base)) return std::string(base);
  for (int k = 1;; ++k) {
    std::string name = std::string(base) + "_" + std::to_string(k);
    if (insert(name)) return name;
  }
}

std::string NameSet::fresh(std::string_view base, unsigned& counter) {
  std::string name(base);
  while (contains(name)) name = std::string(base) + "_" + std::to_string(counter++);
  insert(name);
  return name;
}

void NameSet::insert_all(const NodeList& nodes, Keep keep) {
  for (const auto& n : nodes) {
    for (const auto& in : n.input()) insert(in, keep);
    for (const auto& o : n.output()) insert(o, keep);
    for_each_subgraph(n, [&](const GraphProto& g) { insert_all(g, keep); });
  }
}

void NameSet::insert_all(const GraphProto& g, Keep keep) {
  for (const auto& vi : g.input()) insert(vi.name(), keep);
  for (const auto& vi : g.output()) insert(vi.name(), keep);
  for (const auto& t : g.initializer()) insert(t.name(), keep);
  insert_all(g.node(), keep);
}

void NameCounts::add_subgraph_definitions(const NodeProto& n) {
  for_each_subgraph(n, [&](const GraphProto& g) {
    for (const auto& vi : g.input()) add(vi.name());
    for (const auto& t : g.initializer()) add(t.name());
    for (const auto& m : g.node()) {
      for (const auto& o : m.output()) add(o);
      add_subgraph_definitions(m);
    }
  });
}

void NameCounts::add_reads(const NodeList& nodes) {
  for (const auto& n : nodes) {
    for (const auto& in : n.input()) add(in);
    for_each_subgraph(n, [&](const GraphProto& g) {
      add_reads(g.node());
      for (const auto& o : g.output()) add(o.name());
    });
  }
}

void ScopedRenaming::bind(std::string_view from, std::string to) {
  Scope& s = scopes_.back();
  if (const uint32_t k = slot(s, from); k != NameMap::kMissing) {
    s.to[k] = std::move(to);
    return;
  }
  if (s.index.size() == 0 && s.from.size() < kSmall) {
    s.from.emplace_back(from);
    s.to.push_back(std::move(to));
    return;
  }
  if (s.index.size() == 0) {  // the scope outgrows its list: indexed from now on
    s.index.reserve(2 * kSmall);
    for (size_t k = 0; k < s.from.size(); ++k) s.index.insert(s.names.store(s.from[k]), static_cast<uint32_t>(k));
    s.from = {};
  }
  s.index.insert(s.names.store(from), static_cast<uint32_t>(s.to.size()));
  s.to.push_back(std::move(to));
}

const std::string* ScopedRenaming::find(std::string_view name) const {
  for (auto s = scopes_.rbegin(); s != scopes_.rend(); ++s)
    if (const std::string* to = find_in(*s, name)) return to;
  return nullptr;
}

}  // namespace shapeprop::ir
