// Limits: how much input, nesting and growth shapeprop accepts before it stops with a
// one-line error (or, for inlining, keeps the call and says so in a note), so that no
// input can exhaust memory, time or the stack. Each has a default and a CLI flag
// (tools/onnx-infer-shapes); the "Limits" table of docs/cli.md lists them.
//
// Depths are measured statically, before any analysis, with explicit work lists:
// load_model() checks the input size and how deep the text or protobuf nests (so that
// neither ONNX's text parser nor protobuf's recurses without bound), validate_model()
// checks subgraph nesting and call depth along every path from the main graph.
//
// The recursive walkers that come after (ONNX's parser and checker, the analyzer, the
// printer, the rewrites) are bounded by those checks: none sees a model deeper than the
// depth flags allow, and kMaxDepthSetting caps the flags where an 8 MiB stack holds.
// The core enforces the rest: inlining (src/transform/specialize.cc, fit_inlining: calls
// stay, with a note), specializations per function (Round::run: the function stays as
// written, with a note), Dim size (Dim::MaxTerms, set by infer_shapes, specialize,
// check_model and apply_overrides for their thread).
#pragma once

#include <cstddef>
#include <cstdint>

namespace shapeprop {

struct Limits {
  // Bytes of input read (--max-input-size). Protobuf cannot hold a message of 2 GiB or
  // more, so the default is the largest model it can read. Reading stops as soon as
  // the limit is passed, so /dev/zero costs this much memory at most.
  uint64_t max_input_bytes = (uint64_t{1} << 31) - 1;

  // Seconds to wait for the other end of a FIFO (--max-fifo-wait): a writer and data for
  // an input, a reader for an output. Opening a FIFO nobody writes to (or reads from)
  // would otherwise block forever.
  uint32_t fifo_wait_seconds = 10;

  // Subgraphs (If branches, Loop and Scan bodies) nested in subgraphs, counted along
  // every path from the main graph, through calls (--max-subgraph-depth). The main graph
  // and function bodies are depth 0; an If's branch there is depth 1.
  size_t max_subgraph_depth = 64;

  // Calls of model-local functions nested in calls, along every path from the main graph
  // (--max-call-depth): a call from the main graph is depth 1.
  size_t max_call_depth = 64;

  // Elements inference may materialise for one value (--max-elements): a shape built
  // from a 1-D tensor has that many dims, so ONNX's inference functions are not handed
  // the length of a longer one (Reshape to a shape of 3,037,000,500 elements would
  // otherwise build that many dims). Facts keep elements of far smaller tensors
  // (Fact::kMaxIntElements, kMaxRealElements).
  size_t max_elements = size_t{1} << 16;

  // Total nodes after inlining may reach max(inline_growth x the nodes before,
  // max_inlined_nodes) (--max-inlined-nodes, --max-inline-growth); beyond, the calls of
  // the functions whose staying leaves the fewest nodes stay, chosen one at a time.
  size_t max_inlined_nodes = 1'000'000;
  size_t inline_growth = 16;

  // Specialized copies of one function (--max-specializations); a function whose
  // contexts need more different folded bodies stays as written for all of them,
  // annotated with the join of their facts.
  size_t max_specializations = 256;

  // Terms of one Dim expression (--max-dim-terms, at most Dim::kMaxTermsCeiling); beyond,
  // the Dim is unknown.
  size_t max_dim_terms = 8;

  // How deep text brackets or protobuf messages may nest, derived from the subgraph
  // depth: one subgraph level costs a few (a node's attribute list and the graph's
  // body), and types nest too (seq(seq(tensor(float)))). Both parsers recurse on each
  // level, so this bounds their stack.
  size_t max_syntax_depth() const { return 4 * max_subgraph_depth + 64; }

  // The largest depth the flags accept. Recursive walkers (ONNX's checker and parser,
  // the printer, the analyzer) stay inside an 8 MiB stack up to it with room to spare:
  // the ASan build, whose frames are largest, overflows a 2 MiB stack at ~60 nested
  // calls in the analyzer and passes 256 calls plus 256 subgraphs along one path in
  // 8 MiB. Real models nest a few levels; the default, 64, leaves a margin.
  static constexpr size_t kMaxDepthSetting = 128;
};

}  // namespace shapeprop
