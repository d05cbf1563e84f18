#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "shapeprop/validate.h"
#include "shapeprop/version.h"
#include "test_util.h"

namespace shapeprop {
namespace {

using ::testing::HasSubstr;

// A graph calling a model-local function.
constexpr const char* kCallsAFunction = R"ONNX(
<ir_version: 8, opset_import: ["" : 18, "local" : 1]>
g (float[2] x) => (float[2] y) {
   y = local.f (x)
}
<domain: "local", opset_import: ["" : 18]>
f (x) => (y) {
   y = Abs (x)
}
)ONNX";

TEST(ValidateStructure, ValidModelHasNoErrors) {
  auto m = testing::parse_or_fail(kCallsAFunction);
  EXPECT_FALSE(has_errors(validate_model(m, "m")));
}

// A model at (ir, opset) with a function importing ai.onnx at function_opset.
onnx::ModelProto versioned_model(int64_t ir, int64_t opset, int64_t function_opset) {
  auto m = testing::parse_or_fail(kCallsAFunction);
  m.set_ir_version(ir);
  m.mutable_opset_import(0)->set_version(opset);
  m.mutable_functions(0)->mutable_opset_import(0)->set_version(function_opset);
  return m;
}

TEST(LinkedOnnx, ItsOwnNewestVersionsAreRead) {
  const auto ir = onnx_ir_version(), opset = onnx_max_opset("");
  EXPECT_GE(ir, 10);
  EXPECT_GE(opset, 21);
  EXPECT_EQ(onnx_max_opset("ai.onnx"), opset);
  EXPECT_EQ(onnx_max_opset("no.such.domain"), 0);
  EXPECT_FALSE(has_errors(validate_model(versioned_model(ir, opset, opset), "m")));
}

TEST(LinkedOnnx, ANewerModelIsOneErrorNamingBothVersions) {
  // What is read: the linked ONNX's versions, carried on by the rules (ONNX 1.21: IR 14, opset 28).
  const auto ir = rules_ir_version(), opset = rules_max_opset();
  const bool through_rules = opset > onnx_max_opset("");
  const std::string linked = std::string("shapeprop is built against ONNX ") + onnx_version() +
                             (through_rules ? ", which with shapeprop's rules reads" : ", which reads") +
                             " IR versions up to " + std::to_string(ir) + " and ai.onnx opsets up to " +
                             std::to_string(opset) + ": rebuild shapeprop against ";
  for (const auto& [model, what] :
       {std::pair{versioned_model(ir + 1, opset, opset), "(ir_version " + std::to_string(ir + 1) + ")"},
        std::pair{versioned_model(ir, opset + 1, opset), "(ai.onnx opset " + std::to_string(opset + 1) + ")"},
        std::pair{versioned_model(ir, opset, opset + 1), "(ai.onnx opset " + std::to_string(opset + 1) + ")"}}) {
    auto d = validate_model(model, "m.onnx");
    ASSERT_EQ(d.size(), 1u);
    EXPECT_THAT(d[0].str(), HasSubstr("m.onnx: error: the model needs "));
    EXPECT_THAT(d[0].str(), HasSubstr(what + ", and " + linked));
  }
}

TEST(LinkedOnnx, TheReleaseAModelNeedsIsNamed) {
  // One step past the linked ONNX: the release that reads it, when one is known.
  if (onnx_ir_version() < 13) {  // ONNX 1.16 to 1.19
    auto d = validate_model(versioned_model(13, 25, 25), "m");
    ASSERT_EQ(d.size(), 1u);
    EXPECT_THAT(d[0].str(), HasSubstr("the model needs ONNX 1.20 or newer (ir_version 13, ai.onnx opset 25)"));
    EXPECT_THAT(d[0].str(), HasSubstr("rebuild shapeprop against ONNX 1.20 or newer"));
  }
  auto d = validate_model(versioned_model(onnx_ir_version(), 99, 18), "m");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_THAT(d[0].str(), HasSubstr("the model needs an ONNX newer than 1.23 (ai.onnx opset 99)"));
}

// ONNX 1.21 reads opsets 27-28 and IR 14 through the rules: a model of unchanged ops is read,
// and an op new or changed there whose version no rule states is the one error, naming it.
TEST(LinkedOnnx, OpsetsAfterTheLinkedOnesAreReadThroughRules) {
  if (rules_max_opset() == onnx_max_opset("")) GTEST_SKIP() << "the rules extend ONNX 1.21 only";
  EXPECT_FALSE(has_errors(validate_model(versioned_model(14, 28, 28), "m")));
  auto m = testing::parse_or_fail(R"ONNX(
<ir_version: 14, opset_import: ["" : 28, "local" : 1]>
g (float[2] x, float[2] b) => (float[2] y, float[2] z) {
   c = Celu (x)
   y = SwiGLU (c, b)
   z = local.f (x)
}
<domain: "local", opset_import: ["" : 27]>
f (x) => (y) {
   y = Celu (x)
}
)ONNX");
  EXPECT_FALSE(has_errors(validate_model(m, "m")));  // the shipped rules state them
  const OpRules none;
  auto d = validate_model(m, "m.onnx", &none);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_THAT(d[0].str(), HasSubstr("m.onnx: error: ai.onnx op Celu-28 (opset 28) is newer than ONNX 1.21"));
  EXPECT_THAT(d[0].str(), HasSubstr("no rule states it: add one ('op Celu since 28') in a --schemas folder (nor for SwiGLU-28)"));
  // Celu in the function, at opset 27, is Celu-12: ONNX's own.
  EXPECT_THAT(d[0].str(), ::testing::Not(HasSubstr("Celu-12")));
}

TEST(ValidateStructure, OverloadsAreDistinctFunctions) {
  auto m = testing::parse_or_fail(R"ONNX(
<ir_version: 10, opset_import: ["" : 18, "local" : 1]>
g (float[2] x) => (float[2] y) {
   t = local.f:abs (x)
   y = local.f:neg (t)
}
<domain: "local", overload: "abs", opset_import: ["" : 18]>
f (x) => (y) {
   y = Abs (x)
}
<domain: "local", overload: "neg", opset_import: ["" : 18]>
f (x) => (y) {
   y = Neg (x)
}
)ONNX");
  EXPECT_FALSE(has_errors(validate_model(m, "m")));
  m.mutable_graph()->mutable_node(1)->set_overload("sqrt");
  auto d = validate_structure(m, "m");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_THAT(d[0].message, HasSubstr("calls function local.f:sqrt, which the model does not define"));
}

TEST(ValidateStructure, DuplicateFunction) {
  auto m = testing::parse_or_fail(R"ONNX(
<ir_version: 8, opset_import: ["" : 18, "local" : 1]>
g (float[2] x) => (float[2] y) {
   y = local.f (x)
}
<domain: "local", opset_import: ["" : 18]>
f (x) => (y) {
   y = Abs (x)
}
<domain: "local", opset_import: ["" : 18]>
f (x) => (y) {
   y = Neg (x)
}
)ONNX");
  auto d = validate_structure(m, "m");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].str(), "m: error: model-local function is defined more than once [at function local.f]");
}

