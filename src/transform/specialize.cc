// Specialization: one folded copy of each reached function per distinct context,
// identical copies shared, call sites retargeted; then dead code removal, inlining by
// policy, and annotation. The rounds repeat until one changes nothing, so that the
// result is a fixed point: a second run of the tool on it changes nothing.
#include "shapeprop/specialize.h"

#include <algorithm>
#include <memory>
#include <optional>
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
using transform::passes_that_counted;
using transform::Round;
using transform::Stage;

constexpr int kMaxRounds = 4;

std::vector<Stage> stages_of(const std::vector<Pass>& passes) {
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
  for (const PassInfo& p : all_passes())
    if (p.kind != PassKind::OptIn && (p.id != Pass::Inline || policy != InlinePolicy::None)) passes.push_back(p.id);
  return passes;
}

namespace {

Result<TransformResult> run_rounds(ModelProto& model, const TransformOptions& options) {
  const Dim::MaxTerms terms(options.infer.limits.max_dim_terms);
  // As infer_shapes does: within the limits only, whether the caller validated or not.
  if (Diagnostics deep = check_depths(model, "", options.infer.limits); !deep.empty()) return deep.front();
  for (const auto& id : options.keep)  // (domain, name); clang 14 cannot capture a structured binding
    if (std::none_of(model.functions().begin(), model.functions().end(), [&id](const FunctionProto& f) {
          return FunctionId::canonical_domain(f.domain()) == id.first && f.name() == id.second;
        }))
      return Diagnostic::error("--keep names " + id.first + "::" + id.second + ", which the model does not define");
  TransformResult result;
  // A model the transform is done with: retired (options.retire) or destroyed now.
  const auto discard = [&options](ModelProto& m) {
    if (options.retire) options.retire(std::move(m));
    m = ModelProto();
  };
  const bool explicit_passes = !options.passes.empty();
  // Expanded ONNX ops (shapeprop/expand_ops.h) are inlined under every policy.
  const bool expanded = std::any_of(model.functions().begin(), model.functions().end(),
                                    [](const FunctionProto& f) { return f.domain() == kExpandedDomain; });
  const std::vector<Stage> stages = stages_of(
      explicit_passes ? options.passes : default_pipeline(expanded ? InlinePolicy::All : options.inline_policy));
  const auto print_after = [&options](const Stage& stage, const ModelProto& m) {
    if (options.print_after && options.after_pass && stage.contains(*options.print_after))
      options.after_pass(*options.print_after, m);
  };
  result.stats.nodes_before = count_all_nodes(model);
  result.stats.functions_before = static_cast<size_t>(model.functions_size());
  // The first round reads the caller's model, which stays as it was until the end (or on
  // errors); from the first round's result on the rounds work on their own copy.
  ModelProto current;
  ModelProto* input = &model;
  // The round that found its input unchanged: its analysis is the analysis of the result.
  std::unique_ptr<Round> fixed_point;
  if (explicit_passes) {
    // --passes: each stage once, in order, each round analysing its input anew.
    bool specialized = false;
    for (const Stage& stage : stages) {
      if (stage.inlines()) {
        if (input == &model) current = model;
        input = &current;
        auto inlined = inline_stage(current, options, result);
        if (!inlined) return inlined.error();
        if (!stage.has_round()) {
          print_after(stage, current);
          continue;
        }
      }
      ModelProto next;
      Round step(*input, options, stage, result, /*count_specializations=*/stage.specializes() && !specialized,
                 /*take_initializers=*/input != &model || options.consume_input, /*try_unchanged=*/false);
      specialized = specialized || stage.specializes();
      auto ran = step.run(next);
      if (!ran) return ran.error();
      if (!*ran) return result;  // errors in result.diagnostics; the model is left as it was
      if (input == &current) discard(current);
      current = std::move(next);
      input = &current;
      print_after(stage, current);
    }
  } else {
    const Stage& round_stage = stages.front();  // specialize, fold, dce and the rewrites
    const bool inlines = stages.size() > 1;     // then inline
    // The hash of the round's input, computed when a round has to compare its result with
    // it (not when it inlined calls or its node or function counts changed: changed for certain).
    std::optional<uint64_t> input_hash;
    // The last round inlined calls: the bodies it brought together carry facts across the
    // old call boundaries, and the next round nearly always finds work, so it goes without
    // the dry run. Should it find none, its result hashes equal to its input below: the same end.
    bool input_just_inlined = false;
    Counters before_last_round;
    for (int round = 0; round < kMaxRounds; ++round) {
      before_last_round = result.stats.counters;
      ModelProto next;
      auto step = std::make_unique<Round>(*input, options, round_stage, result, /*count_specializations=*/round == 0,
                                          /*take_initializers=*/input != &model || options.consume_input,
                                          /*try_unchanged=*/!input_just_inlined);
      input_just_inlined = false;
      auto ran = step->run(next);
      if (!ran) return ran.error();
      if (!*ran) return result;  // errors in result.diagnostics; the model is left as it was
      if (step->unchanged()) {
        print_after(round_stage, *input);
        fixed_point = std::move(step);
        break;
      }
      print_after(round_stage, next);
      if (inlines && next.functions_size() > 0) {
        auto inlined = inline_stage(next, options, result);
        if (!inlined) return inlined.error();
        if (*inlined) {
          input_just_inlined = true;
          // The round changed the model: its input (and the analysis of it) can go now
          // rather than after the folding below, which keeps one graph fewer in memory.
          step.reset();
          if (input == &current) discard(current);
        }
        print_after(stages[1], next);
      }
      std::optional<uint64_t> next_hash;
      // Not changed for certain (no calls inlined, as many nodes and functions; the input's
      // initializers may have moved into `next`): compare the hashes.
      const bool same_counts = next.graph().node_size() == input->graph().node_size() &&
                               next.functions_size() == input->functions_size();
      if (step && same_counts) {
        if (!input_hash) input_hash = hash_message(*input);
        next_hash = hash_message(next);
        if (*next_hash == *input_hash) {
          step->give_back(next);
          fixed_point = std::move(step);
          break;
        }
      }
      // (Gone already when the round inlined: it went with the round's analysis.)
      if (step && input == &current) discard(current);
      current = std::move(next);
      input = &current;
      input_hash = next_hash;
    }
    if (!fixed_point) {
      // Each round's changes let the next find more. What the last one did stays (it keeps
      // every output), and the result is analysed once more for its annotation below.
      std::string passes = passes_that_counted(before_last_round, result.stats.counters);
      if (passes.empty()) passes = "dce";  // nothing counted: dead code or functions went
      result.diagnostics.push_back(Diagnostic::make(
          Severity::Warning, "the transform did not reach a fixed point in " + std::to_string(kMaxRounds) +
                                 " rounds: " + passes + " still changed the model in the last round"));
    }
  }
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
  } else {  // --passes, or still changing after kMaxRounds: the result has not been analysed yet
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
  if (input != &model) {
    discard(model);
    model = std::move(current);
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

Result<TransformResult> specialize(ModelProto& model, const TransformOptions& options) {
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
