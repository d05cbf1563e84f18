#include "ir/mutable_body.h"

#include <algorithm>
#include <cstring>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "shapeprop/function_id.h"
#include "support/repeated_fields.h"
#include "support/subgraphs.h"

namespace shapeprop::ir {

namespace {

using onnx::GraphProto;
using onnx::NodeProto;
using onnx::TensorProto;

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

// Every read in a subgraph (node inputs, to any depth, and its outputs) of a name that
// neither it nor a graph between it and this level defines before the read: the reads
// of this level's (and outer) values. A subgraph may define a name that this level
// defines too, after the node holding it or in a sibling's branch (ONNX's scoping allows
// both, and folding a branch into this level makes them); reads of it there are the
// subgraph's own value, which no edit of this level's may rename. `local` holds the names
// each enclosing subgraph has defined so far (views of the protos' strings).
template <class Fn>
void for_each_free_read(GraphProto& g, std::vector<NameMap>& local, Fn&& fn) {
  const size_t depth = local.size();
  local.emplace_back();
  for (const auto& in : g.input()) local[depth].insert(in.name());
  for (const auto& t : g.initializer()) local[depth].insert(t.name());
  auto free = [&local](std::string_view name) {
    return std::none_of(local.begin(), local.end(), [name](const NameMap& m) { return m.contains(name); });
  };
  for (auto& n : *g.mutable_node()) {
    for (auto& in : *n.mutable_input())
      if (!in.empty() && free(in)) fn(in);
    for_each_subgraph(n, [&](GraphProto& sg) { for_each_free_read(sg, local, fn); });
    for (const auto& o : n.output())
      if (!o.empty()) local[depth].insert(o);
  }
  for (auto& o : *g.mutable_output())
    if (free(o.name())) fn(*o.mutable_name());
  local.pop_back();
}

}  // namespace

std::string tensor_value_key(const TensorProto& t) {
  std::string key;
  visit_tensor_value(t, [&key](const void* data, size_t bytes) { key.append(static_cast<const char*>(data), bytes); });
  return key;
}

bool same_tensor_value(const TensorProto& a, const TensorProto& b) {
  // Where each holds its data in one field at most (the fields visit_tensor_value tags),
  // the keys are equal exactly where the types, dims, that field and its data are: the
  // type, the rank and the dims are the keys' first bytes, the field's tag comes next.
  // Otherwise (several fields, external data, segments: invalid or rare) by the keys.
  auto simple = [](const TensorProto& t) {
    if (t.external_data_size() > 0 || t.has_segment() || t.data_location() != TensorProto::DEFAULT) return false;
    const int fields = int{t.has_raw_data()} + int{!t.float_data().empty()} + int{!t.int32_data().empty()} +
                       int{!t.int64_data().empty()} + int{!t.double_data().empty()} +
                       int{!t.uint64_data().empty()} + int{!t.string_data().empty()};
    return fields <= 1;
  };
  if (!simple(a) || !simple(b)) return tensor_value_key(a) == tensor_value_key(b);
  if (a.data_type() != b.data_type() || a.dims_size() != b.dims_size() ||
      !std::equal(a.dims().begin(), a.dims().end(), b.dims().begin()))
    return false;
  auto same = [](const auto& x, const auto& y) {
    return x.size() == y.size() &&
           (x.empty() || std::memcmp(x.data(), y.data(), sizeof(x.Get(0)) * static_cast<size_t>(x.size())) == 0);
  };
  return a.has_raw_data() == b.has_raw_data() && a.raw_data() == b.raw_data() && same(a.float_data(), b.float_data()) &&
         same(a.int32_data(), b.int32_data()) && same(a.int64_data(), b.int64_data()) &&
         same(a.double_data(), b.double_data()) && same(a.uint64_data(), b.uint64_data()) &&
         std::equal(a.string_data().begin(), a.string_data().end(), b.string_data().begin(), b.string_data().end());
}

namespace {

void hash_bytes(uint64_t& h, const void* data, size_t bytes) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (; bytes >= 8; p += 8, bytes -= 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    h = (h ^ w) * 0xff51afd7ed558ccdull;
    h ^= h >> 32;
  }
  for (; bytes > 0; ++p, --bytes) h = (h ^ *p) * 0x100000001b3ull;
}

}  // namespace