TEST(ValidateStructure, MissingImportInsideSubgraphNamesThePath) {
  auto m = testing::parse_or_fail(R"ONNX(
<ir_version: 8, opset_import: ["" : 18]>
g (bool c, float[2] x) => (float[2] y) {
   y = If (c) <then_branch: graph = t () => (float[2] a) {
      a = custom.Op (x)
   }, else_branch: graph = e () => (float[2] b) {
      b = Identity (x)
   }>
}
)ONNX");
  auto d = validate_structure(m, "m");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].str(),
            "m: error: domain 'custom' is used without an opset import "
            "[at graph 'g' > node 'y' (If) > attribute 'then_branch' > node 'a' (custom.Op)]");
}

TEST(ValidateModel, UntypedOutputIsANoteAndTheCheckerStillRuns) {
  auto m = testing::parse_or_fail(R"ONNX(
<ir_version: 8, opset_import: ["" : 18]>
g (float[2] x) => (y) {
   y = Abs (x)
}
)ONNX");
  auto d = validate_model(m, "m");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].severity, Severity::Note);
  // ...and the checker did run: a real problem is still found.
  auto* alpha = m.mutable_graph()->mutable_node(0)->add_attribute();
  alpha->set_name("alpha");
  alpha->set_type(onnx::AttributeProto::FLOAT);
  alpha->set_f(1.0f);
  EXPECT_TRUE(has_errors(validate_model(m, "m")));
}

TEST(ValidateModel, UnknownDefaultDomainOpPassesAsInferenceNotAsOnnx) {
  auto m = testing::parse_or_fail(R"ONNX(
<ir_version: 8, opset_import: ["" : 18]>
g (float[2] x) => (float[2] y) {
   y = NoSuchOp <alpha: float = 1.0> (x)
}
)ONNX");
  EXPECT_FALSE(has_errors(validate_model(m, "m")));
  EXPECT_TRUE(has_errors(validate_model(m, "m", nullptr, CheckerMode::onnx)));
}

// What ONNX 1.18 to 1.21 brought, read with an ONNX that predates it (skipped once the
// linked ONNX knows IR 11).
TEST(RunOnnxChecker, OneLineWithoutOnnxContext) {
  auto m = testing::parse_or_fail(R"ONNX(
<ir_version: 8, opset_import: ["" : 18]>
g (float[2] x) => (float[2] y) {
   y = NoSuchOp (x)
}
)ONNX");
  auto d = run_onnx_checker(m, false, "m.onnx", nullptr, CheckerMode::onnx);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_THAT(d[0].str(), ::testing::StartsWith("m.onnx: error: ONNX checker: No Op registered for NoSuchOp"));
  EXPECT_EQ(d[0].str().find('\n'), std::string::npos);
}

TEST(RunOnnxChecker, FullCheckRejectsTheNeverTakenBranch) {
  // Why shapeprop exists: aten_t on a rank-1 input is valid, yet ONNX's full check infers
  // the Transpose<perm=[1,0]> branch that never runs, and fails.
  auto m = testing::parse_or_fail(R"ONNX(
<ir_version: 8, opset_import: ["" : 18]>
g (float[7] x) => (float[7] y) {
   s = Shape (x)
   r = Size (s)
   two = Constant <value: tensor = int64 {2}> ()
   c = Equal (r, two)
   y = If (c) <then_branch: graph = t () => (a) {
      a = Transpose <perm: ints = [1, 0]> (x)
   }, else_branch: graph = e () => (b) {
      b = Identity (x)
   }>
}
)ONNX");
  EXPECT_TRUE(run_onnx_checker(m, false, "m").empty());
  EXPECT_FALSE(run_onnx_checker(m, true, "m").empty());
}

}  // namespace
}  // namespace shapeprop
