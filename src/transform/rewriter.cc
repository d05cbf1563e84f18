// BodyRewriter and the pipeline of rewrite passes over one body.
#include "rewriter.h"

#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

#include "support/subgraphs.h"

namespace shapeprop::transform {

namespace {

using onnx::GraphProto;
using onnx::NodeProto;
using onnx::TensorProto;

// Passes run until none changes anything; each round of them is linear in the body, and
// more than a few are never needed (the rounds of specialize() catch anything left).
constexpr int kMaxPassRounds = 6;

}  // namespace

namespace {

// Feeds what tensor_value_key() holds to `add(data, bytes)`.
template <class Add>
void visit_tensor_value(const TensorProto& t, Add&& add) {
  const int32_t type = t.data_type();
  add(&type, sizeof type);
  const int ndims = t.dims_size();
  add(&ndims, sizeof ndims);
  add(t.dims().data(), sizeof(int64_t) * static_cast<size_t>(ndims));
  // Which field holds the data, then the data.
  auto field = [&](char tag, const auto& values) {
    if (values.empty()) return;
    add(&tag, 1);
    add(values.data(), sizeof(values.Get(0)) * static_cast<size_t>(values.size()));
  };
  if (t.has_raw_data()) {
    const char tag = 'r';
    add(&tag, 1);
    add(t.raw_data().data(), t.raw_data().size());
  }
  field('f', t.float_data());
  field('i', t.int32_data());
  field('l', t.int64_data());
  field('d', t.double_data());
  field('u', t.uint64_data());
  for (const auto& s : t.string_data()) {
    const size_t n = s.size();
    add("s", 1);
    add(&n, sizeof n);
    add(s.data(), n);
  }
  // What else a tensor may hold (external data, segments) is compared whole.
  if (t.external_data_size() > 0 || t.has_segment() || t.data_location() != TensorProto::DEFAULT) {
    TensorProto rest = t;
    rest.clear_name();
    const std::string bytes = rest.SerializeAsString();
    add("x", 1);
    add(bytes.data(), bytes.size());
  }
}

}  // namespace

std::string tensor_value_key(const TensorProto& t) {
  std::string key;
  visit_tensor_value(t, [&key](const void* data, size_t bytes) { key.append(static_cast<const char*>(data), bytes); });
  return key;
}

uint64_t tensor_value_hash(const TensorProto& t) {
  uint64_t h = 0x9e3779b97f4a7c15ull;
  visit_tensor_value(t, [&h](const void* data, size_t bytes) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (; bytes >= 8; p += 8, bytes -= 8) {
      uint64_t w;
      std::memcpy(&w, p, 8);
      h = (h ^ w) * 0xff51afd7ed558ccdull;
      h ^= h >> 32;
    }
    for (; bytes > 0; ++p, --bytes) h = (h ^ *p) * 0x100000001b3ull;
  });
  return h;
}

namespace {

template <class Fn>
void for_each_nested_read(GraphProto& g, Fn&& fn) {
  for (auto& n : *g.mutable_node()) {
    for (auto& in : *n.mutable_input())
      if (!in.empty()) fn(in);
    for_each_subgraph(n, [&](GraphProto& sg) { for_each_nested_read(sg, fn); });
  }
  for (auto& o : *g.mutable_output()) fn(*o.mutable_name());
}

}  // namespace

BodyRewriter::BodyRewriter(NodeList& nodes, const FactsByName& facts, const BodyTarget& target,
                           const std::unordered_set<std::string>& protected_names, const RewriteOptions& options,
                           TransformStats& stats)
    : list_(nodes), facts_(facts), target_(target), protected_(protected_names), options_(options), stats_(stats) {
  const auto n = static_cast<size_t>(nodes.size());
  nodes_.reserve(n);
  erased_.assign(n, false);
  next_.resize(n);
  prev_.resize(n);
  values_.reserve(n * 2);
  if (target.main_graph) {
    std::unordered_set<std::string> inputs;
    for (const auto& in : target.main_graph->input()) inputs.insert(in.name());
    for (const auto& t : target.main_graph->initializer())
      if (!inputs.count(t.name())) values_[t.name()].initializer = &t;
  }
  for (size_t i = 0; i < n; ++i) {
    const auto id = static_cast<NodeId>(i);
    NodeProto* node = nodes.Mutable(static_cast<int>(i));
    nodes_.push_back(node);
    next_[i] = i + 1 < n ? id + 1 : kEnd;
    prev_[i] = i > 0 ? id - 1 : kEnd;
    for (int k = 0; k < node->output_size(); ++k) {
      if (node->output(k).empty()) continue;
      Value& v = value(node->output(k));
      v.producer = id;
      v.output = k;
    }
    index_reads(id);
  }
  head_ = n > 0 ? 0 : kEnd;
}