uint64_t tensor_value_hash(const TensorProto& t) {
  uint64_t h = 0x9e3779b97f4a7c15ull;
  visit_tensor_value(t, [&h](const void* data, size_t bytes) { hash_bytes(h, data, bytes); });
  return h;
}

uint64_t tensor_sample_hash(const TensorProto& t) {
  constexpr size_t kEnd = 64;
  uint64_t h = 0x9e3779b97f4a7c15ull;
  visit_tensor_value(t, [&h](const void* data, size_t bytes) {
    if (bytes <= 2 * kEnd) {
      hash_bytes(h, data, bytes);
      return;
    }
    hash_bytes(h, &bytes, sizeof bytes);
    hash_bytes(h, data, kEnd);
    hash_bytes(h, static_cast<const char*>(data) + bytes - kEnd, kEnd);
  });
  return h;
}

NodeProto constant_node(const std::string& name, TensorProto value) {
  value.clear_name();
  NodeProto c;
  c.set_op_type("Constant");
  c.add_output(name);
  auto* a = c.add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  *a->mutable_t() = std::move(value);
  return c;
}

MutableBody::MutableBody(NodeList& nodes, const FactSource& facts, GraphProto* main_graph,
                         const ValueNames& interface)
    : list_(nodes), main_graph_(main_graph) {
  const auto n = static_cast<size_t>(nodes.size());
  // With room for the nodes the rewrites insert (unflattened MatMuls, a Reshape around a
  // Gemm): the first insert into a full vector would double it, moving every node (costly
  // to move) while both copies are held, at the round's peak of memory.
  nodes_.reserve(n + n / 8 + 16);
  // Names are resolved here only: by value from here on.
  // Sized for every value up front (about two per node, and each initializer: a model of
  // weights has more of those than nodes), so that the index never grows while it fills.
  NameIndex by_name(n * 2 + interface.size() + (main_graph ? static_cast<size_t>(main_graph->initializer_size()) : 0));
  for (std::string_view name : interface) values_[resolve(name, by_name)].interface = true;
  if (main_graph) {
    std::unordered_set<std::string_view> inputs;
    for (const auto& in : main_graph->input()) inputs.insert(in.name());
    for (int i = 0; i < main_graph->initializer_size(); ++i) {
      const TensorProto& t = main_graph->initializer(i);
      if (inputs.count(t.name())) continue;
      const ValueId v = resolve(t.name(), by_name);
      values_[v].initializer = &t;
      if (facts.initializer) values_[v].fact = facts.initializer(static_cast<size_t>(i), t.name());
      initializers_.push_back(v);
    }
  }
  for (size_t i = 0; i < n; ++i) {
    nodes_.emplace_back().proto = nodes.Mutable(static_cast<int>(i));  // made in place: a Node is costly to move
    note_op(*nodes_[i].proto);
    const auto id = static_cast<NodeId>(i);
    nodes_[i].prev = i > 0 ? id - 1 : kNone;
    nodes_[i].next = i + 1 < n ? id + 1 : kNone;
    const auto& outputs = nodes_[i].proto->output();
    for (int k = 0; k < outputs.size(); ++k) {
      if (outputs[k].empty()) {
        nodes_[i].outputs.push_back(kNoValue);
        continue;
      }
      const ValueId v = resolve(outputs[k], by_name);
      nodes_[i].outputs.push_back(v);
      if (facts.output) values_[v].fact = facts.output(i, static_cast<size_t>(k));
    }
    set_outputs(id);
  }
  for (size_t i = 0; i < n; ++i) index_uses(static_cast<NodeId>(i), &by_name);
  values_.for_each([&facts](Value& v) {
    v.defined_before = v.producer == kNone;
    if (v.defined_before && !v.initializer && facts.outer) v.fact = facts.outer(v.name);
  });
  head_ = n > 0 ? 0 : kNone;
  tail_ = n > 0 ? static_cast<NodeId>(n - 1) : kNone;
}

