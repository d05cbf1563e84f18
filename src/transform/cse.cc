// Common subexpressions, in one walk over the body in order:
//  - a node with the same op, domain, attributes and inputs as an earlier one is that
//    node (never a random op, an inference-mode-unsure Dropout, an op of another domain,
//    whose meaning is not ONNX's to tell, or a node holding a subgraph);
//  - a value whose facts know every element (a shape value: int64[3] {batch, seq, 300})
//    is the earlier value the facts know to be the same, whichever ops computed the two;
//  - an initializer of the main graph equal to an earlier one is that one.
// Readers move to the earlier value, which is defined before every one of them; a value
// that must keep its name (a body output) stays. Subgraphs' reads of merged values move
// with the rest (a subgraph may read the outer scope), nothing is moved into or out of one.
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <algorithm>
#include <unordered_map>

#include "rewrite_support.h"

namespace shapeprop::transform {

namespace {

using onnx::AttributeProto;
using onnx::NodeProto;

// Initializers beyond this many bytes are weights, left alone (equal weights are rare and
// comparing them would read every byte).
constexpr size_t kMaxSharedInitializerBytes = 8192;

std::string serialized(const google::protobuf::MessageLite& m) {
  std::string bytes;
  google::protobuf::io::StringOutputStream raw(&bytes);
  google::protobuf::io::CodedOutputStream out(&raw);
  out.SetSerializationDeterministic(true);
  m.SerializeToCodedStream(&out);
  out.Trim();
  return bytes;
}

bool is_random(const NodeProto& n) {
  static const std::unordered_set<std::string> random = {"RandomNormal", "RandomUniform", "RandomNormalLike",
                                                         "RandomUniformLike", "Bernoulli", "Multinomial"};
  if (random.count(n.op_type())) return true;
  // Dropout draws its mask when training_mode may be true.
  return n.op_type() == "Dropout" && n.input_size() >= 3 && !n.input(2).empty();
}

// The attributes in name order, each as bytes (a tensor without its name): equal strings
// are equal attributes.
std::string attribute_key(const NodeProto& n) {
  if (n.attribute_size() == 0) return {};
  std::vector<const AttributeProto*> sorted;
  for (const auto& a : n.attribute()) sorted.push_back(&a);
  std::sort(sorted.begin(), sorted.end(), [](const AttributeProto* a, const AttributeProto* b) { return a->name() < b->name(); });
  std::string key;
  for (const AttributeProto* a : sorted) {
    if (a->has_t() && !a->t().name().empty()) {
      AttributeProto copy = *a;
      copy.mutable_t()->clear_name();
      key += serialized(copy);
    } else {
      key += serialized(*a);
    }
    key += '\x1f';
  }
  return key;
}

// Domain, op, overload, number of outputs, inputs and attributes: equal strings are
// equal nodes.
std::string expression_of(const NodeProto& n) {
  std::string e = n.domain() == "ai.onnx" ? std::string() : n.domain();
  e += '\x1e';
  e += n.op_type();
  e += '\x1e';
  e += n.overload();
  e += '\x1e';
  e += std::to_string(n.output_size());
  e += '\x1e';
  for (const auto& in : n.input()) {
    e += in;
    e += '\x1f';
  }
  e += '\x1e';
  e += attribute_key(n);
  return e;
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
    if (share_initializers()) {
      if (body_.dry()) return true;
    }
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
  std::unordered_map<std::string, BodyRewriter::NodeId> expressions_;
  std::unordered_map<const Fact*, std::string, FactHash, FactEqual> values_;

  bool share_initializers() {
    const onnx::GraphProto* g = body_.main_graph();
    if (!g) return false;
    std::unordered_set<std::string> inputs;
    for (const auto& in : g->input()) inputs.insert(in.name());
    std::unordered_map<std::string, std::string> first_of;  // value bytes -> name
    std::vector<std::pair<std::string, std::string>> merges;
    for (const auto& t : g->initializer()) {
      if (inputs.count(t.name()) || static_cast<size_t>(t.ByteSizeLong()) > kMaxSharedInitializerBytes) continue;
      onnx::TensorProto copy = t;
      copy.clear_name();
      auto [it, fresh] = first_of.emplace(serialized(copy), t.name());
      if (!fresh && body_.uses(t.name()) > 0) merges.emplace_back(t.name(), it->second);
    }
    bool changed = false;
    for (const auto& [from, to] : merges) {
      if (body_.dry()) return true;
      if (body_.replace_value(from, to)) {
        ++body_.stats().constants_shared;
        changed = changed_ = true;
      }
    }
    return changed;
  }

  // Inputs and initializers whose elements the facts know, in name order (so that which
  // of two equal ones stays does not depend on hashing).
  void seed_known_inputs() {
    std::vector<std::pair<std::string, const Fact*>> known;
    body_.for_each_input([&](const std::string& name, const Fact* f) {
      if (fully_known(f)) known.emplace_back(name, f);
    });
    std::sort(known.begin(), known.end());
    for (const auto& [name, f] : known) values_.emplace(f, name);
  }

  bool merge_node(BodyRewriter::NodeId id) {
    const NodeProto& n = body_.node(id);
    if (n.output_size() == 0 || !FunctionId::is_default_domain(n.domain()) || has_subgraph(n) || is_random(n) ||
        has_reference(n))
      return false;
    auto [it, fresh] = expressions_.emplace(expression_of(n), id);
    if (fresh) return false;
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
    const NodeProto copy_of_n = n;  // its outputs, as the moves below erase it
    const NodeProto& e = body_.node(it->second);
    for (int k = 0; k < copy_of_n.output_size(); ++k)
      if (!copy_of_n.output(k).empty()) body_.replace_value(copy_of_n.output(k), e.output(k));
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
      auto [it, fresh] = values_.emplace(f, out);
      if (fresh || body_.is_protected(out)) continue;
      found = true;
      if (body_.dry()) return true;
      const std::string name = out, earlier = it->second;
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

}  // namespace shapeprop::transform
