// Names of values, where a rewrite still needs them.
//
// The rewrites number values (Body, MutableBody) and edit them by id; a name matters only
// when one is printed or made: a new value must be named apart from every name of its
// body, a branch or a callee inlined into a body must not define a name that the body, or
// a subgraph in it, defines already. The sets and counts here are the only name-keyed
// containers the transform layer uses, so that the hashing of names stays in one place,
// and so that every rewrite makes fresh names by the same rule.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "onnx/onnx_pb.h"
#include "support/name_map.h"

namespace shapeprop::ir {

using NodeList = google::protobuf::RepeatedPtrField<onnx::NodeProto>;

// Copies of names, in blocks that never move, for the indexes below to view.
class NameArena {
 public:
  std::string_view store(std::string_view name);

 private:
  std::vector<std::unique_ptr<char[]>> blocks_;
  char* free_ = nullptr;
  size_t left_ = 0;
  size_t next_block_ = 256;
};

// A set of names. insert() keeps a copy of the name; insert_lasting() only views it, for
// names held by protos that outlive the set and stay unchanged while it is in use.
class NameSet {
 public:
  // How insert() keeps a name: a copy, or a view (of a proto that outlives the set and
  // whose name stays unchanged while the set is in use).
  enum class Keep { Copies, Views };

  NameSet() = default;
  NameSet(NameSet&&) = default;
  NameSet& operator=(NameSet&&) = default;

  bool contains(std::string_view name) const { return index_.contains(name); }
  // True when the name was new.
  bool insert(std::string_view name) { return !contains(name) && index_.insert(arena_.store(name)); }
  bool insert_lasting(std::string_view name) { return index_.insert(name); }
  bool insert(std::string_view name, Keep keep) { return keep == Keep::Views ? insert_lasting(name) : insert(name); }

  // `base` when the set does not hold it, else the first of base_1, base_2, ... that it
  // does not hold; added to the set.
  std::string fresh(std::string_view base);
  // ONNX's inliner's rule (onnx/inliner/inliner.cc, NameGenerator): `base` when free,
  // else base_K with K taken from `counter`, one counter for every name it makes.
  std::string fresh(std::string_view base, unsigned& counter);

  // Every name defined or read in `nodes` and in their subgraphs, at any depth.
  void insert_all(const NodeList& nodes, Keep keep);
  // The same for a graph: its inputs, outputs, initializers and nodes.
  void insert_all(const onnx::GraphProto& g, Keep keep);

 private:
  NameMap index_;
  NameArena arena_;  // the names insert() and fresh() add
};

// How many times each name occurs in some role; views the protos' strings, which must
// outlive the counts and stay unchanged.
class NameCounts {
 public:
  explicit NameCounts(size_t expected = 0) : counts_(expected) {}

  uint32_t count(std::string_view name) const {
    const uint32_t k = counts_.find(name);
    return k == NameMap::kMissing ? 0 : k;
  }
  bool contains(std::string_view name) const { return count(name) > 0; }
  void add(std::string_view name) {
    if (name.empty()) return;
    counts_.insert_or_assign(name, count(name) + 1);
  }

  // Each name that the subgraphs of `n` define, at any depth: their inputs, initializers
  // and node outputs.
  void add_subgraph_definitions(const onnx::NodeProto& n);
  void add_subgraph_definitions(const NodeList& nodes) {
    for (const auto& n : nodes) add_subgraph_definitions(n);
  }
  // Each name the nodes read, in their subgraphs too (node inputs and subgraph outputs: a
  // superset of their free names).
  void add_reads(const NodeList& nodes);

 private:
  NameMap counts_;
};

// The renaming of names in nested scopes (a body and its subgraphs), the innermost last:
// a name looked up takes the binding of the innermost scope that binds it.
class ScopedRenaming {
 public:
  ScopedRenaming() { scopes_.emplace_back(); }
  void push() { scopes_.emplace_back(); }
  // Room in the innermost scope for `n` bindings, made at once.
  void reserve(size_t n) {
    Scope& s = scopes_.back();
    s.to.reserve(n);
    if (n <= kSmall)
      s.from.reserve(n);
    else
      s.index.reserve(n);
  }
  void pop() { scopes_.pop_back(); }
  // In the innermost scope, `from` is renamed `to` (replacing a binding it had there).
  void bind(std::string_view from, std::string to);
  // The innermost scope's binding of `name`, or nullptr.
  const std::string* bound_here(std::string_view name) const { return find_in(scopes_.back(), name); }
  // The innermost binding of `name` in any scope, or nullptr.
  const std::string* find(std::string_view name) const;

 private:
  // A scope of at most kSmall bindings (a call of a small function: most of the inliner's)
  // is searched in order, without building an index (its allocations and hashing cost
  // more than the comparisons there).
  static constexpr size_t kSmall = 16;
  struct Scope {
    std::vector<std::string> from;  // the names bound, in order, while no index is built
    std::vector<std::string> to;    // what each is bound to
    NameArena names;                // past kSmall: the names bound, which the index views
    NameMap index;                  // past kSmall: name -> into `to`
  };
  std::vector<Scope> scopes_;

  // Where `name` is bound in the scope (into `to`), or NameMap::kMissing.
  static uint32_t slot(const Scope& s, std::string_view name) {
    if (s.index.size() > 0) return s.index.find(name);
    for (size_t k = 0; k < s.from.size(); ++k)
      if (s.from[k] == name) return static_cast<uint32_t>(k);
    return NameMap::kMissing;
  }
  static const std::string* find_in(const Scope& s, std::string_view name) {
    const uint32_t k = slot(s, name);
    return k == NameMap::kMissing ? nullptr : &s.to[k];
  }
};

}  // namespace shapeprop::ir
