// Specialization: one folded copy of each reached function per distinct context,
// identical copies shared, call sites retargeted; then dead code removal, inlining by
// policy, and annotation. The rounds repeat until one changes nothing, so that the
// result is a fixed point: a second run of the tool on it changes nothing.
#include "shapeprop/specialize.h"
#include "shapeprop/version.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "infer/analysis_record.h"
#include "infer/annotate.h"
#include "ir/depth.h"
#include "support/proto_hash.h"
#include "shapeprop/expand_ops.h"
#include "shapeprop/passes.h"
#include "transform/function_dce.h"
#include "transform/inline_stage.h"
#include "transform/round.h"
#include "transform/stats_text.h"

namespace shapeprop {

namespace {

using onnx::FunctionProto;
using onnx::ModelProto;
using transform::assumption_report;
using transform::count_all_nodes;
using transform::count_calls;
using transform::inline_stage;
using transform::Round;
using transform::Stage;

std::vector<Stage> stages_of(std::span<const Pass> passes) {
  std::vector<Stage> stages;
  for (Pass p : passes) {
    if (pass_info(p).kind == PassKind::Module || stages.empty()) stages.emplace_back();
    Stage& s = stages.back();
    s.passes.push_back(p);
    if (pass_info(p).kind == PassKind::Module)
      s.module = p;
    else if (p == Pass::Fold)
      s.fold = true;
    else if (p == Pass::Dce)
      s.dce = true;
    else
      s.rewrites.push_back(p);
  }
  return stages;
}

}  // namespace

std::vector<Pass> default_pipeline(InlinePolicy policy) {
  std::vector<Pass> passes;
  for (Pass p : default_passes())
    if (p != Pass::Inline || policy != InlinePolicy::None) passes.push_back(p);
  return passes;
}

namespace {

// The one pipeline driver: stages (stages_of) run in order, the model each writes read by
// the next; the first reads the caller's model, which stays as it was until the end (or
// on errors), and from the first stage's result on they work on the transform's own copy,
// each input discarded as soon as its stage's result is settled.
class Pipeline {
 public:
  // `validated`: the call graph validation built of `model`, which is as it was then.
  Pipeline(ModelProto& model, const TransformOptions& options, TransformResult& result,
           std::optional<CallGraph> validated = std::nullopt)
      : model_(model), options_(options), result_(result), validated_(std::move(validated)) {}

  // Runs the stages in order, a round of them at most `max_rounds` times. One round (--passes)
  // runs each stage once. More (the default pipelines) repeat the round until one changes
  // nothing, the result then a fixed point (a second run of the tool on it changes nothing),
  // or warn naming the pass that still changed the model in the last. False when an
  // analysis found errors (in the result's diagnostics); the caller's model is then as it was.
  Result<bool> run_pipeline(const std::vector<Stage>& stages, int max_rounds) {
    looping_ = max_rounds > 1;
    const bool rounds_tidy = std::any_of(stages.begin(), stages.end(), [](const Stage& s) { return s.dce; });
    Counters before_last_round;
    for (int round = 0; round < max_rounds; ++round) {
      // Calls inlined in this round make the model change, so the next round runs.
      next_round_tidies_ = looping_ && rounds_tidy && round + 1 < max_rounds;
      before_last_round = result_.stats.counters;
      round_changed_ = false;
      std::unique_ptr<Round> unchanged;  // the last round stage that gave its input back
      for (const Stage& stage : stages) {
        if (stage.inlines()) {
          auto inlined = inline_stage_of();
          if (!inlined) return inlined.error();
          if (!stage.has_round()) continue;
        }
        // A Round reads a settled model in place: a result still waiting for its
        // comparison is compared first.
        if (pending_ && resolve()) unchanged = std::move(last_unchanged_);
        auto ran = round_stage(stage);
        if (!ran) return ran.error();
        if (!*ran) return false;
        if (last_unchanged_) unchanged = std::move(last_unchanged_);
      }
      if (pending_ && resolve()) unchanged = std::move(last_unchanged_);
      if (!looping_) return true;
      if (!round_changed_ && unchanged) {
        fixed_point_ = std::move(unchanged);
        return true;
      }
    }
    // Each round's changes let the next find more. What the last one did stays (it keeps
    // every output), and the result is analysed once more for its annotation.
    std::string passes = transform::passes_that_counted(before_last_round, result_.stats.counters);
    if (passes.empty()) passes = "dce";  // nothing counted: dead code or functions went
    result_.diagnostics.push_back(Diagnostic::make(
        Severity::Warning, "the transform did not reach a fixed point in " + std::to_string(max_rounds) +
                               " rounds: " + passes + " still changed the model in the last round"));
    return true;
  }

