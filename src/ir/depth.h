// How deep a model nests, measured statically before any analysis: subgraphs (If
// branches, Loop and Scan bodies) inside subgraphs, and calls of model-local functions
// inside calls, along every path from the main graph (and from each function, reached or
// not). Everything that walks a model recursively (ONNX's checker, the analyzer, the
// printer) is safe within the limits this enforces; the walk here uses work lists.
#pragma once

#include <string_view>

#include "onnx/onnx_pb.h"
#include "shapeprop/diagnostics.h"
#include "shapeprop/limits.h"

namespace shapeprop {

struct Depths {
  size_t subgraphs = 0;  // subgraph levels along the deepest path, calls crossed
  size_t calls = 0;      // calls along the longest chain
};

// The depths along paths that start at the main graph.
Depths model_depths(const onnx::ModelProto& model);

// An error per limit passed (limits.max_subgraph_depth, limits.max_call_depth), naming
// the deepest path. Within one graph or function body first: then nothing else is
// measured. Cycles of calls (recursion, reported by validation) count as ending there.
Diagnostics check_depths(const onnx::ModelProto& model, std::string_view origin, const Limits& limits);

}  // namespace shapeprop
