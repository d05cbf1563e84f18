#include "op_memo.h"

#include <algorithm>
#include <functional>

#include "shapeprop/hash_combine.h"
#include "support/proto_hash.h"

namespace shapeprop::infer {

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
  for (const onnx::AttributeProto* a : attributes) {  // each as its length (the size_t's bytes), then its bytes
    const size_t bytes = a->ByteSizeLong();
    k.attributes.append(reinterpret_cast<const char*>(&bytes), sizeof bytes);
    append_serialized(k.attributes, *a, bytes);
  }
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
