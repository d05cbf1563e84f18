// The check of an input's first bytes; see model_prefix.h.
#include "io/model_prefix.h"

#include <cstdio>
#include <utility>

#include "io/syntax_depth.h"

namespace shapeprop {

namespace {

// The tag of ModelProto.ir_version: field 1, a varint.
constexpr unsigned char kIrVersionTag = 0x08;
constexpr uint64_t kVarint = 0, kLengthDelimited = 2;

// What ONNX's parser skips between tokens (isspace in the C locale).
bool is_blank(unsigned char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

bool begins_name(unsigned char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }

std::string hex(unsigned char c) {
  char text[8];
  std::snprintf(text, sizeof text, "0x%02x", c);
  return text;
}

}  // namespace

bool begins_text(std::string_view bytes) {
  for (char ch : bytes) {
    const auto c = static_cast<unsigned char>(ch);
    if (!is_blank(c)) return c == '<' || c == '#' || begins_name(c);
  }
  return false;
}

ModelPrefix::ModelPrefix(std::string origin, std::optional<Format> format, const Limits& limits)
    : origin_(std::move(origin)),
      format_(format),
      limits_(limits),
      wire_(binary_depth_scan(limits.max_input_bytes, limits)) {}

std::optional<Diagnostic> ModelPrefix::check(std::string_view bytes) {
  if (!format_) {
    size_t first = 0;
    while (first < bytes.size() && is_blank(static_cast<unsigned char>(bytes[first]))) ++first;
    if (first == bytes.size()) return std::nullopt;  // blanks so far
    const auto c = static_cast<unsigned char>(bytes[first]);
    if (first == 0 && c == kIrVersionTag) {
      format_ = Format::Binary;
    } else if (begins_text(bytes)) {
      format_ = Format::Text;
    } else {
      return Diagnostic::error("not an ONNX model: it begins with byte " + hex(c) + " at offset " + std::to_string(first) +
                               ", which begins neither a serialized model (its ir_version, byte 0x08) nor ONNX text "
                               "('<' or a name)")
          .in_file(origin_);
    }
  }
  return *format_ == Format::Binary ? check_binary(bytes) : check_text(bytes);
}

std::optional<Diagnostic> ModelPrefix::check_binary(std::string_view bytes) {
  if (bytes.empty()) return std::nullopt;
  const auto first = static_cast<unsigned char>(bytes[0]);
  if (first != kIrVersionTag)
    return Diagnostic::error("not an ONNX model: a serialized model begins with its ir_version (byte 0x08), not byte " +
                             hex(first))
        .in_file(origin_);
  auto malformed = [&] {
    return Diagnostic::error("not an ONNX model: the protobuf is malformed within its first " +
                             std::to_string(bytes.size()) + " bytes")
        .in_file(origin_);
  };
  // The fields before the graph, until it begins.
  while (!graph_begun_) {
    uint64_t pos = header_end_, tag = 0, value = 0;
    VarintRead read = read_varint(bytes, pos, bytes.size(), tag);
    if (read == VarintRead::Overlong) return malformed();
    if (read == VarintRead::Short) break;
    const uint64_t field = tag >> 3, wire = tag & 7;
    if (field == 7 && wire == kLengthDelimited) {
      graph_begun_ = true;
      break;
    }
    const bool varint = field == 1 || field == 5;  // ir_version, model_version
    const bool string = field == 2 || field == 3 || field == 4 || field == 6 || field == 8;
    if (!(varint && wire == kVarint) && !(string && wire == kLengthDelimited))
      return Diagnostic::error("not an ONNX model: before its graph, a serialized model holds ModelProto's fields 1-6 "
                               "and 8 only (ir_version, producer, domain, model_version, doc_string, opset_import), not "
                               "field " + std::to_string(field) + " of wire type " + std::to_string(wire) +
                               " (at offset " + std::to_string(header_end_) + ")")
          .in_file(origin_);
    read = read_varint(bytes, pos, bytes.size(), value);
    if (read == VarintRead::Overlong) return malformed();
    if (read == VarintRead::Short) break;
    header_end_ = varint ? pos : pos + value;  // may lie beyond the bytes so far: read on
    if (header_end_ < pos) return malformed();  // a length past 2^64
  }
  const WireScan::Outcome outcome = wire_.advance(bytes);
  if (auto error = binary_depth_error(outcome, origin_, limits_)) return error;
  if (outcome == WireScan::Outcome::Malformed) return malformed();
  return std::nullopt;
}

std::optional<Diagnostic> ModelPrefix::check_text(std::string_view bytes) {
  for (; next_ < bytes.size(); ++next_) {
    const auto c = static_cast<unsigned char>(bytes[next_]);
    if (c == '\n') {
      ++line_;
      column_ = 0;
    } else {
      ++column_;
    }
    switch (text_) {
      case Text::Start:
        if (c == '#') text_ = Text::StartComment;
        if (c == '<' || begins_name(c)) text_ = Text::Code;
        if (c == '#' || c == '<' || begins_name(c) || is_blank(c)) continue;
        return Diagnostic::error("not ONNX text: it begins with byte " + hex(c) + ", not '<' or a name")
            .in_file(origin_, line_, column_);
      case Text::StartComment:
      case Text::Comment:
        if (c == '\n') text_ = text_ == Text::Comment ? Text::Code : Text::Start;
        continue;
      case Text::Code:
        if (c == '#') {
          text_ = Text::Comment;
        } else if (c == '"' || c == '\'') {
          text_ = Text::Quoted;
          quote_ = static_cast<char>(c);
        } else if (!is_blank(c) && (c < 0x20 || c > 0x7e)) {
          return Diagnostic::error("not ONNX text: byte " + hex(c) +
                                   " outside a string, a quoted name or a comment")
              .in_file(origin_, line_, column_);
        }
        continue;
      case Text::Quoted:
        if (c == '\\') text_ = Text::Escaped;
        if (c == static_cast<unsigned char>(quote_)) text_ = Text::Code;
        continue;
      case Text::Escaped:
        text_ = Text::Quoted;
        continue;
    }
  }
  return std::nullopt;
}

}  // namespace shapeprop
