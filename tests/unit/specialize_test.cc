// TransformOptions::consume_input: the first round moves the caller's initializers into
// its result instead of copying them; the result is the same, and a round that changes
// nothing gives them back.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "shapeprop/driver.h"
#include "shapeprop/io.h"
#include "shapeprop/specialize.h"
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
    // The caller's model as each transform left it: with its weights, or without.
    EXPECT_EQ(copied.graph().initializer_size(), input.graph().initializer_size()) << name;
    EXPECT_EQ(consumed.graph().initializer_size(), 0) << name;
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
  auto done = specialize(model, options);
  ASSERT_TRUE(done.ok()) << done.error().str();
  ASSERT_EQ(model.graph().initializer_size(), 1);
  EXPECT_EQ(model.graph().initializer(0).name(), "w");
  EXPECT_EQ(model.graph().node_size(), 2);
}

}  // namespace
}  // namespace shapeprop
