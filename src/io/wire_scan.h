// A walk of serialized ModelProto bytes through protobuf's wire format along ONNX's
// schema, with an explicit stack, that stops where the bytes at hand end and goes on
// when more arrive. The depth check of a whole model (syntax_depth.cc) runs it once over
// all the bytes; the check of a device's or FIFO's first bytes (model_prefix.cc) runs it
// after every chunk read, so that bytes no parser could take end the reading at once.
// The schema is onnx_wire.h's table (protobuf-lite has no descriptors to follow).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "io/onnx_wire.h"

namespace shapeprop {

// Reads a base-128 varint at `pos` among the bytes before `end`, moving `pos` past it.
enum class VarintRead { Ok, Short, Overlong };
VarintRead read_long_varint(std::string_view bytes, uint64_t& pos, uint64_t end, uint64_t& value);
inline VarintRead read_varint(std::string_view bytes, uint64_t& pos, uint64_t end, uint64_t& value) {
  // One byte, as most tags and lengths are, without a call: the nesting scan reads little
  // else, so the call would be much of its work.
  if (pos < end && static_cast<uint8_t>(bytes[pos]) < 0x80) {
    value = static_cast<uint8_t>(bytes[pos++]);
    return VarintRead::Ok;
  }
  return read_long_varint(bytes, pos, end, value);
}

class WireScan {
 public:
  enum class Outcome {
    NeedMore,          // the bytes end before the message does: nothing wrong so far
    Ended,             // the message ended where `size` said
    TooManySubgraphs,  // GraphProtos and FunctionProtos nest deeper than max_bodies
    TooManyMessages,   // messages nest deeper than max_messages
    Malformed,         // no protobuf parser reads these bytes as a ModelProto
  };

  // `size`: the message's length, or for bytes read as they arrive the most it may have.
  WireScan(uint64_t size, size_t max_bodies, size_t max_messages);

  // Goes on through `bytes`: the message's first bytes, all of those passed before and
  // perhaps more. Fields the schema does not know are skipped, as protobuf does.
  Outcome advance(std::string_view bytes) { return advance(bytes, 0); }

  // The same through a window of the message: `window` holds its bytes from offset `base`
  // on, where base is at most position() (a window need not hold what was walked past).
  Outcome advance(std::string_view window, uint64_t base);

  // Where the walk goes on: the offset of the next field to read, or of the end of a
  // value being skipped (perhaps past the bytes given so far).
  uint64_t position() const { return pos_; }

  // The deepest nesting of messages seen.
  size_t messages() const { return messages_; }

 private:
  // One open message (or group).
  struct Frame {
    onnx_wire::Message type;                   // None for a group of unknown fields
    uint64_t end;                              // where a message ends; its parent's end for a group
    uint64_t group_field;                      // the group's field number
    bool graph;                                // a GraphProto or FunctionProto: a body of nodes
  };
  std::vector<Frame> stack_;
  uint64_t pos_ = 0;  // where the next field begins
  size_t bodies_ = 0;
  size_t messages_ = 0;
  const size_t max_bodies_;
  const size_t max_messages_;
};

}  // namespace shapeprop