ValueId MutableBody::resolve(std::string_view name, NameIndex& by_name) {
  if (const uint32_t known = by_name.find(name); known != NameIndex::kMissing) return known;
  const auto v = static_cast<ValueId>(values_.size());
  Value& value = values_.emplace_back();
  value.name = std::string(name);
  by_name.insert(value.name, v);  // views the value's own string, which stays put
  return v;
}

void MutableBody::set_outputs(NodeId id) {
  const Node& node = nodes_[id];
  for (size_t k = 0; k < node.outputs.size(); ++k) {
    const ValueId v = node.outputs[k];
    if (v == kNoValue) continue;
    values_[v].producer = id;
    values_[v].output = static_cast<uint32_t>(k);
  }
}

// The node's inputs and subgraph reads as uses. Nested reads are resolved by name, which
// only the body's construction can do: a node the rewrites make holds no subgraph.
void MutableBody::index_uses(NodeId id, NameIndex* by_name) {
  Node& node = nodes_[id];
  NodeProto& p = *node.proto;
  if (by_name) {
    node.inputs.clear();
    for (const auto& in : p.input()) {
      node.inputs.push_back(in.empty() ? kNoValue : resolve(in, *by_name));
    }
  }
  for (size_t k = 0; k < node.inputs.size(); ++k)
    if (node.inputs[k] != kNoValue) add_use(node.inputs[k], Use{id, static_cast<uint32_t>(k)});
  if (!by_name) return;
  if (has_subgraph(p)) index_nested_reads(id, *by_name);
}

// Kept out of index_uses, which runs for every node: few hold subgraphs.
void MutableBody::index_nested_reads(NodeId id, NameIndex& by_name) {
  Node& node = nodes_[id];
  std::vector<NameMap> local;
  for_each_subgraph(*node.proto, [&](GraphProto& g) {
    for_each_free_read(g, local, [&](std::string& name) {
      const ValueId v = resolve(name, by_name);
      node.nested.push_back({v, &name});
      add_use(v, Use{id, static_cast<uint32_t>(kNested + node.nested.size() - 1)});
    });
  });
}

void MutableBody::add_use(ValueId v, Use u) {
  values_[v].uses.push_back(u);
  ++values_[v].live_uses;
}

void MutableBody::forget_uses(NodeId id) {
  const Node& node = nodes_[id];
  auto forget = [this](ValueId v) {
    if (v != kNoValue && values_[v].live_uses > 0) --values_[v].live_uses;
  };
  for (ValueId v : node.inputs) forget(v);
  for (const auto& r : node.nested) forget(r.value);
}

MutableBody::NodeId MutableBody::producer(ValueId v, size_t* output) const {
  if (v == kNoValue || values_[v].producer == kNone) return kNone;
  if (output) *output = values_[v].output;
  return values_[v].producer;
}

size_t MutableBody::uses(ValueId v) const {
  if (v == kNoValue) return 0;
  return values_[v].live_uses + (values_[v].interface ? 1 : 0);
}

std::vector<MutableBody::NodeId> MutableBody::readers(ValueId v) const {
  std::vector<NodeId> owners;
  if (v == kNoValue) return owners;
  for (const Use& u : values_[v].uses)
    if (live(u, v)) owners.push_back(u.owner);
  return owners;
}

std::vector<ValueId> MutableBody::inputs_read() const {
  std::vector<ValueId> out;
  for (ValueId v = 0; v < values_.size(); ++v)
    if (values_[v].defined_before && values_[v].producer == kNone && values_[v].live_uses > 0) out.push_back(v);
  return out;
}

const TensorProto* MutableBody::stored_constant(ValueId v) const {
  if (v == kNoValue) return nullptr;
  const Value& value = values_[v];
  if (value.initializer) return value.initializer;
  if (value.producer == kNone) return nullptr;
  const NodeProto& n = *nodes_[value.producer].proto;
  if (n.op_type() != "Constant" || !FunctionId::is_default_domain(n.domain()) || n.attribute_size() != 1) return nullptr;
  const auto& a = n.attribute(0);
  return a.name() == "value" && a.has_t() && !a.has_ref_attr_name() ? &a.t() : nullptr;
}

