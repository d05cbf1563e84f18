// What every transform takes and counts, whichever file of the transform layer runs it:
// the inlining policy, the naming of specializations, the passes to run, and the counts
// of what they did. specialize.h (the entry point) extends it with the result; the
// transform's own files include this one, not specialize.h.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "onnx/onnx_pb.h"
#include "shapeprop/expand_ops.h"
#include "shapeprop/infer.h"
#include "shapeprop/passes.h"

namespace shapeprop {

enum class InlinePolicy {
  None,   // keep every (specialized) function
  All,    // a flat graph, for backends such as TensorRT
  Small,  // only bodies of at most TransformOptions::small_limit nodes after folding
};

// How specializations of one function are told apart.
enum class Naming {
  Copies,     // renamed copies: f__0, f__1, ... (one specialization keeps f's name)
  Overloads,  // IR-10 overloads of f: (domain, f, "__0"), ... for tools that look functions up by name
};

struct TransformOptions {
  InferOptions infer;
  InlinePolicy inline_policy = InlinePolicy::None;
  size_t small_limit = 8;
  Naming naming = Naming::Copies;
  // Functions, by (domain, name), that a backend claims (--keep): their calls stay as the
  // model wrote them, attributes included, through every inlining policy, and their bodies
  // are not specialized (a plugin registered under the name takes the call's attributes).
  std::set<std::pair<std::string, std::string>> keep;
  // The passes to run (passes.def), in order, once each: a module pass (specialize,
  // inline), then the body passes it runs over each body (fold, dce, cse, ...); body passes
  // before any module pass run over the main graph and each function called in one
  // context. Empty: the pipeline of inline_policy (default_pipeline), run until a round
  // changes nothing (at most kMaxPipelineRounds; a warning names the pass that kept changing).
  std::vector<Pass> passes;
  // Called with the model after each run of a pass of `print_after` (--print-after, in
  // pipeline order): after each round that runs it, the model as that pass left it (a body
  // pass: each body right after the pass first ran over it; specialize: after each body's
  // copy was folded by the stage's fold, if it has one).
  std::vector<Pass> print_after;
  std::function<void(Pass, const onnx::ModelProto&)> after_pass;
  // When set, models the transform is done with (each round's input, and the caller's
  // model as it was left: see consume_input) are handed here rather than destroyed, a
  // round's input possibly spent (main-graph nodes its fold took, left empty in their
  // places); so are the call nodes the inliner replaced, as the nodes of a model's graph
  // of their own. A process about to exit can
  // keep them to the end, as clang's -disable-free keeps its ASTs: freeing a large model
  // message by message is a noticeable part of a run (onnx-infer-shapes does this).
  std::function<void(onnx::ModelProto&&)> retire;
  // The caller reads `model` again only if the transform succeeds (no error, no error
  // diagnostic): the first round then moves its initializers into the result instead of
  // copying them (the weights were the largest copy of a run), and its main graph's nodes
  // that folding keeps as they are, and a transform that fails after that leaves the model
  // without them (nodes left empty in their places). Unset, a failure leaves it as it was.
  bool consume_input = false;
  // ONNX ops to expand into their function bodies before the rounds, and the opset to
  // convert the result to after them (shapeprop/expand_ops.h).
  ExpandRequest expand;
};

struct TransformStats {
  size_t nodes_before = 0;      // nodes in the graph, functions and subgraphs
  size_t nodes_after = 0;
  size_t functions_before = 0;
  size_t functions_after = 0;
  size_t calls_kept = 0;        // calls of functions left in the result (policy, or opsets that differ)
  // What each pass did, by its counters (shapeprop/passes.def): Ifs folded, calls inlined,
  // casts removed, ...
  Counters counters;
};

}  // namespace shapeprop
