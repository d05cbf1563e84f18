// Depth scans of text and protobuf bytes; see syntax_depth.h.
#include "io/syntax_depth.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

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

WireScan binary_depth_scan(uint64_t size, const Limits& limits) {
  // The main graph and function bodies are depth 0 of subgraph nesting.
  return WireScan(size, limits.max_subgraph_depth + 1, limits.max_syntax_depth());
}

std::optional<Diagnostic> binary_depth_error(WireScan::Outcome outcome, std::string_view origin, const Limits& limits) {
  if (outcome == WireScan::Outcome::TooManySubgraphs)
    return Diagnostic::error(subgraph_error(limits.max_subgraph_depth)).in_file(std::string(origin));
  if (outcome == WireScan::Outcome::TooManyMessages)
    return Diagnostic::error(syntax_error("protobuf messages", limits.max_syntax_depth())).in_file(std::string(origin));
  return std::nullopt;
}

// Protobuf's parser takes the outermost message at the limit it is given and each message
// nested in it one lower, failing below zero: a model parses at a limit of its deepest
// nesting, counted as the scan counts (the ModelProto itself not counted).
// limits_test.cc's BinaryDepth tests hold both sides of the boundary.
int binary_parse_limit(const Limits& limits) { return static_cast<int>(limits.max_syntax_depth()); }

namespace {

// The deepest nesting of bodies from `graph` down (it counted as 1), stopping once past `most`.
size_t bodies_below(const onnx::GraphProto& graph, size_t most);

size_t attribute_bodies(const onnx::AttributeProto& a, size_t most) {
  size_t deepest = 0;
  if (a.has_g()) deepest = bodies_below(a.g(), most);
  for (const auto& g : a.graphs()) {
    if (deepest > most) break;
    deepest = std::max(deepest, bodies_below(g, most));
  }
  return deepest;
}

size_t node_bodies(const onnx::NodeProto& n, size_t most) {
  size_t deepest = 0;
  for (const auto& a : n.attribute()) {
    if (deepest > most) break;
    deepest = std::max(deepest, attribute_bodies(a, most));
  }
  return deepest;
}

size_t bodies_below(const onnx::GraphProto& graph, size_t most) {
  if (most == 0) return 1;  // already one past the limit
  size_t deepest = 0;
  for (const auto& n : graph.node()) {
    if (deepest >= most) break;
    deepest = std::max(deepest, node_bodies(n, most - 1));
  }
  return deepest + 1;
}

}  // namespace

std::optional<Diagnostic> parsed_subgraph_depth_error(const onnx::ModelProto& model, std::string_view origin,
                                                      const Limits& limits) {
  // As the scan counts: the main graph, each function body and each training graph is one
  // body; a graph in a node's (or a function's default) attribute one more than its owner.
  const size_t most = limits.max_subgraph_depth + 1;
  size_t deepest = model.has_graph() ? bodies_below(model.graph(), most) : 0;
  for (const auto& t : model.training_info()) {
    if (t.has_initialization()) deepest = std::max(deepest, bodies_below(t.initialization(), most));
    if (t.has_algorithm()) deepest = std::max(deepest, bodies_below(t.algorithm(), most));
  }
  for (const auto& f : model.functions()) {
    if (deepest > most) break;
    size_t inside = 0;
    for (const auto& n : f.node()) inside = std::max(inside, node_bodies(n, most - 1));
    for (const auto& a : f.attribute_proto()) inside = std::max(inside, attribute_bodies(a, most - 1));
    deepest = std::max(deepest, inside + 1);
  }
  if (deepest > most) return binary_depth_error(WireScan::Outcome::TooManySubgraphs, origin, limits);
  return std::nullopt;
}

namespace {

Result<int> recursion_limit(const WireScan& scan, WireScan::Outcome outcome, std::string_view origin,
                            const Limits& limits) {
  if (auto error = binary_depth_error(outcome, origin, limits)) return *error;
  // Bytes that are not well-formed protobuf (or cut short): protobuf's parser reports them.
  if (outcome != WireScan::Outcome::Ended) return static_cast<int>(limits.max_syntax_depth());
  return static_cast<int>(scan.messages()) + 2;
}

}  // namespace

Result<int> binary_recursion_limit(std::string_view bytes, std::string_view origin, const Limits& limits) {
  WireScan scan = binary_depth_scan(bytes.size(), limits);
  const WireScan::Outcome outcome = scan.advance(bytes);
  return recursion_limit(scan, outcome, origin, limits);
}

Result<int> binary_recursion_limit(const ReadAt& read, uint64_t size, std::string_view origin, const Limits& limits,
                                   size_t window_bytes) {
  std::vector<char> window(std::max<size_t>(window_bytes, 32));
  WireScan scan = binary_depth_scan(size, limits);
  uint64_t base = 0;  // the offset of window[0]
  size_t held = 0;    // bytes of the file in the window
  while (true) {
    const WireScan::Outcome outcome = scan.advance(std::string_view(window.data(), held), base);
    if (outcome != WireScan::Outcome::NeedMore) return recursion_limit(scan, outcome, origin, limits);
    // It had every byte and wants more: cut short.
    if (base + held >= size) return recursion_limit(scan, outcome, origin, limits);
    // Keep what the walk reads next; what it skips past is never read.
    const uint64_t next = scan.position();
    if (next >= base + held) {
      held = 0;
    } else {
      const size_t kept = held - static_cast<size_t>(next - base);
      std::memmove(window.data(), window.data() + (next - base), kept);
      held = kept;
    }
    base = next;
    if (base + held >= size) continue;  // skipped to the end: what is held ends the walk
    auto got = read(base + held, window.data() + held, window.size() - held);
    if (!got) return got.error();
    if (*got == 0) return recursion_limit(scan, outcome, origin, limits);  // the file ended early
    held += *got;
  }
}

}  // namespace shapeprop
