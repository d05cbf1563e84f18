#include "op_memo.h"

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>

#include "shapeprop/hash_combine.h"
#include "support/proto_hash.h"

namespace shapeprop::infer {

namespace {

// Writes into a string sized beforehand (one allocation a key, no capacity checks).
class Writer {
 public:
  explicit Writer(char* at) : at_(at) {}
  char* end() const { return at_; }
  void raw(const void* data, size_t bytes) {
    if (bytes > 0) std::memcpy(at_, data, bytes);
    at_ += bytes;
  }
  void tag(char c) { *at_++ = c; }
  void length(size_t n) {
    const auto n32 = static_cast<uint32_t>(n);  // (a message holds under 2 GiB)
    raw(&n32, sizeof n32);
  }
  void bytes(const std::string& s) {
    length(s.size());
    raw(s.data(), s.size());
  }
  template <class Field>
  void numbers(const Field& values) {
    length(static_cast<size_t>(values.size()));
    raw(values.data(), sizeof(values.Get(0)) * static_cast<size_t>(values.size()));
  }

 private:
  char* at_;
};

// Whether an attribute holds a field that append_attribute does not spell out.
bool serialized_whole(const onnx::AttributeProto& a) {
  return a.has_ref_attr_name() || a.has_t() || a.has_g() || a.has_sparse_tensor() || a.has_tp() ||
         a.tensors_size() > 0 || a.graphs_size() > 0 || a.sparse_tensors_size() > 0 || a.type_protos_size() > 0;
}

// Appends an attribute to a key, so that two attributes append the same bytes exactly where
// they hold the same fields with the same values, as their serializations would (but for
// unknown fields, which nothing reads). The common kinds (numbers, strings and lists of
// them) are spelled out: each field it holds as a tag, its length where it has one, and
// its bytes (a float by its bits: -0 is not 0), then an end; protobuf's serializer (a size
// pass, then the writing) was a third of a key. An attribute holding any other field (a
// tensor, a type, a reference, a subgraph) is serialized whole, behind a tag of its own.
void append_attribute(std::string& out, const onnx::AttributeProto& a) {
  if (serialized_whole(a)) {
    out.push_back('W');
    const size_t bytes = a.ByteSizeLong();
    out.append(reinterpret_cast<const char*>(&bytes), sizeof bytes);
    append_serialized(out, a, bytes);
    return;
  }
  constexpr size_t kLength = sizeof(uint32_t);
  size_t n = 2;  // 'A', the end
  if (a.has_name()) n += 1 + kLength + a.name().size();
  if (a.has_doc_string()) n += 1 + kLength + a.doc_string().size();
  if (a.has_type()) n += 1 + sizeof(int32_t);
  if (a.has_i()) n += 1 + sizeof(int64_t);
  if (a.has_f()) n += 1 + sizeof(float);
  if (a.has_s()) n += 1 + kLength + a.s().size();
  if (!a.ints().empty()) n += 1 + kLength + sizeof(int64_t) * static_cast<size_t>(a.ints_size());
  if (!a.floats().empty()) n += 1 + kLength + sizeof(float) * static_cast<size_t>(a.floats_size());
  if (!a.strings().empty()) {
    n += 1 + kLength;
    for (const auto& x : a.strings()) n += kLength + x.size();
  }
  const size_t start = out.size();
  out.resize(start + n);
  Writer w(out.data() + start);
  w.tag('A');
  if (a.has_name()) {
    w.tag('n');
    w.bytes(a.name());
  }
  if (a.has_doc_string()) {
    w.tag('d');
    w.bytes(a.doc_string());
  }
  if (a.has_type()) {
    w.tag('t');
    const int32_t type = a.type();
    w.raw(&type, sizeof type);
  }
  if (a.has_i()) {
    w.tag('i');
    const int64_t i = a.i();
    w.raw(&i, sizeof i);
  }
  if (a.has_f()) {
    w.tag('f');
    const float f = a.f();
    w.raw(&f, sizeof f);
  }
  if (a.has_s()) {
    w.tag('s');
    w.bytes(a.s());
  }
  if (!a.ints().empty()) {
    w.tag('I');
    w.numbers(a.ints());
  }
  if (!a.floats().empty()) {
    w.tag('F');
    w.numbers(a.floats());
  }
  if (!a.strings().empty()) {
    w.tag('S');
    w.length(static_cast<size_t>(a.strings_size()));
    for (const auto& x : a.strings()) w.bytes(x);
  }
  w.tag('\0');
  assert(w.end() == out.data() + out.size());
}

}  // namespace

std::optional<OpMemo::Key> OpMemo::key(const onnx::OpSchema& schema, int version, size_t num_outputs,
                                       const std::vector<const Fact*>& inputs,
                                       const std::vector<const onnx::AttributeProto*>& attributes) {
  if (std::any_of(inputs.begin(), inputs.end(), [](const Fact* f) { return f && f->other; })) return std::nullopt;
  if (std::any_of(attributes.begin(), attributes.end(),
                  [](const onnx::AttributeProto* a) { return a->has_g() || a->graphs_size() > 0; }))
    return std::nullopt;
  Key k;
  k.schema = &schema;
  k.version = version;
  k.num_outputs = num_outputs;
  k.inputs = inputs;
  for (const onnx::AttributeProto* a : attributes) append_attribute(k.attributes, *a);
  hash_combine(k.hash, std::hash<const void*>()(&schema));
  hash_combine(k.hash, static_cast<size_t>(version));
  hash_combine(k.hash, num_outputs);
  for (const Fact* f : inputs) hash_combine(k.hash, f ? f->hash() : 0x51ed27u);
  hash_combine(k.hash, std::hash<std::string>()(k.attributes));
  return k;
}

bool OpMemo::Entry::matches(const Key& key) const {
  if (schema != key.schema || version != key.version || num_outputs != key.num_outputs ||
      inputs.size() != key.inputs.size() || attributes != key.attributes)
    return false;
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].has_value() != (key.inputs[i] != nullptr) || (key.inputs[i] && *inputs[i] != *key.inputs[i]))
      return false;
  return true;
}

const OpMemo::Outcome* OpMemo::find(const Key& key) const {
  auto it = entries_.find(key.hash);
  if (it == entries_.end()) return nullptr;
  for (const Entry& e : it->second)
    if (e.matches(key)) return &e.outcome;
  return nullptr;
}

void OpMemo::keep(const Key& key, Outcome outcome) {
  Entry e{key.schema, key.version, key.num_outputs, {}, key.attributes, std::move(outcome)};
  e.inputs.reserve(key.inputs.size());
  for (const Fact* f : key.inputs) e.inputs.push_back(f ? std::optional<Fact>(*f) : std::nullopt);
  entries_[key.hash].push_back(std::move(e));
}

}  // namespace shapeprop::infer