std::optional<TensorProto> MutableBody::constant(ValueId v) const {
  if (const TensorProto* t = stored_constant(v)) return *t;
  const Fact* f = fact(v);
  if (f && f->has_tensor()) return f->to_tensor();
  return std::nullopt;
}

bool MutableBody::replace_all_uses(ValueId from, ValueId to) {
  if (from == to || from == kNoValue || to == kNoValue || values_[from].interface) return false;
  changed_ = true;
  auto uses = std::move(values_[from].uses);
  values_[from].uses.clear();
  values_[from].live_uses = 0;
  for (const Use& u : uses) {
    if (!live(u, from)) continue;
    Node& n = nodes_[u.owner];
    if (u.slot >= kNested) {
      NestedRead& r = n.nested[u.slot - kNested];
      r.value = to;
      *r.place = values_[to].name;
    } else {
      n.inputs[u.slot] = to;
      n.proto->set_input(static_cast<int>(u.slot), values_[to].name);
    }
    add_use(to, u);
  }
  erase_if_dead(from);
  return true;
}

bool MutableBody::can_forward(NodeId id, ValueId to) const {
  const ValueId out = output(id, 0);
  if (out == kNoValue || to == kNoValue || out == to) return false;
  if (!values_[out].interface) return true;
  // It must keep its name: the node becomes Identity(to), unless it is that already, and
  // its other outputs (a Dropout's mask) go, so nothing may read them.
  for (size_t k = 1; k < num_outputs(id); ++k)
    if (output(id, k) != kNoValue && (uses(output(id, k)) > 0 || values_[output(id, k)].interface)) return false;
  const NodeProto& n = *nodes_[id].proto;
  return !(std::string_view(n.op_type()) == "Identity" && FunctionId::is_default_domain(n.domain()) &&
           input(id, 0) == to);
}

bool MutableBody::forward(NodeId id, ValueId to) {
  if (!can_forward(id, to)) return false;
  const ValueId out = output(id, 0);
  if (replace_all_uses(out, to)) return true;
  NodeProto identity;
  identity.set_op_type("Identity");
  replace_node(id, std::move(identity), {to}, /*only_first_output=*/true);
  return true;
}

void MutableBody::set_input(NodeId id, size_t k, ValueId v) {
  Node& n = nodes_[id];
  const ValueId old = n.inputs[k];
  if (old == v) return;
  changed_ = true;
  n.inputs_set = true;
  if (old != kNoValue && values_[old].live_uses > 0) --values_[old].live_uses;
  n.inputs[k] = v;
  n.proto->set_input(static_cast<int>(k), v == kNoValue ? std::string() : values_[v].name);
  if (v != kNoValue) add_use(v, Use{id, static_cast<uint32_t>(k)});
  if (old != kNoValue) erase_if_dead(old);
}

bool MutableBody::drop_output(NodeId id, size_t k) {
  Node& n = nodes_[id];
  if (n.erased || k >= n.outputs.size()) return false;
  const ValueId v = n.outputs[k];
  if (v == kNoValue || uses(v) > 0) return false;
  changed_ = true;
  values_[v].producer = kNone;
  n.outputs[k] = kNoValue;
  n.proto->set_output(static_cast<int>(k), std::string());
  while (!n.outputs.empty() && n.outputs.back() == kNoValue) {
    n.outputs.pop_back();
    n.proto->mutable_output()->RemoveLast();
  }
  return true;
}

// Every name of the body, gathered on the first new value (most bodies never get one):
// the values' names, which hold every name read or defined at this level, the main
// graph's initializers, and every name in the subgraphs of the nodes the body started
// with (their protos stay in the list until commit()).
void MutableBody::gather_names() {
  names_.emplace();
  names_->insert("");
  values_.for_each([this](const Value& v) { names_->insert(v.name); });
  if (main_graph_)
    for (const auto& t : main_graph_->initializer()) names_->insert(t.name());
  for (const auto& n : list_)
    for_each_subgraph(n, [&](const GraphProto& g) { names_->insert_all(g, NameSet::Keep::Copies); });
  if (reserved_)
    for (const auto& name : *reserved_) names_->insert(name);
}

