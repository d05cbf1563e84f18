// Depth scans of text and protobuf bytes; see syntax_depth.h.
#include "io/syntax_depth.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "io/onnx_wire.h"

namespace shapeprop {

namespace {

// Said where the limit is first passed: the input may nest deeper still.
std::string subgraph_error(size_t limit) {
  return "subgraphs are nested more than " + std::to_string(limit) + " deep (--max-subgraph-depth)";
}

std::string syntax_error(const char* what, size_t limit) {
  return std::string(what) + " are nested more than " + std::to_string(limit) +
         " deep (the limit is 4 x --max-subgraph-depth + 64)";
}

}  // namespace

std::optional<Diagnostic> check_text_depth(std::string_view text, std::string_view origin, const Limits& limits) {
  std::vector<bool> open;  // one per open bracket: does it open a graph body?
  size_t graphs = 0;
  int line = 1, column = 0;
  char previous = 0;  // the last character that is not blank, in a comment or in a string
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    ++column;
    if (c == '\n') {
      ++line;
      column = 0;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r') continue;
    if (c == '#') {  // a comment, to the end of the line
      while (i + 1 < text.size() && text[i + 1] != '\n') ++i;
      continue;
    }
    if (c == '"') {  // a string literal, with backslash escapes; newlines inside count
      while (++i < text.size() && text[i] != '"') {
        if (text[i] == '\\') ++i;
        if (i < text.size() && text[i] == '\n') {
          ++line;
          column = 0;
        }
      }
      previous = '"';
      continue;
    }
    const bool opens = c == '(' || c == '[' || c == '{' || c == '<';
    const bool closes = c == ')' || c == ']' || c == '}' || (c == '>' && previous != '=');  // "=>" closes nothing
    if (opens) {
      // A graph's body follows its output list, or the value_info/initializer list after it.
      const bool body = c == '{' && (previous == ')' || previous == '>');
      open.push_back(body);
      if (body) ++graphs;
      if (body && graphs - 1 > limits.max_subgraph_depth)
        return Diagnostic::error(subgraph_error(limits.max_subgraph_depth))
            .in_file(std::string(origin), line, column);
      if (open.size() > limits.max_syntax_depth())
        return Diagnostic::error(syntax_error("brackets", limits.max_syntax_depth()))
            .in_file(std::string(origin), line, column);
    } else if (closes && !open.empty()) {
      if (open.back()) --graphs;
      open.pop_back();
    }
    previous = c;
  }
  return std::nullopt;
}

namespace {

// Reads a base-128 varint at `pos`; false when it runs past `end` or beyond 10 bytes.
bool read_varint(std::string_view bytes, size_t& pos, size_t end, uint64_t& value) {
  value = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (pos >= end) return false;
    const auto byte = static_cast<uint8_t>(bytes[pos++]);
    value |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) return true;
  }
  return false;
}

enum WireType : uint64_t { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kStartGroup = 3, kEndGroup = 4, kFixed32 = 5 };

// One open message (or group) while scanning.
struct Frame {
  onnx_wire::Message type;  // None for a group of unknown fields
  size_t end;               // where a message ends; its parent's end for a group
  uint64_t group_field;     // the group's field number
  bool graph;               // a GraphProto or FunctionProto: a body of nodes
};

// How a scan ended: the deepest message nesting seen (for protobuf's recursion limit), or
// the first limit passed, or bytes that are not well-formed protobuf.
struct ScanResult {
  enum { Ok, TooManySubgraphs, TooManyMessages, Malformed } outcome = Ok;
  size_t messages = 0;
};

// Follows ONNX's schema through the wire format with an explicit stack (fields it does
// not know are skipped, as protobuf does), counting nested messages and nested bodies of
// nodes (GraphProto, FunctionProto). Stops as soon as a limit is passed.
ScanResult scan(std::string_view bytes, size_t max_bodies, size_t max_messages) {
  using onnx_wire::Message;
  std::vector<Frame> stack = {{Message::Model, bytes.size(), 0, false}};
  size_t bodies = 0;
  ScanResult result;
  size_t pos = 0;
  auto malformed = [&result] {
    result.outcome = ScanResult::Malformed;
    return result;
  };
  while (true) {
    const Frame top = stack.back();
    if (pos == top.end && top.type != Message::None) {
      if (stack.size() == 1) return result;
      bodies -= top.graph ? 1 : 0;
      stack.pop_back();
      continue;
    }
    uint64_t tag, length;
    if (!read_varint(bytes, pos, top.end, tag)) return malformed();
    const uint64_t field = tag >> 3;
    if (field == 0) return malformed();
    switch (tag & 7) {
      case kVarint:
        if (!read_varint(bytes, pos, top.end, length)) return malformed();
        continue;
      case kFixed64:
      case kFixed32: {
        const size_t width = (tag & 7) == kFixed64 ? 8 : 4;
        if (top.end - pos < width) return malformed();
        pos += width;
        continue;
      }
      case kLengthDelimited: {
        if (!read_varint(bytes, pos, top.end, length) || length > top.end - pos) return malformed();
        const Message type = onnx_wire::field_message(top.type, field);
        if (type == Message::None) {
          pos += length;
          continue;
        }
        const bool graph = type == Message::Graph || type == Message::Function;
        stack.push_back({type, pos + static_cast<size_t>(length), 0, graph});
        if (graph && ++bodies > max_bodies) {
          result.outcome = ScanResult::TooManySubgraphs;
          return result;
        }
        break;
      }
      case kStartGroup:
        stack.push_back({Message::None, top.end, field, false});
        break;
      case kEndGroup:
        if (top.type != Message::None || top.group_field != field) return malformed();
        stack.pop_back();
        continue;
      default:
        return malformed();
    }
    result.messages = std::max(result.messages, stack.size() - 1);
    if (result.messages > max_messages) {
      result.outcome = ScanResult::TooManyMessages;
      return result;
    }
  }
}

}  // namespace

Result<int> binary_recursion_limit(std::string_view bytes, std::string_view origin, const Limits& limits) {
  const size_t syntax_limit = limits.max_syntax_depth();
  // The main graph and function bodies are depth 0 of subgraph nesting.
  const ScanResult scanned = scan(bytes, limits.max_subgraph_depth + 1, syntax_limit);
  switch (scanned.outcome) {
    case ScanResult::TooManySubgraphs:
      return Diagnostic::error(subgraph_error(limits.max_subgraph_depth)).in_file(std::string(origin));
    case ScanResult::TooManyMessages:
      return Diagnostic::error(syntax_error("protobuf messages", syntax_limit)).in_file(std::string(origin));
    case ScanResult::Malformed:
      return static_cast<int>(syntax_limit);
    case ScanResult::Ok:
      break;
  }
  return static_cast<int>(scanned.messages) + 2;
}

}  // namespace shapeprop
