// The key of a schema lookup's cache (OnnxBridge::find_schema, CheckerRegistry::GetSchema):
// one spelling per (domain, op, version), '\0's and all.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace shapeprop {

// Spells the key into `key`, whose storage a cache reuses from one lookup to the next (a
// lookup at every node makes no string): the domain's length, the domain, the op, then the
// version's bytes.
inline void spell_schema_key(std::string& key, std::string_view domain, std::string_view op, int version) {
  const auto domain_size = static_cast<uint32_t>(domain.size());
  key.assign(reinterpret_cast<const char*>(&domain_size), sizeof domain_size);
  key += domain;
  key += op;
  key.append(reinterpret_cast<const char*>(&version), sizeof version);
}

}  // namespace shapeprop
