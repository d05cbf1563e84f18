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
  if (draws_random_numbers(n.op_type())) return true;
  // Dropout draws its mask when training_mode may be true.
  return std::string_view(n.op_type()) == "Dropout" && n.input_size() >= 3 && !n.input(2).empty();
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

// An attribute of numbers, strings and lists of them only (what op attributes nearly
// always are), nothing unknown to this ONNX: compared field by field below.
bool plain(const AttributeProto& a) {
  return !a.has_t() && !a.has_g() && !a.has_sparse_tensor() && !a.has_tp() && a.tensors_size() == 0 &&
         a.graphs_size() == 0 && a.sparse_tensors_size() == 0 && a.type_protos_size() == 0 &&
         a.unknown_fields().empty();
}

template <class Field>
bool same_bits(const Field& x, const Field& y) {  // -0.0 is not 0.0, as in their serializations
  return x.size() == y.size() && (x.empty() || std::memcmp(x.data(), y.data(), sizeof(x.Get(0)) * static_cast<size_t>(x.size())) == 0);
}

bool same_attribute(const AttributeProto& a, const AttributeProto& b) {
  if (a.name() != b.name() || a.type() != b.type()) return false;
  if (plain(a) && plain(b)) {  // as equal as their serializations, without making them
    const float fa = a.f(), fb = b.f();
    return a.has_type() == b.has_type() && a.has_f() == b.has_f() && std::memcmp(&fa, &fb, sizeof fa) == 0 &&
           a.has_i() == b.has_i() && a.i() == b.i() && a.has_s() == b.has_s() && a.s() == b.s() &&
           a.ref_attr_name() == b.ref_attr_name() && a.has_ref_attr_name() == b.has_ref_attr_name() &&
           a.doc_string() == b.doc_string() && a.has_doc_string() == b.has_doc_string() &&
           a.has_name() == b.has_name() && same_bits(a.ints(), b.ints()) && same_bits(a.floats(), b.floats()) &&
           std::equal(a.strings().begin(), a.strings().end(), b.strings().begin(), b.strings().end());
  }
  if (a.has_t() || b.has_t()) {
    if (a.has_t() != b.has_t() || (a.has_t() && !same_tensor_value(a.t(), b.t()))) return false;
    AttributeProto x = a, y = b;
    x.clear_t();
    y.clear_t();
    return x.SerializeAsString() == y.SerializeAsString();
  }
  return a.SerializeAsString() == b.SerializeAsString();
}

// What a node computes: domain, op, overload, number of outputs, inputs and attributes
// (in any order).
uint64_t hash_expression(const MutableBody& body, NodeId id) {
  const NodeProto& n = body.node(id);
  // (No domain: equal_node asks of nodes in ONNX's default domain only.)
  uint64_t h = hash_bytes(n.op_type());
  h = mix(h, hash_bytes(n.overload()));
  h = mix(h, static_cast<uint64_t>(body.num_outputs(id)));
  for (size_t k = 0; k < body.num_inputs(id); ++k) h = mix(h, body.input(id, k));
  uint64_t attributes = 0;
  for (const auto& a : n.attribute()) attributes += hash_attribute(a);
  return mix(h, attributes);
}