  // The result: the caller's model itself when no stage wrote a new one.
  ModelProto& result_model() { return *input_; }
  bool wrote() const { return input_ != &model_; }
  ModelProto take_result() { return std::move(current_); }
  // The round whose input is the result and that changed nothing: its analysis is the
  // result's. Null after --passes, or without a fixed point.
  const Round* fixed_point() const { return fixed_point_.get(); }

 private:
  ModelProto& model_;
  const TransformOptions& options_;
  TransformResult& result_;
  // The call graph of `model_` as the caller gave it, for the first round that reads it.
  std::optional<CallGraph> validated_;
  bool looping_ = false;
  // The model the next stage reads: the caller's, or `current_`.
  ModelProto current_;
  ModelProto* input_ = &model_;
  // In a pipeline that loops, a round stage's result waits in `next_`, its Round (and so
  // the input) kept, until it is compared with that input (resolve).
  ModelProto next_;
  std::unique_ptr<Round> pending_;
  std::unique_ptr<Round> last_unchanged_;
  std::unique_ptr<Round> fixed_point_;
  // The hash of `input_`, when a comparison computed it.
  std::optional<uint64_t> input_hash_;
  // The last stage inlined calls: the bodies it brought together carry facts across the
  // old call boundaries, and the next round nearly always finds work, so it goes without
  // the dry run. Should it find none, its result hashes equal to its input: the same end.
  bool input_just_inlined_ = false;
  bool next_round_tidies_ = false;  // another round, with dead code removal, follows a change
  bool specialized_ = false;    // the first specialize counts the specializations
  bool round_changed_ = false;  // a stage of this round changed the model for certain

  // A model the transform is done with: retired (options.retire) or destroyed now.
  void discard(ModelProto& m) {
    if (options_.retire) options_.retire(std::move(m));
    m = ModelProto();
  }

  // `next_` becomes the model the next stage reads; the input goes.
  void settle(std::optional<uint64_t> next_hash) {
    if (input_ == &current_) discard(current_);
    current_ = std::move(next_);
    input_ = &current_;
    input_hash_ = next_hash;
    pending_.reset();
  }

  // Compares the pending result with its input: equal, the input stays (with its
  // initializers back) and the stage's Round goes to last_unchanged_ (true); otherwise the
  // result is settled. Compared by hash unless changed for certain (as many nodes and
  // functions, or not: the input's initializers may have moved into the result), or the
  // input was spent (its nodes moved into the result: Round::spent_input), when it is
  // taken as changed (a round that changed nothing then finds so in the next round).
  bool resolve() {
    std::optional<uint64_t> next_hash;
    if (!pending_->spent_input() && next_.graph().node_size() == input_->graph().node_size() &&
        next_.functions_size() == input_->functions_size()) {
      if (!input_hash_) input_hash_ = hash_message(*input_);
      next_hash = hash_message(next_);
      if (*next_hash == *input_hash_) {
        pending_->give_back(next_);
        last_unchanged_ = std::move(pending_);
        next_ = ModelProto();
        return true;
      }
    }
    round_changed_ = true;
    settle(next_hash);
    return false;
  }

  void print_after(Pass pass, const ModelProto& m) const {
    if (options_.after_pass &&
        std::find(options_.print_after.begin(), options_.print_after.end(), pass) != options_.print_after.end())
      options_.after_pass(pass, m);
  }

