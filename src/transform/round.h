// One round of a transform stage (see specialize.cc for the stages and the pipeline).
#pragma once

#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "infer/analyzer.h"
#include "shapeprop/call_graph.h"
#include "shapeprop/passes.h"
#include "shapeprop/specialize.h"
#include "transform/body_pipeline.h"
#include "transform/function_dce.h"  // and the onnx names used here

namespace shapeprop::transform {

// A stage of a pipeline: a module pass and the body passes after it, which it runs over
// each body it writes (or, at the start of a pipeline, body passes alone: the main graph
// and each function called in one context).
struct Stage {
  std::optional<Pass> module;  // Specialize or Inline
  bool fold = false;
  bool dce = false;
  std::vector<Pass> rewrites;  // the other body passes, in order
  std::vector<Pass> passes;    // every pass of the stage, in order

  bool specializes() const { return module == Pass::Specialize; }
  bool inlines() const { return module == Pass::Inline; }
  // Whether the stage analyses the model and writes its bodies anew (a Round): all but an
  // inline without body passes after it.
  bool has_round() const { return !inlines() || fold || dce || !rewrites.empty(); }
  bool contains(Pass p) const { return std::find(passes.begin(), passes.end(), p) != passes.end(); }
};

// One round: analyse the model, write one folded copy of each reached function per
// distinct context (identical copies shared), fold the main graph, remove dead code. The
// round keeps its analysis, so that when the round changes nothing the analysis of its
// input is the analysis of the result.
class Round {
 public:
  // `take_initializers`: the round may move the input's initializers into its result (the
  // input is the transform's own copy, or the caller gave it up); otherwise it copies them
  // (the caller's model). With it, a main graph without subgraphs also gives its nodes up
  // to the fold rather than being copied (spent_input).
  // `try_unchanged`: the round first checks, without writing anything, whether it would
  // change nothing (changes_nothing); worth it unless the input is fresh from inlining.
  // `calls`: the call graph of `model` as it is, built before (validation's), or none: run()
  // builds it.
  Round(ModelProto& model, const TransformOptions& options, const Stage& stage, TransformResult& result,
        bool count_specializations, bool take_initializers, bool try_unchanged,
        std::optional<CallGraph> calls = std::nullopt)
      : model_(model),
        options_(options),
        stage_(stage),
        result_(result),
        count_specializations_(count_specializations),
        take_initializers_(take_initializers),
        try_unchanged_(try_unchanged),
        calls_(std::move(calls)) {
    if (options.after_pass)
      for (Pass p : stage.passes)
        if (p != Pass::Inline && std::find(options.print_after.begin(), options.print_after.end(), p) != options.print_after.end())
          watched_.push_back(p);
  }

  // One round of specialize + fold + remove dead code into `out`. False (and `out`
  // untouched) when the analysis found errors; an error when it could not run at all.
  // `out` takes (or copies) the input's initializers; give_back returns them.
  Result<bool> run(ModelProto& out);

  // The round changed nothing: the input takes its initializers back from `out`, and
  // stays the result, with this round's analysis of it.
  void give_back(ModelProto& out);
  const infer::Analyzer& analysis() const { return *analysis_; }
  // run() found, without writing `out`, that the round would give its input back.
  bool unchanged() const { return unchanged_; }
  // run() moved nodes of the input's main graph into `out` (fold_body's take_from): the
  // input is spent, never the result, whatever `out` compares equal to.
  bool spent_input() const { return spent_input_; }
  const Diagnostics& diagnostics() const { return diagnostics_; }

 private:
  ModelProto& model_;
  const TransformOptions& options_;
  const Stage& stage_;
  TransformResult& result_;
  const bool count_specializations_;  // later rounds see the first round's specializations
  const bool take_initializers_;
  const bool try_unchanged_;
  std::optional<CallGraph> calls_;
  std::unique_ptr<infer::Analyzer> analysis_;
  Diagnostics diagnostics_;
  std::unordered_map<const infer::CallContext*, std::string> name_of_;
  std::unordered_map<const infer::CallContext*, std::string> overload_of_;
  bool unchanged_ = false;
  bool spent_input_ = false;