ValueId MutableBody::new_value(std::string_view base, const Fact* fact) {
  if (!names_) gather_names();
  std::string name = names_->fresh(base);
  const auto v = static_cast<ValueId>(values_.size());
  Value& value = values_.emplace_back();
  value.name = std::move(name);
  value.fact = fact;
  return v;
}

MutableBody::NodeId MutableBody::link_before(NodeId before, NodeProto* proto) {
  const auto id = static_cast<NodeId>(nodes_.size());
  const NodeId prev = before == kNone ? tail_ : nodes_[before].prev;
  nodes_.push_back(Node{proto, {}, {}, {}, prev, before, false, false});
  note_op(*proto);
  if (before != kNone)
    nodes_[before].prev = id;
  else
    tail_ = id;
  if (prev == kNone)
    head_ = id;
  else
    nodes_[prev].next = id;
  return id;
}

MutableBody::NodeId MutableBody::insert_before(NodeId before, NodeProto node, const std::vector<ValueId>& inputs,
                                               const std::vector<ValueId>& outputs) {
  changed_ = true;
  node.clear_input();
  node.clear_output();
  for (ValueId v : inputs) node.add_input(v == kNoValue ? std::string() : values_[v].name);
  for (ValueId v : outputs) node.add_output(v == kNoValue ? std::string() : values_[v].name);
  added_.push_back(std::move(node));
  const NodeId id = link_before(before, &added_.back());
  nodes_[id].inputs.assign(inputs.begin(), inputs.end());
  nodes_[id].outputs.assign(outputs.begin(), outputs.end());
  set_outputs(id);
  index_uses(id, nullptr);
  return id;
}

MutableBody::NodeId MutableBody::replace_node(NodeId id, NodeProto node, const std::vector<ValueId>& inputs,
                                              bool only_first_output) {
  std::vector<ValueId> outputs(nodes_[id].outputs.begin(), nodes_[id].outputs.end());
  if (only_first_output) outputs.resize(1);
  const std::vector<ValueId> old_inputs(nodes_[id].inputs.begin(), nodes_[id].inputs.end());
  std::vector<ValueId> old_nested;
  for (const auto& r : nodes_[id].nested) old_nested.push_back(r.value);
  nodes_[id].erased = true;
  forget_uses(id);
  const NodeId added = insert_before(id, std::move(node), inputs, outputs);
  for (ValueId v : old_inputs)
    if (v != kNoValue) erase_if_dead(v);
  for (ValueId v : old_nested) erase_if_dead(v);
  return added;
}

void MutableBody::erase(NodeId id) {
  if (nodes_[id].erased) return;
  changed_ = true;
  std::vector<NodeId> work{id};
  while (!work.empty()) {
    const NodeId at = work.back();
    work.pop_back();
    if (nodes_[at].erased) continue;
    nodes_[at].erased = true;
    for (ValueId o : nodes_[at].outputs)
      if (o != kNoValue && values_[o].producer == at) values_[o].producer = kNone;
    forget_uses(at);
    // Producers this node was the last reader of go too.
    std::vector<ValueId> read(nodes_[at].inputs.begin(), nodes_[at].inputs.end());
    for (const auto& r : nodes_[at].nested) read.push_back(r.value);
    for (ValueId v : read) {
      if (v == kNoValue || values_[v].producer == kNone || values_[v].live_uses > 0 || values_[v].interface) continue;
      const Node& p = nodes_[values_[v].producer];
      if (std::all_of(p.outputs.begin(), p.outputs.end(), [&](ValueId o) { return o == kNoValue || uses(o) == 0; }))
        work.push_back(values_[v].producer);
    }
  }
}

