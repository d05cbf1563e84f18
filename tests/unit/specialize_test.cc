// TransformOptions::consume_input: the first round moves the caller's initializers (and
// its main graph's nodes) into its result instead of copying them; the result is the
// same, and a round that changes nothing gives them back. And the transform of a
// validated model, reading validation's call graph (as the CLI does).
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "shapeprop/driver.h"
#include "shapeprop/io.h"
#include "shapeprop/specialize.h"
#include "shapeprop/validate.h"
#include "test_util.h"

namespace shapeprop {
namespace {

onnx::ModelProto corpus_model(const char* name) {
  auto m = load_model(testing::corpus_dir() / "torchlib-2024-03" / "models" / (std::string(name) + ".onnx"));
  EXPECT_TRUE(m.ok()) << name;
  return m.ok() ? *m : onnx::ModelProto();
}

// Runs --mode inline on a copy of `input`; the model the transform retired last (the
// caller's, as it was left) goes to `retired`.
std::string inline_model(const onnx::ModelProto& input, bool consume, onnx::ModelProto* retired = nullptr) {
  onnx::ModelProto model = input;
  TransformOptions options;
  options.inline_policy = InlinePolicy::All;
  options.consume_input = consume;
  if (retired) options.retire = [retired](onnx::ModelProto&& m) { *retired = std::move(m); };
  auto done = specialize(model, options);
  EXPECT_TRUE(done.ok()) << done.error().str();
  EXPECT_FALSE(has_errors(done->diagnostics));
  return model.SerializeAsString();
}

TEST(ConsumeInput, SameResultWithoutCopyingTheWeights) {
  for (const char* name : {"transformer_L2", "layer_norm", "embedding"}) {
    const onnx::ModelProto input = corpus_model(name);
    ASSERT_GT(input.graph().initializer_size(), 0) << name;
    onnx::ModelProto copied, consumed;
    EXPECT_EQ(inline_model(input, false, &copied), inline_model(input, true, &consumed)) << name;
    // The caller's model as each transform left it: as it was, or without its weights and
    // with its main graph's nodes taken (Round::spent_input: empty in their places, or the
    // list taken whole).
    EXPECT_EQ(copied.SerializeAsString(), input.SerializeAsString()) << name;
    EXPECT_EQ(consumed.graph().initializer_size(), 0) << name;
    const auto& left = consumed.graph().node();
    EXPECT_TRUE(left.empty() || std::any_of(left.begin(), left.end(), [](const onnx::NodeProto& n) {
                  return n.ByteSizeLong() == 0;
                })) << name;
  }
}

TEST(ConsumeInput, ARoundThatChangesNothingGivesThemBack) {
  // A function kept for a backend: the first round cannot tell beforehand that it changes
  // nothing, writes a model equal to its input (by hash), and must give the initializers
  // it took back before the annotation.
  onnx::ModelProto model = testing::parse_or_fail(R"ONNX(
<ir_version: 10, opset_import: ["" : 18, "local" : 1]>
g (float[2] x) => (float[2] y) <float[2] w = {1.0, 2.0}> { t = Add (x, w)  y = local.F (t) }
<domain: "local", opset_import: ["" : 18]>
F (p) => (q) { q = Neg (p) }
)ONNX");
  TransformOptions options;
  options.inline_policy = InlinePolicy::All;
  options.keep = {{"local", "F"}};
  options.consume_input = true;
  // The comparison finds the first round changed nothing, so the pipeline's round ends
  // there: fold runs in the first round stage and idles in the second (a model printed
  // after each), and no further round runs to find the fixed point (two more).
  int printed = 0;
  options.print_after = {Pass::Fold};
  options.after_pass = [&printed](Pass, const onnx::ModelProto&) { ++printed; };
  auto done = specialize(model, options);
  ASSERT_TRUE(done.ok()) << done.error().str();
  EXPECT_EQ(printed, 2);
  ASSERT_EQ(model.graph().initializer_size(), 1);
  EXPECT_EQ(model.graph().initializer(0).name(), "w");
  // Its nodes too, which the fold took (the round took the input as spent, then gave them
  // back when nothing changed them).
  ASSERT_EQ(model.graph().node_size(), 2);
  EXPECT_EQ(model.graph().node(0).op_type(), "Add");
  EXPECT_EQ(model.graph().node(1).op_type(), "F");
  EXPECT_EQ(model.graph().node(1).input(0), "t");
}

TEST(Retire, TheCallsInlinedAreHandedOverAndTheResultIsTheSame) {
  // A caller that keeps what the transform is done with (as the CLI does) gets the call
  // nodes the inliner replaced too, rather than their being destroyed; the result is the
  // same as without it.
  for (const char* name : {"transformer_L2", "embedding"}) {
    const onnx::ModelProto input = corpus_model(name);
    std::string results[2];
    size_t calls_inlined = 0;
    std::vector<onnx::ModelProto> retired;
    for (int with_retire = 0; with_retire < 2; ++with_retire) {
      onnx::ModelProto model = input;
      TransformOptions options;
      options.inline_policy = InlinePolicy::All;
      options.consume_input = true;
      if (with_retire) options.retire = [&retired](onnx::ModelProto&& m) { retired.push_back(std::move(m)); };
      auto done = specialize(model, options);
      ASSERT_TRUE(done.ok()) << done.error().str();
      results[with_retire] = model.SerializeAsString();
      calls_inlined = done->stats.counters[Counter::CallsInlined];
    }
    EXPECT_EQ(results[0], results[1]) << name;
    ASSERT_GT(calls_inlined, 0u) << name;
    // One retired model holds exactly the calls inlined: nodes whose op is a function of
    // the input's.
    std::set<std::string> functions;
    for (const auto& f : input.functions()) functions.insert(f.name());
    size_t holding = 0;
    for (const auto& m : retired) {
      const auto& nodes = m.graph().node();
      if (nodes.empty() || m.functions_size() > 0 || m.graph().initializer_size() > 0) continue;
      if (!std::all_of(nodes.begin(), nodes.end(), [&](const onnx::NodeProto& n) {
            return functions.count(n.op_type()) > 0 || functions.count(n.op_type().substr(0, n.op_type().rfind("__"))) > 0;
          }))
        continue;
      ++holding;
      EXPECT_EQ(static_cast<size_t>(nodes.size()), calls_inlined) << name;
    }
    EXPECT_EQ(holding, 1u) << name;
  }
}

// Runs the transform on a copy of `input`, once as a library caller without validation
// does and once with the call graph validation built of it; both results as bytes, with
// their summaries.
std::pair<std::string, std::string> with_and_without_validated_calls(const onnx::ModelProto& input, TransformOptions options) {
  std::string results[2];
  for (int validated = 0; validated < 2; ++validated) {
    onnx::ModelProto model = input;
    Result<TransformResult> done = Diagnostic::error("not run");
    if (validated) {
      std::optional<CallGraph> calls;
      const Diagnostics found =
          validate_model(model, "m", nullptr, CheckerMode::as_inference, options.infer.limits, false, calls);
      EXPECT_FALSE(has_errors(found));
      EXPECT_TRUE(calls.has_value());
      if (!calls) return {};
      done = specialize(model, options, std::move(*calls));
    } else {
      done = specialize(model, options);
    }
    EXPECT_TRUE(done.ok()) << done.error().str();
    if (!done.ok()) return {};
    EXPECT_FALSE(has_errors(done->diagnostics));
    results[validated] = model.SerializeAsString() + "\n" + summary_line(done->stats);
  }
  return {results[0], results[1]};
}

TEST(ValidatedCalls, TheSameResultAsBuildingThemInEveryMode) {
  for (const char* name : {"transformer_L2", "layer_norm", "embedding"}) {
    const onnx::ModelProto input = corpus_model(name);
    for (InlinePolicy policy : {InlinePolicy::None, InlinePolicy::Small, InlinePolicy::All})
      for (bool consume : {false, true}) {
        TransformOptions options;
        options.inline_policy = policy;
        options.consume_input = consume;
        const auto [built, validated] = with_and_without_validated_calls(input, options);
        EXPECT_FALSE(built.empty()) << name;
        EXPECT_EQ(built, validated) << name << " policy " << static_cast<int>(policy) << " consume " << consume;
      }
  }
}

TEST(ValidatedCalls, ExpansionChangesTheModelFirstSoTheGraphIsNotUsed) {
  // Expanding LayerNormalization adds a function the validated graph does not know: a run
  // that read it would leave the expanded call unanalysed (and so not inlined).
  const onnx::ModelProto input = testing::parse_or_fail(R"ONNX(
<ir_version: 10, opset_import: ["" : 18, "local" : 1]>
g (float[2, 4] x, float[4] s, float[4] b) => (float[2, 4] y) {
  n = LayerNormalization <axis: int = -1> (x, s, b)
  y = local.F (n)
}
<domain: "local", opset_import: ["" : 18]>
F (p) => (q) { q = Neg (p) }
)ONNX");
  TransformOptions options;
  options.inline_policy = InlinePolicy::None;
  options.expand.ops = {"LayerNormalization"};
  const auto [built, validated] = with_and_without_validated_calls(input, options);
  EXPECT_EQ(built, validated);
  onnx::ModelProto result;
  ASSERT_TRUE(result.ParseFromString(validated.substr(0, validated.rfind('\n'))));
  for (const auto& n : result.graph().node()) EXPECT_NE(n.op_type(), "LayerNormalization");
}

}  // namespace
}  // namespace shapeprop
