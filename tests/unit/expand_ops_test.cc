// Lowering (shapeprop/expand_ops.h): what expand_ops makes of calls (one function per
// distinct body, shared; calls retargeted; attribute defaults on the call), and that a
// refused expansion leaves the model as it was. The folded results are in tests/golden/lower/.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "shapeprop/expand_ops.h"
#include "shapeprop/io.h"

namespace shapeprop {
namespace {

using ::testing::HasSubstr;

onnx::ModelProto model_text(const char* text) {
  auto m = parse_model_text(text);
  EXPECT_TRUE(m.ok()) << (m.ok() ? "" : m.error().str());
  return m.ok() ? *m : onnx::ModelProto();
}

// Opset 18, which every configuration reads: LayerNormalization's body is context-dependent
// (built from the call's axis and input types).
constexpr const char* kModel = R"(<ir_version: 8, opset_import: ["" : 18]>
g (float[N,4] x, float[4] s, double[N,4] d, double[4] ds) => (a, b, c, m) {
   a = LayerNormalization (x, s)
   b = LayerNormalization (x, s)
   c = LayerNormalization (d, ds)
   m = MatMul (x, x)
}
)";

TEST(ExpandOps, OneFunctionPerDistinctBody) {
  auto m = model_text(kModel);
  ExpandRequest request;
  request.ops = {"LayerNormalization"};
  auto done = expand_ops(m, request, {});
  ASSERT_TRUE(done.ok()) << done.error().str();
  ASSERT_EQ(done->size(), 1u);
  EXPECT_EQ((*done)[0].op, "LayerNormalization");
  EXPECT_EQ((*done)[0].calls, 3u);
  EXPECT_EQ((*done)[0].functions, 2u);  // float and double bodies differ (the stash type's Casts)
  ASSERT_EQ(m.functions_size(), 2);
  EXPECT_EQ(m.functions(0).domain(), kExpandedDomain);
  EXPECT_EQ(m.functions(0).name(), "LayerNormalization");
  EXPECT_EQ(m.functions(1).name(), "LayerNormalization_1");
  EXPECT_EQ(m.graph().node(0).op_type(), "LayerNormalization");
  EXPECT_EQ(m.graph().node(0).domain(), kExpandedDomain);
  EXPECT_EQ(m.graph().node(2).op_type(), "LayerNormalization_1");
  EXPECT_EQ(m.graph().node(3).op_type(), "MatMul");
  bool imported = false;
  for (const auto& o : m.opset_import()) imported = imported || o.domain() == kExpandedDomain;
  EXPECT_TRUE(imported);
  // The schema's defaults are on the call (axis -1, epsilon, stash_type), for any reference to them.
  EXPECT_EQ(m.graph().node(0).attribute_size(), 3);
}

TEST(ExpandOps, ARefusalLeavesTheModelAsItWas) {
  auto m = model_text(kModel);
  const std::string before = m.SerializeAsString();
  ExpandRequest request;
  request.ops = {"LayerNormalization", "MatMul"};
  auto done = expand_ops(m, request, {});
  ASSERT_FALSE(done.ok());
  EXPECT_THAT(done.error().message, HasSubstr("defines no function body for MatMul"));
  EXPECT_EQ(m.SerializeAsString(), before);
}

TEST(ExpandOps, NothingAskedNothingDone) {
  auto m = model_text(kModel);
  const std::string before = m.SerializeAsString();
  auto done = expand_ops(m, {}, {});
  ASSERT_TRUE(done.ok());
  EXPECT_TRUE(done->empty());
  EXPECT_EQ(m.SerializeAsString(), before);
  auto same = convert_opset(m, 18);
  ASSERT_TRUE(same.ok());
  EXPECT_FALSE(*same);
}

}  // namespace
}  // namespace shapeprop
