// A 64-bit hash of a message's deterministic serialization, computed as the bytes are
// produced: nothing is stored, so comparing a model with its next version costs one pass
// over each and no copy.
#pragma once

#include <cstdint>

#include <google/protobuf/message_lite.h>

namespace shapeprop {

uint64_t hash_message(const google::protobuf::MessageLite& message);

}  // namespace shapeprop
