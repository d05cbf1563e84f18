// Common subexpressions, in one walk over the body in order:
//  - a node with the same op, domain, attributes and inputs as an earlier one is that
//    node (never a random op, a Dropout that may be training, an op of another domain,
//    whose meaning is not ONNX's to tell, or a node holding a subgraph);
//  - a value whose facts know every element (a shape value: int64[3] {batch, seq, 300})
//    is the earlier value the facts know to be the same, whichever ops computed the two;
// and, once per body, an initializer of the main graph equal to an earlier one is that one.
// Readers move to the earlier value, which is defined before every one of them; a value
// that must keep its name (a body output) stays. Subgraphs' reads of merged values move
// with the rest (a subgraph may read the outer scope), nothing is moved into or out of one.
// Nodes are compared by a hash of what they compute, and compared whole only when two
// hashes agree.
#include <algorithm>
#include <cstring>
#include <unordered_map>

#include "rewrite_support.h"
#include "shapeprop/hash_combine.h"

namespace shapeprop::transform {

namespace {

using onnx::AttributeProto;
using onnx::NodeProto;

// Initializers beyond this many bytes are weights, left alone (equal weights are rare and
// comparing them would read every byte).
constexpr size_t kMaxSharedInitializerBytes = 8192;

bool is_random(const NodeProto& n) {
  static const std::unordered_set<std::string> random = {"RandomNormal", "RandomUniform", "RandomNormalLike",
                                                         "RandomUniformLike", "Bernoulli", "Multinomial"};
  if (random.count(n.op_type())) return true;
  // Dropout draws its mask when training_mode may be true.
  return n.op_type() == "Dropout" && n.input_size() >= 3 && !n.input(2).empty();
}

uint64_t mix(uint64_t h, uint64_t v) {
  hash_combine(h, v);
  return h;
}

uint64_t hash_bytes(std::string_view s) { return std::hash<std::string_view>()(s); }

template <class Field>
uint64_t hash_field(uint64_t h, const Field& values) {
  for (const auto& v : values) {
    uint64_t bits = 0;
    static_assert(sizeof v <= sizeof bits);
    std::memcpy(&bits, &v, sizeof v);
    h = mix(h, bits);
  }
  return h;
}

// A hash of an attribute's name and value.
uint64_t hash_attribute(const AttributeProto& a) {
  uint64_t h = mix(hash_bytes(a.name()), static_cast<uint64_t>(a.type()));
  h = mix(h, static_cast<uint64_t>(a.i()));
  const float value = a.f();
  uint32_t f = 0;
  std::memcpy(&f, &value, sizeof f);
  h = mix(h, f);
  h = mix(h, hash_bytes(a.s()));
  h = hash_field(h, a.ints());
  h = hash_field(h, a.floats());
  for (const auto& s : a.strings()) h = mix(h, hash_bytes(s));
  if (a.has_t()) h = mix(h, tensor_value_hash(a.t()));
  return h;
}

bool same_attribute(const AttributeProto& a, const AttributeProto& b) {
  if (a.name() != b.name() || a.type() != b.type()) return false;
  if (a.has_t() || b.has_t()) {
    if (a.has_t() != b.has_t() || tensor_value_key(a.t()) != tensor_value_key(b.t())) return false;
    AttributeProto x = a, y = b;
    x.clear_t();
    y.clear_t();
    return x.SerializeAsString() == y.SerializeAsString();
  }
  return a.SerializeAsString() == b.SerializeAsString();
}

// What a node computes: domain, op, overload, number of outputs, inputs and attributes
// (in any order).
uint64_t hash_expression(const NodeProto& n) {
  uint64_t h = mix(hash_bytes(n.op_type()), hash_bytes(FunctionId::canonical_domain(n.domain())));
  h = mix(h, hash_bytes(n.overload()));
  h = mix(h, static_cast<uint64_t>(n.output_size()));
  for (const auto& in : n.input()) h = mix(h, hash_bytes(in));
  uint64_t attributes = 0;
  for (const auto& a : n.attribute()) attributes += hash_attribute(a);
  return mix(h, attributes);
}

bool same_expression(const NodeProto& a, const NodeProto& b) {
  if (a.op_type() != b.op_type() || FunctionId::canonical_domain(a.domain()) != FunctionId::canonical_domain(b.domain()) ||
      a.overload() != b.overload() || a.output_size() != b.output_size() || a.input_size() != b.input_size() ||
      a.attribute_size() != b.attribute_size())
    return false;
  for (int k = 0; k < a.input_size(); ++k)
    if (a.input(k) != b.input(k)) return false;
  for (const auto& x : a.attribute()) {
    const auto same = std::find_if(b.attribute().begin(), b.attribute().end(),
                                   [&](const AttributeProto& y) { return same_attribute(x, y); });
    if (same == b.attribute().end()) return false;
  }
  return true;
}

// A value whose every element is known: the facts say whether two such are equal.
bool fully_known(const Fact* f) {
  if (!f || !f->is_tensor() || !is_integral_type(f->elem_type) || !f->ints || !f->shape) return false;
  for (const Dim& d : *f->shape)
    if (!d.is_constant()) return false;
  for (const Dim& d : *f->ints)
    if (d.is_unknown()) return false;
  return true;
}

struct FactHash {
  size_t operator()(const Fact* f) const { return f->hash(); }
};
struct FactEqual {
  bool operator()(const Fact* a, const Fact* b) const { return *a == *b; }
};

class Merger {
 public:
  explicit Merger(BodyRewriter& body) : body_(body) {}

