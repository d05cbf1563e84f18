// Overrides (shapeprop/override.h): what is replaced and added, and that a refused
// override leaves the model as it was. The CLI's errors are in tests/golden/override/.
#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "shapeprop/io.h"
#include "shapeprop/override.h"
#include "test_util.h"

namespace shapeprop {
namespace {

using ::testing::HasSubstr;

onnx::ModelProto model_text(const char* text) {
  auto m = parse_model_text(text);
  EXPECT_TRUE(m.ok()) << (m.ok() ? "" : m.error().str());
  return m.ok() ? *m : onnx::ModelProto();
}

constexpr const char* kModel = R"(<ir_version: 8, opset_import: ["" : 18, "local" : 1]>
g (float[N,3] x) => (y) {
   y = local.act (x)
}
<domain: "local", opset_import: ["" : 18]>
act (a) => (b) {
   b = Relu (a)
}
)";

// Writes `text` to `dir`/`name` (a test's own folder, removed when the test ends).
std::filesystem::path write(const testing::TempDir& dir, const std::string& name, const std::string& text) {
  const auto path = dir / name;
  std::ofstream(path) << text;
  return path;
}

TEST(Override, ReplacesAndAddsWhatTheReplacementCalls) {
  const testing::TempDir dir;
  auto library = load_function_library(write(dir, "shapeprop_override_lib.onnxtxt", R"(
# A library of two functions: act calls helper, which the model does not define.
<domain: "local", opset_import: ["" : 18, "local" : 1, "com.microsoft" : 1]>
act (a) => (b) {
   b = local.helper (a)
}
<domain: "local", opset_import: ["com.microsoft" : 1]>
helper (p) => (q) {
   q = com.microsoft.Gelu (p)
}
)"));
  ASSERT_TRUE(library.ok()) << library.error().str();
  ASSERT_EQ(library->size(), 2u);
  onnx::ModelProto m = model_text(kModel);
  auto r = apply_overrides(m, *library, "lib.onnxtxt");
  ASSERT_TRUE(r.ok()) << r.error().str();
  EXPECT_EQ(r->replaced, (std::vector<FunctionId>{FunctionId("local", "act")}));
  EXPECT_EQ(r->added, (std::vector<FunctionId>{FunctionId("local", "helper")}));
  EXPECT_EQ(r->contexts_checked, 1u);
  EXPECT_TRUE(r->diagnostics.empty());
  ASSERT_EQ(m.functions_size(), 2);
  EXPECT_EQ(m.functions(0).node(0).op_type(), "helper");
  bool imports_com_microsoft = false;
  for (const auto& o : m.opset_import()) imports_com_microsoft |= o.domain() == "com.microsoft";
  EXPECT_TRUE(imports_com_microsoft);
}

TEST(Override, ARefusedOverrideLeavesTheModelAsItWas) {
  onnx::FunctionProto wrong;
  wrong.set_domain("local");
  wrong.set_name("act");
  wrong.add_input("a");
  wrong.add_input("extra");
  wrong.add_output("b");
  onnx::ModelProto m = model_text(kModel);
  const std::string before = m.SerializeAsString();
  auto r = apply_overrides(m, {wrong}, "lib.onnxtxt");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().str(), "lib.onnxtxt: error: the override of local.act takes 2 inputs; the model's function takes 1");
  EXPECT_EQ(m.SerializeAsString(), before);
}

TEST(Override, ALibraryWithNothingOfTheModelIsAWarning) {
  onnx::FunctionProto other;
  other.set_domain("local");
  other.set_name("unrelated");
  onnx::ModelProto m = model_text(kModel);
  auto r = apply_overrides(m, {other}, "lib.onnxtxt");
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->replaced.empty());
  ASSERT_EQ(r->diagnostics.size(), 1u);
  EXPECT_THAT(r->diagnostics[0].message, HasSubstr("no function of the library is a function of the model"));
}

TEST(Override, LibraryFromABinaryModelAndErrors) {
  const testing::TempDir dir;
  onnx::ModelProto m = model_text(kModel);
  const auto path = dir / "shapeprop_override_lib.onnx";
  ASSERT_TRUE(save_model(m, path, Format::Binary).ok());
  auto library = load_function_library(path);
  ASSERT_TRUE(library.ok());
  EXPECT_EQ(library->front().name(), "act");
  auto empty = load_function_library(write(dir, "shapeprop_override_empty.onnxtxt", "# nothing\n"));
  ASSERT_FALSE(empty.ok());
  EXPECT_THAT(empty.error().message, HasSubstr("no function in this library"));
}

}  // namespace
}  // namespace shapeprop