void MutableBody::collapse_identities() {
  auto is_identity = [this](NodeId id) {
    const NodeProto& n = *nodes_[id].proto;
    return std::string_view(n.op_type()) == "Identity" && FunctionId::is_default_domain(n.domain()) &&
           num_inputs(id) == 1 && num_outputs(id) == 1 && input(id, 0) != kNoValue && output(id, 0) != kNoValue;
  };
  // First the identities whose output may go (whatever their place: they can only add
  // readers of an x or take them away), then those whose output keeps its name.
  for (NodeId id = first(); id != kNone; id = next(id))
    if (is_identity(id) && !values_[output(id, 0)].interface) replace_all_uses(output(id, 0), input(id, 0));
  for (NodeId id = first(); id != kNone; id = next(id)) {
    if (!is_identity(id)) continue;
    const ValueId x = input(id, 0), y = output(id, 0);
    size_t k = 0;
    const NodeId p = producer(x, &k);
    if (!values_[y].interface || values_[x].interface || p == kNone) continue;
    // x read elsewhere too (torchvision's detector: a GatherND result concatenated and
    // returned): its readers read y, unless a subgraph defines y's name itself, where a
    // read of x by that name would find the subgraph's own value.
    if (uses(x) != 1 && defined_in_subgraph(values_[y].name)) continue;
    changed_ = true;
    nodes_[id].erased = true;
    forget_uses(id);
    values_[x].producer = kNone;
    nodes_[p].outputs[k] = y;
    nodes_[p].proto->set_output(static_cast<int>(k), values_[y].name);
    values_[y].producer = p;
    values_[y].output = static_cast<uint32_t>(k);
    if (uses(x) > 0) replace_all_uses(x, y);
  }
}

void MutableBody::remove_dead_nodes() {
  for (NodeId id = tail_; id != kNone; id = nodes_[id].prev) {
    if (nodes_[id].erased) continue;
    const auto& outs = nodes_[id].outputs;
    if (std::all_of(outs.begin(), outs.end(), [&](ValueId o) { return o == kNoValue || uses(o) == 0; })) erase(id);
  }
}

void MutableBody::erase_if_dead(ValueId v) {
  if (v == kNoValue || values_[v].producer == kNone || values_[v].live_uses > 0 || values_[v].interface) return;
  const Node& p = nodes_[values_[v].producer];
  for (ValueId o : p.outputs)
    if (o != kNoValue && uses(o) > 0) return;
  erase(values_[v].producer);
}

ValueId MutableBody::add_constant(TensorProto value, std::string_view base) {
  changed_ = true;
  const uint64_t hash = tensor_sample_hash(value);
  if (auto same = find_constant(value, hash)) return *same;
  constant_facts_.push_back(Fact::of_tensor(value));
  const ValueId v = new_value(base, &constant_facts_.back());
  if (main_graph_) {
    value.set_name(values_[v].name);
    TensorProto* t = main_graph_->add_initializer();
    *t = std::move(value);
    values_[v].initializer = t;
  } else {
    // Constants go first: they read nothing, and there they precede every node that may
    // come to read them.
    insert_before(head_, constant_node(values_[v].name, std::move(value)), {}, {v});
  }
  constants_.emplace(hash, KnownConstant{v, std::nullopt});
  return v;
}

// Constants of the same sample hash are told apart by their full hashes (computed once
// each) before their data are compared: many alike at both ends cost a hash each, not a
// comparison with every other.
std::optional<ValueId> MutableBody::find_constant(const TensorProto& value, uint64_t sample_hash) const {
  auto [from, to] = constants_.equal_range(sample_hash);
  if (from == to) return std::nullopt;
  if (std::next(from) == to) {  // one to compare with: hashing all of the data first would read it once more
    const TensorProto* t = stored_constant(from->second.value);
    if (t && same_tensor_value(*t, value)) return from->second.value;
    return std::nullopt;
  }
  const uint64_t full = tensor_value_hash(value);
  for (auto it = from; it != to; ++it) {
    const TensorProto* t = stored_constant(it->second.value);
    if (!t) continue;
    if (!it->second.full_hash) it->second.full_hash = tensor_value_hash(*t);
    if (*it->second.full_hash == full && same_tensor_value(*t, value)) return it->second.value;
  }
  return std::nullopt;
}