  bool run() {
    seed_known_inputs();
    for (auto id = body_.first(); id != BodyRewriter::kEnd; id = body_.next(id)) {
      if (merge_node(id) && body_.dry()) return true;
      if (!body_.erased(id) && remember_values(id) && body_.dry()) return true;
    }
    return changed_;
  }

 private:
  BodyRewriter& body_;
  bool changed_ = false;
  std::unordered_multimap<uint64_t, BodyRewriter::NodeId> expressions_;
  // Each fully known value seen, by its fact: its name, and whether a node defined it (an
  // input or an initializer is always there; a node's value may be erased since).
  struct Known {
    std::string name;
    bool from_node = false;
  };
  std::unordered_map<const Fact*, Known, FactHash, FactEqual> values_;

  // The remembered value still stands: erased since (its last reader merged away), it
  // must not take new readers.
  bool stands(const Known& k) const {
    return !k.from_node || body_.producer(k.name) != BodyRewriter::kEnd || body_.stored_constant(k.name);
  }

  // Inputs and initializers whose elements the facts know, in name order (so that which
  // of two equal ones stays does not depend on hashing).
  void seed_known_inputs() {
    std::vector<std::pair<std::string, const Fact*>> known;
    body_.for_each_input([&](const std::string& name, const Fact* f) {
      if (fully_known(f)) known.emplace_back(name, f);
    });
    std::sort(known.begin(), known.end());
    for (const auto& [name, f] : known) values_.emplace(f, Known{name, false});
  }

  bool merge_node(BodyRewriter::NodeId id) {
    const NodeProto& n = body_.node(id);
    if (n.output_size() == 0 || !FunctionId::is_default_domain(n.domain()) || has_subgraph(n) || is_random(n) ||
        has_reference(n))
      return false;
    const uint64_t h = hash_expression(n);
    auto [from, to] = expressions_.equal_range(h);
    auto it = std::find_if(from, to, [&](const auto& e) { return same_expression(body_.node(e.second), n); });
    if (it == to) {
      expressions_.emplace(h, id);
      return false;
    }
    if (body_.erased(it->second)) {  // its values were merged into others since: this one stands for it
      it->second = id;
      return false;
    }
    const NodeProto& earlier = body_.node(it->second);
    for (int k = 0; k < n.output_size(); ++k) {
      if (n.output(k).empty()) continue;
      if (earlier.output(k).empty() || body_.is_protected(n.output(k))) return false;
    }
    if (body_.dry()) return true;
    const std::vector<std::string> outputs(n.output().begin(), n.output().end());  // the moves below erase n
    for (size_t k = 0; k < outputs.size(); ++k)
      if (!outputs[k].empty()) body_.replace_value(outputs[k], earlier.output(static_cast<int>(k)));
    if (!body_.erased(id)) body_.erase(id);
    ++body_.stats().subexpressions_merged;
    changed_ = true;
    return true;
  }

  // Merges the node's values that equal an earlier value, and remembers the others.
  bool remember_values(BodyRewriter::NodeId id) {
    const NodeProto& n = body_.node(id);
    bool found = false;
    for (int k = 0; k < n.output_size() && !body_.erased(id); ++k) {
      const std::string& out = n.output(k);
      if (out.empty()) continue;
      const Fact* f = body_.fact(out);
      if (!fully_known(f)) continue;
      auto [it, fresh] = values_.emplace(f, Known{out, true});
      if (fresh) continue;
      if (!stands(it->second)) {  // this one stands for it from here on
        it->second = Known{out, true};
        continue;
      }
      if (body_.is_protected(out)) continue;
      found = true;
      if (body_.dry()) return true;
      const std::string name = out, earlier = it->second.name;
      if (body_.replace_value(name, earlier)) {
        ++body_.stats().equal_values_merged;
        changed_ = true;
      }
    }
    return found;
  }
};

}  // namespace

bool merge_common_subexpressions(BodyRewriter& body) { return Merger(body).run(); }

bool share_equal_initializers(BodyRewriter& body) {
  const onnx::GraphProto* g = body.main_graph();
  if (!g) return false;
  std::unordered_set<std::string> inputs;
  for (const auto& in : g->input()) inputs.insert(in.name());
  std::vector<std::pair<std::string, std::string>> merges;
  for (const auto& t : g->initializer()) {
    if (inputs.count(t.name()) || static_cast<size_t>(t.ByteSizeLong()) > kMaxSharedInitializerBytes) continue;
    if (body.uses(t.name()) == 0) continue;
    std::string first = body.remember_constant(t.name());
    if (first != t.name()) merges.emplace_back(t.name(), std::move(first));
  }
  bool changed = false;
  for (const auto& [from, to] : merges) {
    if (body.dry()) return true;
    if (body.replace_value(from, to)) {
      ++body.stats().constants_shared;
      changed = true;
    }
  }
  return changed;
}

}  // namespace shapeprop::transform