void BodyRewriter::index_reads(NodeId owner) {
  NodeProto& n = *nodes_[owner];
  auto add = [&](std::string& name) {
    Value& v = value(name);
    v.reads.push_back({&name, owner});
    ++v.live_reads;
  };
  for (auto& in : *n.mutable_input())
    if (!in.empty()) add(in);
  for_each_subgraph(n, [&](GraphProto& g) { for_each_nested_read(g, add); });
}

void BodyRewriter::forget_reads(NodeProto& n) {
  auto drop = [&](std::string& name) {
    auto it = values_.find(name);
    if (it != values_.end() && it->second.live_reads > 0) --it->second.live_reads;
  };
  for (auto& in : *n.mutable_input())
    if (!in.empty()) drop(in);
  for_each_subgraph(n, [&](GraphProto& g) { for_each_nested_read(g, drop); });
}

const Fact* BodyRewriter::fact(const std::string& name) const {
  const Value* v = find(name);
  if (!v) return facts_.find(name);
  if (v->fact) return v->fact;
  if (!v->asked) {
    v->analysed = facts_.find(name);
    v->asked = true;
  }
  return v->analysed;
}

BodyRewriter::NodeId BodyRewriter::producer(const std::string& name, int* output) const {
  const Value* v = find(name);
  if (!v || v->producer == kEnd) return kEnd;
  if (output) *output = v->output;
  return v->producer;
}

size_t BodyRewriter::uses(const std::string& name) const {
  const Value* v = find(name);
  return (v ? v->live_reads : 0) + (is_protected(name) ? 1 : 0);
}

std::vector<BodyRewriter::NodeId> BodyRewriter::readers(const std::string& name) const {
  std::vector<NodeId> owners;
  const Value* v = find(name);
  if (!v) return owners;
  for (const Read& r : v->reads)
    if (!erased_[r.owner] && *r.place == name) owners.push_back(r.owner);
  return owners;
}

const TensorProto* BodyRewriter::stored_constant(const std::string& name) const {
  const Value* v = find(name);
  if (!v) return nullptr;
  if (v->initializer) return v->initializer;
  if (v->producer == kEnd) return nullptr;
  const NodeProto& n = *nodes_[v->producer];
  if (n.op_type() != "Constant" || !FunctionId::is_default_domain(n.domain()) || n.attribute_size() != 1) return nullptr;
  const auto& a = n.attribute(0);
  return a.name() == "value" && a.has_t() && !a.has_ref_attr_name() ? &a.t() : nullptr;
}

std::optional<TensorProto> BodyRewriter::constant(const std::string& name) const {
  if (const TensorProto* t = stored_constant(name)) return *t;
  const Fact* f = fact(name);
  if (f && f->has_tensor()) return f->to_tensor();
  return std::nullopt;
}

bool BodyRewriter::replace_value(const std::string& from, const std::string& to) {
  if (from == to || is_protected(from) || options_.dry) return false;
  changed_ = true;
  // Copies: `from` and `to` may be places that the move below rewrites.
  const std::string old_name = from, new_name = to;
  Value& source = value(old_name);
  std::vector<Read> reads = std::move(source.reads);
  source.reads.clear();
  source.live_reads = 0;
  Value& target = value(new_name);
  for (const Read& r : reads) {
    if (erased_[r.owner] || *r.place != old_name) continue;
    *r.place = new_name;
    target.reads.push_back(r);
    ++target.live_reads;
  }
  erase_if_dead(old_name);
  return true;
}

bool BodyRewriter::forward(NodeId id, const std::string& to) {
  if (options_.dry) return false;
  const std::string output = nodes_[id]->output(0);
  if (replace_value(output, to)) return true;
  const NodeProto& n = *nodes_[id];
  if (n.op_type() == "Identity" && FunctionId::is_default_domain(n.domain())) return false;
  NodeProto identity;
  identity.set_op_type("Identity");
  identity.add_input(to);
  identity.add_output(output);
  replace_node(id, std::move(identity));
  return true;
}

