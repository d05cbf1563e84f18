// A message's bytes as keys are made of them: a 64-bit hash of a message's deterministic
// serialization, computed as the bytes are produced (nothing is stored, so comparing a
// model with its next version costs one pass over each and no copy); and a message's
// bytes appended to a key in place.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include <google/protobuf/message_lite.h>

namespace shapeprop {

uint64_t hash_message(const google::protobuf::MessageLite& message);

// Appends `message`'s serialization to `out`, written in place (no string of its own to
// copy). `bytes` is message.ByteSizeLong(), just computed: the write reads the sizes that
// call cached.
inline void append_serialized(std::string& out, const google::protobuf::MessageLite& message, size_t bytes) {
  const size_t at = out.size();
  out.resize(at + bytes);
  message.SerializeWithCachedSizesToArray(reinterpret_cast<uint8_t*>(out.data() + at));
}

}  // namespace shapeprop
