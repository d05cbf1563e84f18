// ONNX's schemas registered on demand (src/support/onnx_schemas.cc), with the ONNX that
// scripts/setup.sh builds with shapeprop's patch; skipped with another ONNX. Each test runs
// in a process of its own (gtest_discover_tests), so each starts with nothing registered.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "onnx/defs/schema.h"
#include "shapeprop/version.h"

namespace shapeprop {
namespace {

#define SKIP_WITHOUT_PATCH()                                                      \
  register_onnx_schemas_once();                                                   \
  if (!onnx_schemas_on_demand()) GTEST_SKIP() << "this ONNX registers all its schemas at once"

TEST(OnnxSchemas, ALookupRegistersTheOneSchemaItFinds) {
  SKIP_WITHOUT_PATCH();
  const size_t before = onnx_schemas_made_on_demand();  // none: register_onnx_schemas_once makes none
  EXPECT_EQ(before, 0u);
  // Add has versions 1, 6, 7, 13 and 14: each lookup makes the one it finds.
  const onnx::OpSchema* add7 = onnx::OpSchemaRegistry::Schema("Add", 7, "");
  ASSERT_NE(add7, nullptr);
  EXPECT_EQ(add7->SinceVersion(), 7);
  EXPECT_EQ(onnx_schemas_made_on_demand(), before + 1);
  EXPECT_EQ(onnx::OpSchemaRegistry::Schema("Add", 12, "")->SinceVersion(), 7);  // found, not made again
  EXPECT_EQ(onnx_schemas_made_on_demand(), before + 1);
  // A newer version is found where an older one is already registered: the lookup makes it
  // first, rather than finding 7 as the newest registered.
  const onnx::OpSchema* add14 = onnx::OpSchemaRegistry::Schema("Add", 18, "");
  ASSERT_NE(add14, nullptr);
  EXPECT_EQ(add14->SinceVersion(), 14);
  EXPECT_EQ(onnx::OpSchemaRegistry::Schema("Add", 13, "")->SinceVersion(), 13);
  EXPECT_EQ(onnx::OpSchemaRegistry::Schema("Add", 6, "")->SinceVersion(), 6);
  EXPECT_EQ(onnx::OpSchemaRegistry::Schema("Add", 1, "")->SinceVersion(), 1);
  EXPECT_EQ(onnx_schemas_made_on_demand(), before + 5);
  // The latest (a lookup without a version), an op older than any version asked for, and
  // another domain's op.
  EXPECT_EQ(onnx::OpSchemaRegistry::Schema("Mul", "")->SinceVersion(), 14);
  EXPECT_EQ(onnx::OpSchemaRegistry::Schema("Mul", 5, "")->SinceVersion(), 1);
  EXPECT_EQ(onnx::OpSchemaRegistry::Schema("Gelu", 19, ""), nullptr);  // from version 20
  EXPECT_NE(onnx::OpSchemaRegistry::Schema("Gelu", 20, ""), nullptr);
  EXPECT_EQ(onnx::OpSchemaRegistry::Schema("Gelu", 19, ""), nullptr);  // still none, with 20 registered
  EXPECT_NE(onnx::OpSchemaRegistry::Schema("LinearRegressor", 1, "ai.onnx.ml"), nullptr);
  EXPECT_EQ(onnx::OpSchemaRegistry::Schema("LinearRegressor", 1, ""), nullptr);
  EXPECT_EQ(onnx::OpSchemaRegistry::Schema("NoSuchOp", 18, ""), nullptr);
  EXPECT_EQ(onnx_schemas_made_on_demand(), before + 9);
}

// Each row of the table names the schema its class makes: what a lookup registers is the
// schema the lookup finds.
TEST(OnnxSchemas, EachRowOfTheTableIsTheSchemaItMakes) {
  SKIP_WITHOUT_PATCH();
  EXPECT_EQ(onnx_schema_table_mismatch(), "");
}

TEST(OnnxSchemas, EverySchemaIsThereWhenAllAreListed) {
  SKIP_WITHOUT_PATCH();
  (void)onnx::OpSchemaRegistry::Schema("Add", 18, "");
  // get_all_schemas_with_history registers the rest first: the list static registration
  // gives, each schema once.
  const auto all = onnx::OpSchemaRegistry::get_all_schemas_with_history();
  EXPECT_EQ(all.size(), onnx_schema_classes());
  EXPECT_GT(all.size(), 600u);
  EXPECT_NE(onnx::OpSchemaRegistry::Schema("Einsum", 12, ""), nullptr);
}

// The table (cmake/onnx_schema_table.cmake, from the operator-set headers) lists every
// schema ONNX's static registration gives: counted in a child process (a death test's,
// forked before anything here registered), where a lookup before any loader is set
// registers them all as upstream does.
TEST(OnnxSchemas, TheTableListsEverySchemaStaticRegistrationGives) {
  if (onnx_schema_classes() == 0) GTEST_SKIP() << "this ONNX registers all its schemas at once";
  const std::string expected = "static registration: " + std::to_string(onnx_schema_classes()) + " schemas";
  EXPECT_EXIT(
      {
        const auto all = onnx::OpSchemaRegistry::get_all_schemas_with_history();
        std::fprintf(stderr, "static registration: %zu schemas\n", all.size());
        std::fflush(stderr);
        std::_Exit(0);
      },
      testing::ExitedWithCode(0), expected);
}

TEST(OnnxSchemas, ThreadsLookUpAndRegisterAtOnce) {
  SKIP_WITHOUT_PATCH();
  const std::vector<std::string> ops = {"Add", "Mul", "Conv", "MatMul", "Reshape", "Softmax", "LayerNormalization",
                                        "Gather", "Concat", "Slice", "Transpose", "Cast"};
  std::vector<std::thread> threads;
  std::vector<int> found(4, 0);
  for (size_t t = 0; t < found.size(); ++t)
    threads.emplace_back([&ops, &found, t] {
      for (size_t i = 0; i < ops.size(); ++i) {
        const std::string& op = ops[(i + t * 3) % ops.size()];
        if (onnx::OpSchemaRegistry::Schema(op, 18, "") && onnx::OpSchemaRegistry::Instance()->GetSchema(op, 18, ""))
          ++found[t];
      }
    });
  for (auto& t : threads) t.join();
  for (int f : found) EXPECT_EQ(f, static_cast<int>(ops.size()));
}

}  // namespace
}  // namespace shapeprop
