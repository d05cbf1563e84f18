// How deeply a model's text or protobuf bytes nest, measured before any parser sees
// them. ONNX's text parser and protobuf's parser both recurse once per level, so a deep
// enough input overflows the stack (ONNX's parser at ~5,000 nested Ifs); protobuf's
// default recursion limit (100) instead rejects models of ~30 nested Ifs as "malformed".
// These scans keep an explicit stack, so that the depth can be reported as what it is
// and the parsers only ever see what they handle.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>

#include "io/wire_scan.h"
#include "onnx/onnx_pb.h"
#include "shapeprop/diagnostics.h"
#include "shapeprop/limits.h"

namespace shapeprop {

// For ONNX text: the nesting of graph bodies ('{' after a graph's outputs or its
// value_info list) and of brackets of every kind. An error (at the line and column where
// the limit is passed) when subgraphs nest deeper than limits.max_subgraph_depth or
// brackets deeper than limits.max_syntax_depth().
std::optional<Diagnostic> check_text_depth(std::string_view text, std::string_view origin, const Limits& limits);

// For a serialized ModelProto: the recursion limit that lets protobuf parse it (the depth
// of its deepest message, plus a margin), or an error when GraphProtos (and function
// bodies) nest deeper than limits.max_subgraph_depth or messages deeper than
// limits.max_syntax_depth(). Bytes that are not well-formed protobuf give
// limits.max_syntax_depth(): protobuf's parser then reports them.
Result<int> binary_recursion_limit(std::string_view bytes, std::string_view origin, const Limits& limits);

// The same for a model of `size` bytes read in pieces, not held whole: `read(offset, out,
// n)` puts up to n of its bytes from `offset` on into `out` and gives how many (0 past its
// end), or an error. The pieces are read into a buffer of `window` bytes (at least 32: a
// field's tag and length take up to 20); what the walk skips (weights, strings) is not read.
using ReadAt = std::function<Result<size_t>(uint64_t offset, char* out, size_t n)>;
Result<int> binary_recursion_limit(const ReadAt& read, uint64_t size, std::string_view origin, const Limits& limits,
                                   size_t window = size_t{1} << 20);

// Parsing first, scanning only what fails (load.cc; the scan is a fifth of a load's work):
// the recursion limit at which protobuf parses exactly the models whose messages nest at
// most limits.max_syntax_depth() deep, so that its parser's depth stays what the scan
// would allow; and, for a model so parsed, the scan's error when GraphProtos (and function
// bodies) nest deeper than limits.max_subgraph_depth.
int binary_parse_limit(const Limits& limits);
std::optional<Diagnostic> parsed_subgraph_depth_error(const onnx::ModelProto& model, std::string_view origin,
                                                      const Limits& limits);

// The scan binary_recursion_limit makes, for a model of `size` bytes (or at most `size`,
// when it is checked as it arrives), and the error for an outcome that passed a limit.
WireScan binary_depth_scan(uint64_t size, const Limits& limits);
std::optional<Diagnostic> binary_depth_error(WireScan::Outcome outcome, std::string_view origin, const Limits& limits);

}  // namespace shapeprop