void BodyRewriter::set_input(NodeId id, int k, const std::string& name) {
  NodeProto& n = *nodes_[id];
  const std::string old_name = n.input(k);
  if (old_name == name) return;
  changed_ = true;
  std::string* place = n.mutable_input(k);
  if (!old_name.empty()) {
    Value& old = value(old_name);
    if (old.live_reads > 0) --old.live_reads;
  }
  *place = name;
  if (!name.empty()) {
    Value& v = value(name);
    v.reads.push_back({place, id});
    ++v.live_reads;
  }
  if (!old_name.empty()) erase_if_dead(old_name);
}

BodyRewriter::NodeId BodyRewriter::insert_before(NodeId before, NodeProto node) {
  changed_ = true;
  added_.push_back(std::move(node));
  const auto id = static_cast<NodeId>(nodes_.size());
  nodes_.push_back(&added_.back());
  erased_.push_back(false);
  next_.push_back(before);
  const NodeId prev = before == kEnd ? kEnd : prev_[before];
  prev_.push_back(prev);
  if (before != kEnd) prev_[before] = id;
  if (prev == kEnd)
    head_ = id;
  else
    next_[prev] = id;
  NodeProto& n = *nodes_[id];
  for (int k = 0; k < n.output_size(); ++k) {
    if (n.output(k).empty()) continue;
    Value& v = value(n.output(k));
    v.producer = id;
    v.output = k;
  }
  index_reads(id);
  return id;
}

BodyRewriter::NodeId BodyRewriter::replace_node(NodeId id, NodeProto node) {
  NodeProto& old = *nodes_[id];
  erased_[id] = true;
  forget_reads(old);
  const NodeId added = insert_before(id, std::move(node));
  for (const auto& in : old.input())
    if (!in.empty()) erase_if_dead(in);
  return added;
}

void BodyRewriter::erase(NodeId id) {
  if (erased_[id]) return;
  changed_ = true;
  std::vector<NodeId> work{id};
  while (!work.empty()) {
    const NodeId at = work.back();
    work.pop_back();
    if (erased_[at]) continue;
    erased_[at] = true;
    NodeProto& n = *nodes_[at];
    for (const auto& o : n.output()) {
      if (o.empty()) continue;
      Value& v = value(o);
      if (v.producer == at) v.producer = kEnd;
    }
    forget_reads(n);
    // Producers this node was the last reader of go too.
    std::vector<const std::string*> inputs;
    for (const auto& in : n.input())
      if (!in.empty()) inputs.push_back(&in);
    for_each_subgraph(n, [&](GraphProto& g) { for_each_nested_read(g, [&](std::string& s) { inputs.push_back(&s); }); });
    for (const std::string* in : inputs) {
      const Value* v = find(*in);
      if (!v || v->producer == kEnd || v->live_reads > 0 || is_protected(*in)) continue;
      const NodeProto& p = *nodes_[v->producer];
      const bool dead = std::all_of(p.output().begin(), p.output().end(),
                                    [&](const std::string& o) { return o.empty() || uses(o) == 0; });
      if (dead) work.push_back(v->producer);
    }
  }
}

void BodyRewriter::erase_if_dead(const std::string& name) {
  const Value* v = find(name);
  if (!v || v->producer == kEnd || v->live_reads > 0 || is_protected(name)) return;
  const NodeProto& p = *nodes_[v->producer];
  for (const auto& o : p.output())
    if (!o.empty() && uses(o) > 0) return;
  erase(v->producer);
}

std::string BodyRewriter::fresh(const std::string& base) {
  if (!names_) {
    names_.emplace();
    names_->insert(protected_.begin(), protected_.end());
    for (const auto& [name, v] : values_) names_->insert(name);
    collect_names(list_, *names_);
    for (const auto& n : added_) {
      for (const auto& o : n.output()) names_->insert(o);
    }
    if (target_.main_graph)
      for (const auto& t : target_.main_graph->initializer()) names_->insert(t.name());
  }
  if (names_->insert(base).second) return base;
  for (int k = 1;; ++k) {
    std::string name = base + "_" + std::to_string(k);
    if (names_->insert(name).second) return name;
  }
}