  // --print-after: the passes of the stage to print the model after, in stage order (inline
  // aside: the pipeline prints it after inline_stage), and what each body was right after
  // each of them: the main graph's with its initializers then, each function's by its place
  // in the result.
  struct BodyAfter {
    NodeList nodes;
    google::protobuf::RepeatedPtrField<onnx::TensorProto> initializers;  // the main graph's
    bool taken = false;
  };
  std::vector<Pass> watched_;
  std::vector<BodyAfter> body_after_;  // of the body being written, one per watched pass
  const onnx::GraphProto* main_being_written_ = nullptr;
  std::vector<std::pair<int, std::vector<BodyAfter>>> functions_after_;
  std::vector<BodyAfter> main_after_;

  // Records the body being written as it is right after `pass`, if watched.
  void take(Pass pass, const NodeList& nodes);
  // Prints the model after each watched pass: the result `out` (before dead functions
  // and opset imports go), each body as it was after the pass.
  void print_watched(ModelProto& out);
  // What the passes watch of each body: their times, and the body after each watched pass.
  transform::PassWatch watch();

  // The common last round of --mode inline: a graph without functions (and so without
  // specializations), nothing left to fold, no dead code, no unused initializer or opset
  // import, no value_info for the round to drop. Then the round is known to change
  // nothing before it writes anything. Anything else is left to the round itself.
  bool changes_nothing(const infer::Analyzer& analysis) const;

  transform::RewriteOptions rewrite_options(int64_t opset, transform::RewriteOptions::Where where) const;

  // `out` as the input, without what the round writes anew (nodes, functions, value_info),
  // and with the input's initializers moved into it where it may take them. The analysis
  // points into the input's nodes and functions, which stay where they are.
  void start_from(ModelProto& out);

  // The input's functions and contexts, each with the specialization that serves it.
  void record_specializations(const infer::Analyzer& analysis);

  std::function<std::string(const infer::CallContext*)> callee_names();

  // Overloads are set only when specializations are overloads.
  std::function<std::string(const infer::CallContext*)> callee_overloads();

  // The rewrite passes over one folded body; a body they leave still changing after their
  // rounds is a warning naming the pass (the next round of the transform takes it up).
  transform::BodyRun rewrite(NodeList& nodes, const transform::PlacedFacts& facts, const transform::BodyTarget& target,
                             const ir::ValueNames& interface, const transform::RewriteOptions& options);

  // The rewrite passes over the subgraphs of a rewritten level's nodes (If branches, Loop
  // and Scan bodies), each on the mutable IR with the facts the analysis found in it
  // (`facts`: the level's walk, whose subgraph walks give them, by name), the innermost
  // last; a subgraph the walk did not enter (a branch never taken), or whose node the
  // level no longer writes under its first output's name, stays as folding left it.
  // `outer` gives the facts of the enclosing scopes' values, `reserved` the names a new
  // value may not take.
  void rewrite_subgraphs(NodeList& nodes, const infer::BodyFacts& facts,
                         const std::function<const Fact*(std::string_view)>& outer,
                         const std::vector<std::string>& reserved, const transform::RewriteOptions& options);

  // Where a body's folding goes, with what the stage runs of fold and dce.
  transform::BodyTarget body_target();

  FunctionProto fold_function(const FunctionProto& f, const infer::Summary& facts, const infer::CallContext& context);

  void fold_main_graph(const infer::Analyzer& analysis, ModelProto& out);

  // A call the analysis did not specialize (one only ONNX's own rules walked, inside a
  // SequenceMap body) keeps calling the original function, which then stays.
  void restore_missing_functions(ModelProto& out);
};

}  // namespace shapeprop::transform