ValueId MutableBody::remember_constant(ValueId v) {
  const TensorProto* t = stored_constant(v);
  if (!t) return v;
  const uint64_t hash = tensor_sample_hash(*t);
  if (auto same = find_constant(*t, hash)) return *same;
  constants_.emplace(hash, KnownConstant{v, std::nullopt});
  return v;
}

bool MutableBody::defined_in_subgraph(std::string_view name) {
  if (!subgraph_definitions_) {
    // The nodes the rewrites make hold no subgraph: the list's own are every one.
    subgraph_definitions_.emplace();
    subgraph_definitions_->add_subgraph_definitions(list_);
  }
  return subgraph_definitions_->contains(name);
}

void MutableBody::make_constant(NodeId id, TensorProto value) {
  const ValueId out = output(id, 0);
  if (main_graph_ && defined_in_subgraph(values_[out].name)) {
    // An initializer (or a Constant node, which ONNX Runtime makes one) of this name would
    // be in scope where the subgraph defines it: the constant takes a fresh name, which
    // the node's readers read, or the node becomes an Identity of it.
    forward(id, add_constant(std::move(value), values_[out].name));
    return;
  }
  if (main_graph_) {
    // Equal weights tied across layers fold to one initializer in the round that computes
    // them. Only an initializer is read instead: it precedes every node.
    const uint64_t hash = tensor_sample_hash(value);
    const std::optional<ValueId> same = find_constant(value, hash);
    if (same && values_[*same].producer == kNone && replace_all_uses(out, *same)) return;
    value.set_name(values_[out].name);
    TensorProto* t = main_graph_->add_initializer();
    *t = std::move(value);
    erase(id);
    values_[out].initializer = t;
    constants_.emplace(hash, KnownConstant{out, std::nullopt});
    return;
  }
  replace_node(id, constant_node(values_[out].name, std::move(value)), {});
}

size_t MutableBody::remove_unread_initializers() {
  if (!main_graph_) return 0;
  std::unordered_set<const TensorProto*> unread;
  values_.for_each([&unread](const Value& v) {
    if (v.initializer && v.live_uses == 0 && !v.interface) unread.insert(v.initializer);
  });
  if (unread.empty()) return 0;
  auto& inits = *main_graph_->mutable_initializer();
  const auto before = static_cast<size_t>(inits.size());
  keep_in_order(inits, [&unread](const TensorProto& t, int) { return !unread.count(&t); });
  return before - static_cast<size_t>(inits.size());
}

NodeList MutableBody::copy_nodes() const {
  NodeList out;
  const auto original = static_cast<size_t>(list_.size());
  for (NodeId id = first(); id != kNone; id = next(id)) {
    NodeProto& n = *out.Add();
    n = *nodes_[id].proto;
    if (id >= original || nodes_[id].inputs_set)
      while (!n.input().empty() && n.input().rbegin()->empty()) n.mutable_input()->RemoveLast();
  }
  return out;
}

bool MutableBody::commit() {
  if (!changed_) return false;
  // The list's own nodes (ids below its size) move by pointer into their new order, none
  // copied; the nodes the rewrites made are swapped into new elements; erased ones go.
  // (From a list on an arena, protobuf extracts heap copies: slower, the same result.)
  const auto original = static_cast<size_t>(list_.size());
  std::vector<NodeProto*> owned(original);
  list_.ExtractSubrange(0, static_cast<int>(original), owned.data());
  list_.Reserve(static_cast<int>(nodes_.size()));
  for (NodeId id = first(); id != kNone; id = next(id)) {
    // Omitted inputs at the end are no inputs (set_input(kNoValue) leaves their places);
    // a node no edit gave inputs is written back as it was.
    if (id >= original || nodes_[id].inputs_set) {
      auto* inputs = nodes_[id].proto->mutable_input();
      while (!inputs->empty() && inputs->rbegin()->empty()) inputs->RemoveLast();
    }
    if (id < original)
      list_.AddAllocated(std::exchange(owned[id], nullptr));
    else
      list_.Add()->Swap(nodes_[id].proto);
  }
  for (NodeProto* erased : owned) delete erased;
  return true;
}

}  // namespace shapeprop::ir