std::string BodyRewriter::add_constant(TensorProto value, NodeId /*before*/, const std::string& base) {
  changed_ = true;
  const uint64_t hash = tensor_value_hash(value);
  if (auto same = find_constant(value, hash)) return *same;
  const std::string name = fresh(base);
  constant_facts_.push_back(Fact::of_tensor(value));
  const Fact* fact = &constant_facts_.back();
  if (target_.main_graph) {
    value.set_name(name);
    TensorProto* t = target_.main_graph->add_initializer();
    *t = std::move(value);
    Value& v = this->value(name);
    v.initializer = t;
    v.fact = fact;
  } else {
    // Constants go first: they read nothing, and there they precede every node that may
    // come to read them.
    insert_before(head_, constant_node(name, std::move(value)));
    this->value(name).fact = fact;
  }
  constants_.emplace(hash, name);
  return name;
}

std::optional<std::string> BodyRewriter::find_constant(const TensorProto& value, uint64_t hash) const {
  auto [from, to] = constants_.equal_range(hash);
  if (from == to) return std::nullopt;
  const std::string key = tensor_value_key(value);
  for (auto it = from; it != to; ++it) {
    const TensorProto* t = stored_constant(it->second);
    if (t && tensor_value_key(*t) == key) return it->second;
  }
  return std::nullopt;
}

std::string BodyRewriter::remember_constant(const std::string& name) {
  const TensorProto* t = stored_constant(name);
  if (!t) return name;
  const uint64_t hash = tensor_value_hash(*t);
  if (auto same = find_constant(*t, hash)) return *same;
  constants_.emplace(hash, name);
  return name;
}

void BodyRewriter::make_constant(NodeId id, TensorProto value) {
  const std::string name = nodes_[id]->output(0);
  if (target_.main_graph) {
    value.set_name(name);
    TensorProto* t = target_.main_graph->add_initializer();
    *t = std::move(value);
    erase(id);
    this->value(name).initializer = t;
    return;
  }
  replace_node(id, constant_node(name, std::move(value)));
}

void BodyRewriter::note_assumption(const std::string& what) {
  if (!options_.notes) return;
  std::string line = options_.where.empty() ? what : options_.where + ": " + what;
  if (std::find(options_.notes->begin(), options_.notes->end(), line) == options_.notes->end())
    options_.notes->push_back(std::move(line));
}

bool BodyRewriter::commit() {
  if (!changed_) return false;
  // The list's own nodes (ids below its size) move by pointer into their new order, none
  // copied; the nodes the passes made are swapped into new elements; erased ones go.
  // (From a list on an arena, protobuf extracts heap copies: slower, the same result.)
  const auto original = static_cast<size_t>(list_.size());
  std::vector<NodeProto*> owned(original);
  list_.ExtractSubrange(0, static_cast<int>(original), owned.data());
  list_.Reserve(static_cast<int>(nodes_.size()));
  for (NodeId id = first(); id != kEnd; id = next(id)) {
    if (id < original) {
      list_.AddAllocated(std::exchange(owned[id], nullptr));
    } else {
      list_.Add()->Swap(nodes_[id]);
    }
  }
  for (NodeProto* erased : owned) delete erased;
  return true;
}

bool rewrite_body(NodeList& nodes, const FactsByName& facts, const BodyTarget& target,
                  const std::unordered_set<std::string>& protected_names, const RewriteOptions& options,
                  TransformStats& stats) {
  BodyRewriter body(nodes, facts, target, protected_names, options, stats);
  using Pass = bool (*)(BodyRewriter&);
  // Gemms before constants: a Gemm reads a weight through transB instead of a transposed
  // copy of it.
  static constexpr Pass passes[] = {
      remove_redundant_casts, form_gemms,      fold_small_constants,       rewrite_sequences_and_splits,
      simplify_shape_inputs,  apply_peepholes, merge_common_subexpressions,
  };
  bool changed = share_equal_initializers(body);
  if (changed && options.dry) return true;
  for (int round = 0; round < kMaxPassRounds; ++round) {
    bool this_round = false;
    for (Pass pass : passes) {
      this_round = pass(body) || this_round;
      if (this_round && options.dry) return true;
    }
    if (!this_round) break;
    changed = true;
  }
  return body.commit() || changed;
}

}  // namespace shapeprop::transform