  // The inline pass, over the latest model when it has calls to inline (nothing to do
  // otherwise).
  Result<bool> inline_stage_of() {
    ModelProto* m = pending_ ? &next_ : input_;
    if (m->functions_size() == 0) return true;
    if (m == &model_) {  // the caller's model stays as it was
      current_ = model_;
      m = input_ = &current_;
    }
    auto inlined = [&] {
      PassClock clock(&result_.pass_times, Pass::Inline);
      return inline_stage(*m, options_, result_, /*round_follows=*/next_round_tidies_);
    }();
    if (!inlined) return inlined.error();
    if (*inlined) {
      input_just_inlined_ = true;
      if (pending_) {
        // Changed: the Round's input (and the analysis of it) can go now, rather than
        // after the next round stage, which keeps one graph fewer in memory.
        pending_.reset();
        settle(std::nullopt);
      }
    }
    // Not pending: the inlined graph was folded in place, and may have changed without a
    // call inlined.
    if (*inlined || !pending_) {
      round_changed_ = true;
      input_hash_.reset();
    }
    print_after(Pass::Inline, pending_ ? next_ : *input_);
    return true;
  }

  // A stage's Round over the latest model (not pending). False when its analysis found errors.
  Result<bool> round_stage(const Stage& stage) {
    // The caller's model is read-only but for its initializers (which the graph does not
    // hold), so the validated graph serves a round on it.
    std::optional<CallGraph> calls;
    if (input_ == &model_) calls = std::exchange(validated_, std::nullopt);
    auto step = std::make_unique<Round>(*input_, options_, stage, result_,
                                        /*count_specializations=*/stage.specializes() && !specialized_,
                                        /*take_initializers=*/input_ != &model_ || options_.consume_input,
                                        /*try_unchanged=*/looping_ && !input_just_inlined_, std::move(calls));
    specialized_ = specialized_ || stage.specializes();
    input_just_inlined_ = false;
    ModelProto next;
    auto ran = step->run(next);
    if (!ran) return ran.error();
    if (!*ran) return false;
    if (step->unchanged()) {
      last_unchanged_ = std::move(step);
      return true;
    }
    next_ = std::move(next);
    pending_ = std::move(step);
    if (!looping_) {
      round_changed_ = true;
      settle(std::nullopt);
    }
    return true;
  }
};

// `validated`: the call graph validation built of `model`, unchanged since; validation
// checked its depths too.
Result<TransformResult> run_rounds(ModelProto& model, const TransformOptions& options,
                                   std::optional<CallGraph> validated = std::nullopt) {
  const Dim::MaxTerms terms(options.infer.limits.max_dim_terms);
  // As infer_shapes does: within the limits only, whether the caller validated or not.
  if (!validated)
    if (Diagnostics deep = check_depths(model, "", options.infer.limits); !deep.empty()) return deep.front();
  for (const auto& id : options.keep)  // (domain, name); clang 14 cannot capture a structured binding
    if (std::none_of(model.functions().begin(), model.functions().end(), [&id](const FunctionProto& f) {
          return FunctionId::canonical_domain(f.domain()) == id.first && f.name() == id.second;
        }))
      return Diagnostic::error("--keep names " + id.first + "::" + id.second + ", which the model does not define");
  TransformResult result;
  const bool explicit_passes = !options.passes.empty();
  // Expanded ONNX ops (shapeprop/expand_ops.h) are inlined under every policy.
  const bool expanded = std::any_of(model.functions().begin(), model.functions().end(),
                                    [](const FunctionProto& f) { return f.domain() == kExpandedDomain; });
  const std::vector<Stage> stages = stages_of(
      explicit_passes ? options.passes : default_pipeline(expanded ? InlinePolicy::All : options.inline_policy));
  result.stats.nodes_before = count_all_nodes(model);
  result.stats.functions_before = static_cast<size_t>(model.functions_size());
  Pipeline pipeline(model, options, result, std::move(validated));
  auto ran = pipeline.run_pipeline(stages, explicit_passes ? 1 : kMaxPipelineRounds);
  if (!ran) return ran.error();
  if (!*ran) return result;  // errors in result.diagnostics; the model is left as it was
  ModelProto* const input = &pipeline.result_model();
  const Round* const fixed_point = pipeline.fixed_point();
  // Every round analyses the model anew and may find the same things again.
  Diagnostics unique;
  std::set<std::string> seen;
  for (auto& d : result.diagnostics)
    if (seen.insert(d.str()).second) unique.push_back(std::move(d));
  result.diagnostics = std::move(unique);
  if (fixed_point) {
    PhaseClock annotating(result.phases, "annotation", options.infer.on_phase);
    result.annotation = infer::annotate_model(*input, fixed_point->analysis(), options.infer);
    result.annotation.diagnostics = fixed_point->diagnostics();
  } else {  // --passes, or still changing after kMaxPipelineRounds: the result has not been analysed yet
    auto annotated = infer_shapes(*input, options.infer);
    if (!annotated) return annotated.error();
    result.annotation = std::move(*annotated);
    add_phases(result.phases, result.annotation.phases);
    infer::merge_assumptions(result.assumptions, result.annotation.assumptions);
  }
  infer::record_assumptions(*input, result.assumptions, options.infer.dim_ranges);
  if (options.infer.debug) result.annotation.debug += counter_lines(result.stats) + assumption_report(result.rewrites_assuming_positive_dims);
  result.stats.calls_kept = count_calls(*input);
  result.stats.nodes_after = count_all_nodes(*input);
  result.stats.functions_after = static_cast<size_t>(input->functions_size());
  if (pipeline.wrote()) {
    if (options.retire) options.retire(std::move(model));
    model = pipeline.take_result();
  }
  // FunctionProto.overload and NodeProto.overload exist from IR version 10.
  if (model.ir_version() < 10 && std::any_of(model.functions().begin(), model.functions().end(),
                                             [](const FunctionProto& f) { return !f.overload().empty(); })) {
    result.annotation.stats.ir_version_raised_from = static_cast<size_t>(model.ir_version());
    model.set_ir_version(10);
  }
  return result;
}

}  // namespace

Result<TransformResult> specialize(ModelProto& model, const TransformOptions& options, CallGraph validated) {
  // Expansion changes the model first: the graph is of the model as it was.
  if (options.expand.any()) return specialize(model, options);
  register_onnx_schemas_once();
  return run_rounds(model, options, std::move(validated));
}

Result<TransformResult> specialize(ModelProto& model, const TransformOptions& options) {
  register_onnx_schemas_once();
  if (!options.expand.any()) return run_rounds(model, options);
  if (!options.passes.empty() && std::find(options.passes.begin(), options.passes.end(), Pass::Inline) == options.passes.end())
    return Diagnostic::error("the expanded ops are inlined: --passes must run inline with --expand-ops or --target-opset");
  const size_t nodes_before = count_all_nodes(model);
  const size_t functions_before = static_cast<size_t>(model.functions_size());
  // The caller's model stays as it was on errors unless it is given up.
  ModelProto work = options.consume_input ? std::move(model) : model;
  auto expanded = expand_ops(work, options.expand, options.infer);
  if (!expanded) return expanded.error();
  TransformOptions rest = options;
  rest.expand = ExpandRequest();
  rest.consume_input = true;
  auto done = run_rounds(work, rest);
  if (!done) return done.error();
  if (has_errors(done->diagnostics)) return done;
  if (const auto target = options.expand.target_opset) {
    const int64_t from = transform::onnx_opset(work.opset_import());
    auto converted = convert_opset(work, *target);
    if (!converted) return converted.error();
    if (*converted) {
      // What the converter wrote is folded at the new opset, so that a second run changes nothing.
      rest.after_pass = nullptr;
      auto again = run_rounds(work, rest);
      if (!again) return again.error();
      for (const CounterInfo& c : all_counters()) again->stats.counters[c.id] += done->stats.counters[c.id];
      again->functions = std::move(done->functions);
      again->diagnostics.insert(again->diagnostics.begin(), done->diagnostics.begin(), done->diagnostics.end());
      again->converted_from_opset = from;
      done = std::move(again);
      if (has_errors(done->diagnostics)) return done;
    }
  }
  done->stats.nodes_before = nodes_before;
  done->stats.functions_before = functions_before;
  count_expanded_nodes(work, *expanded);
  done->expanded = std::move(*expanded);
  model = std::move(work);
  return done;
}

}  // namespace shapeprop
