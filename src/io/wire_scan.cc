// The resumable walk through protobuf's wire format; see wire_scan.h.
#include "io/wire_scan.h"

#include <algorithm>
#include <cstdint>

namespace shapeprop {

namespace {

enum WireType : uint64_t { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kStartGroup = 3, kEndGroup = 4, kFixed32 = 5 };

}  // namespace

VarintRead read_long_varint(std::string_view bytes, uint64_t& pos, uint64_t end, uint64_t& value) {
  value = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (pos >= end) return VarintRead::Short;
    const auto byte = static_cast<uint8_t>(bytes[pos++]);
    value |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) return VarintRead::Ok;
  }
  return VarintRead::Overlong;
}

WireScan::WireScan(uint64_t size, size_t max_bodies, size_t max_messages)
    : stack_{{onnx_wire::Message::Model, size, 0, false}}, max_bodies_(max_bodies), max_messages_(max_messages) {}

WireScan::Outcome WireScan::advance(std::string_view window, uint64_t base) {
  using onnx_wire::Message;
  const uint64_t available = base + window.size();  // the end of the bytes at hand
  while (true) {
    if (pos_ > available) return Outcome::NeedMore;  // inside a value that is skipped
    const Frame& top = stack_.back();  // read before the stack changes below
    if (pos_ == top.end && top.type != Message::None) {
      if (stack_.size() == 1) return Outcome::Ended;
      bodies_ -= top.graph ? 1 : 0;
      stack_.pop_back();
      continue;
    }
    // A field is read whole or not at all: one cut short is read again with more bytes.
    const uint64_t here = std::min<uint64_t>(top.end, available);
    const Outcome short_field = here < top.end ? Outcome::NeedMore : Outcome::Malformed;
    // Offsets in the window from here on, as the varint reads take them.
    uint64_t pos = pos_ - base, tag = 0, length = 0;
    const uint64_t window_end = here - base;
    if (pos >= window_end) return short_field;
    if (auto r = read_varint(window, pos, window_end, tag); r != VarintRead::Ok)
      return r == VarintRead::Short ? short_field : Outcome::Malformed;
    // Protobuf reads tags as 32-bit numbers: field numbers run from 1 to 2^29 - 1.
    const uint64_t field = tag >> 3;
    if (field == 0 || tag > UINT32_MAX) return Outcome::Malformed;
    switch (tag & 7) {
      case kVarint:
        if (auto r = read_varint(window, pos, window_end, length); r != VarintRead::Ok)
          return r == VarintRead::Short ? short_field : Outcome::Malformed;
        pos_ = base + pos;
        continue;
      case kFixed64:
      case kFixed32: {
        const uint64_t width = (tag & 7) == kFixed64 ? 8 : 4;
        if (top.end - (base + pos) < width) return Outcome::Malformed;
        pos_ = base + pos + width;  // the value is not looked at
        continue;
      }
      case kLengthDelimited: {
        if (auto r = read_varint(window, pos, window_end, length); r != VarintRead::Ok)
          return r == VarintRead::Short ? short_field : Outcome::Malformed;
        pos += base;  // an offset in the message again
        if (length > top.end - pos) return Outcome::Malformed;
        pos_ = pos;
        const Message type = onnx_wire::field_message(top.type, field);
        if (type == Message::None) {
          pos_ += length;
          continue;
        }
        const bool graph = type == Message::Graph || type == Message::Function;
        stack_.push_back({type, pos + length, 0, graph});
        if (graph && ++bodies_ > max_bodies_) return Outcome::TooManySubgraphs;
        break;
      }
      case kStartGroup:
        pos_ = base + pos;
        stack_.push_back({Message::None, top.end, field, false});
        break;
      case kEndGroup:
        if (top.type != Message::None || top.group_field != field) return Outcome::Malformed;
        pos_ = base + pos;
        stack_.pop_back();
        continue;
      default:
        return Outcome::Malformed;
    }
    messages_ = std::max(messages_, stack_.size() - 1);
    if (messages_ > max_messages_) return Outcome::TooManyMessages;
  }
}

}  // namespace shapeprop