bool same_expression(const MutableBody& body, NodeId first, NodeId second) {
  const NodeProto& a = body.node(first);
  const NodeProto& b = body.node(second);
  // (Both in ONNX's default domain: equal_node asks of no other.)
  if (a.op_type() != b.op_type() || a.overload() != b.overload() || body.num_outputs(first) != body.num_outputs(second) ||
      body.num_inputs(first) != body.num_inputs(second) || a.attribute_size() != b.attribute_size())
    return false;
  for (size_t k = 0; k < body.num_inputs(first); ++k)
    if (body.input(first, k) != body.input(second, k)) return false;
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

// One walk over the body in order, remembering each node's expression and each fully
// known value: what a node or value is found equal to is a match, merged by the caller.
class Merger {
 public:
  explicit Merger(const MutableBody& body) : body_(body) { seed_known_inputs(); }

  // An earlier node computing what `id` computes, whose outputs `id`'s readers may read.
  std::optional<NodeId> equal_node(NodeId id) {
    const NodeProto& n = body_.node(id);
    if (body_.num_outputs(id) == 0 || !FunctionId::is_default_domain(n.domain()) || has_subgraph(n) || is_random(n) ||
        has_reference(n))
      return std::nullopt;
    const uint64_t h = hash_expression(body_, id);
    auto [from, to] = expressions_.equal_range(h);
    auto it = std::find_if(from, to, [&](const auto& e) { return same_expression(body_, e.second, id); });
    if (it == to) {
      expressions_.emplace(h, id);
      return std::nullopt;
    }
    if (body_.erased(it->second)) {  // its values were merged into others since: this one stands for it
      it->second = id;
      return std::nullopt;
    }
    for (size_t k = 0; k < body_.num_outputs(id); ++k) {
      if (body_.output(id, k) == ir::kNoValue) continue;
      if (body_.output(it->second, k) == ir::kNoValue || body_.is_interface(body_.output(id, k))) return std::nullopt;
    }
    return it->second;
  }

  // The node's outputs that equal an earlier value, with that value; the others are
  // remembered.
  std::vector<std::pair<ValueId, ValueId>> equal_values(NodeId id) {
    std::vector<std::pair<ValueId, ValueId>> found;
    for (size_t k = 0; k < body_.num_outputs(id); ++k) {
      const ValueId out = body_.output(id, k);
      if (out == ir::kNoValue) continue;
      const Fact* f = body_.fact(out);
      if (!fully_known(f)) continue;
      auto [it, fresh] = values_.emplace(f, Known{out, true});
      if (fresh) continue;
      if (!stands(it->second)) {  // this one stands for it from here on
        it->second = Known{out, true};
        continue;
      }
      if (body_.is_interface(out)) continue;
      found.emplace_back(out, it->second.value);
    }
    return found;
  }

 private:
  const MutableBody& body_;
  std::unordered_multimap<uint64_t, NodeId> expressions_;
  // Each fully known value seen, by its fact, and whether a node defined it (an input or
  // an initializer is always there; a node's value may be erased since).
  struct Known {
    ValueId value;
    bool from_node = false;
  };
  std::unordered_map<const Fact*, Known, FactHash, FactEqual> values_;

  // The remembered value still stands: erased since (its last reader merged away), it
  // must not take new readers.
  bool stands(const Known& k) const {
    return !k.from_node || body_.producer(k.value) != kNone || body_.stored_constant(k.value);
  }

  // Inputs and initializers whose elements the facts know, in name order (so that which
  // of two equal ones stays does not depend on the order they were indexed in).
  void seed_known_inputs() {
    std::vector<std::pair<std::string_view, ValueId>> known;
    for (ValueId v : body_.inputs_read())
      if (fully_known(body_.fact(v))) known.emplace_back(body_.name(v), v);
    std::sort(known.begin(), known.end());
    for (const auto& [name, v] : known) values_.emplace(body_.fact(v), Known{v, false});
  }
};

}  // namespace

bool merge_common_subexpressions(PassContext& ctx) {
  MutableBody& body = ctx.body();
  Merger merger(body);
  for (auto id = body.first(); id != kNone && !ctx.stop(); id = body.next(id)) {
    if (auto earlier = merger.equal_node(id)) {
      ctx.apply(Counter::SubexpressionsMerged, [&] {
        for (size_t k = 0; k < body.num_outputs(id); ++k)  // (the moves erase `id`)
          if (body.output(id, k) != ir::kNoValue) body.replace_all_uses(body.output(id, k), body.output(*earlier, k));
        if (!body.erased(id)) body.erase(id);
        return true;
      });
      continue;
    }
    if (body.erased(id)) continue;
    for (const auto& [value, earlier] : merger.equal_values(id))
      ctx.apply(Counter::EqualValuesMerged, [&, value = value, earlier = earlier] { return body.replace_all_uses(value, earlier); });
  }
  return ctx.changed();
}

bool share_equal_initializers(PassContext& ctx) {
  MutableBody& body = ctx.body();
  std::vector<std::pair<ValueId, ValueId>> found;  // an initializer, and the first equal one
  for (ValueId v : body.initializers()) {
    const onnx::TensorProto* t = body.stored_constant(v);
    if (!t || static_cast<size_t>(t->ByteSizeLong()) > kMaxSharedInitializerBytes || body.uses(v) == 0) continue;
    if (const ValueId first = body.remember_constant(v); first != v) found.emplace_back(v, first);
  }
  for (const auto& [from, to] : found) {
    if (ctx.stop()) break;
    ctx.apply(Counter::ConstantsShared, [&, from = from, to = to] { return body.replace_all_uses(from, to); });
  }
  return ctx.changed();
}

}  // namespace shapeprop::transform
