// What validation tolerates though ONNX's checker rejects it (check/inference_tolerance.h):
// each case is held against ONNX 1.17's checker itself, so that the two never disagree on
// whether a model is rejected.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "check/inference_tolerance.h"
#include "shapeprop/validate.h"
#include "test_util.h"

namespace shapeprop {
namespace {

using ::testing::HasSubstr;

// The tolerances found as errors; and that ONNX's checker rejects the model exactly when
// there are some.
Diagnostics tolerances(std::string_view text) {
  const auto m = testing::parse_or_fail(text);
  Diagnostics found = inference_tolerances(m, "m", nullptr, Severity::Error);
  EXPECT_EQ(has_errors(found), has_errors(run_onnx_checker(m, false, "m", nullptr, CheckerMode::onnx)))
      << (found.empty() ? "(none)" : found[0].str());
  return found;
}

TEST(InferenceTolerance, DefaultDomainFunctionsThatAreNoOps) {
  auto found = tolerances(R"ONNX(
<ir_version: 8, opset_import: ["" : 18]>
g (float[2] x) => (float[2] y) {
   t = MyAbs (x)
   y = MyAbs (t)
}
<domain: "", opset_import: ["" : 18]>
MyAbs (a) => (b) {
   b = Abs (a)
}
)ONNX");
  ASSERT_EQ(found.size(), 1u);  // once per function
  EXPECT_THAT(found[0].str(), HasSubstr("calls MyAbs, a model-local function of the default domain whose name is no "
                                        "ONNX op at opset 18"));
  // A function named as an op of that opset is the op, for ONNX's checker and ONNX Runtime.
  EXPECT_TRUE(tolerances(R"ONNX(
<ir_version: 8, opset_import: ["" : 18]>
g (float[2] x) => (float[2] y) {
   y = Relu (x)
}
<domain: "", opset_import: ["" : 18]>
Relu (a) => (b) {
   b = Abs (a)
}
)ONNX").empty());
}

TEST(InferenceTolerance, FunctionOpsetsWithAnotherSchema) {
  auto found = tolerances(R"ONNX(
<ir_version: 8, opset_import: ["" : 18, "local" : 1]>
g (float[1,2] x) => (y) {
   y = local.f (x)
}
<domain: "local", opset_import: ["" : 12]>
f (a) => (b) {
   t = Squeeze <axes = [0]> (a)
   b = Neg (t)
}
)ONNX");
  ASSERT_EQ(found.size(), 1u);  // once per function and domain, at the first op
  EXPECT_THAT(found[0].str(), HasSubstr("function local.f imports opset 12 of the default domain and the model 18, and "
                                        "Squeeze has another schema at each (since 11 and 13)"));
  // Another version where the ops keep their schemas.
  EXPECT_TRUE(tolerances(R"ONNX(
<ir_version: 8, opset_import: ["" : 18, "local" : 1]>
g (float[2] x) => (y) {
   y = local.f (x)
}
<domain: "local", opset_import: ["" : 17]>
f (a) => (b) {
   b = Abs (a)
}
)ONNX").empty());
}

TEST(InferenceTolerance, DomainsTheModelDoesNotImportAreHeldToTheFirstFunctionThatDoes) {
  // As ONNX's check_model_local_functions merges the imports: f's 11 stands for the model's.
  auto found = tolerances(R"ONNX(
<ir_version: 8, opset_import: ["local" : 1]>
g (float[1,2] x) => (y, z) {
   y = local.f (x)
   z = local.h (x)
}
<domain: "local", opset_import: ["" : 11]>
f (a) => (b) {
   b = Squeeze <axes = [0]> (a)
}
<domain: "local", opset_import: ["" : 18]>
h (a) => (b) {
   b = Squeeze (a)
}
)ONNX");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_THAT(found[0].str(), HasSubstr("function local.h imports opset 18 of the default domain and function local.f, "
                                        "the first to import it (the model does not), 11, and Squeeze has another "
                                        "schema at each (since 13 and 11)"));
}

TEST(InferenceTolerance, ValidationWarnsAndUnderStrictRefuses) {
  const auto m = testing::parse_or_fail(R"ONNX(
<ir_version: 8, opset_import: ["" : 18]>
g (float[2] x) => (float[2] y) {
   y = MyAbs (x)
}
<domain: "", opset_import: ["" : 18]>
MyAbs (a) => (b) {
   b = Abs (a)
}
)ONNX");
  const Diagnostics lenient = validate_model(m, "m");
  ASSERT_EQ(lenient.size(), 1u);
  EXPECT_EQ(lenient[0].severity, Severity::Warning);
  EXPECT_THAT(lenient[0].message, HasSubstr("; read as ONNX's inference reads it (an error under --strict)"));
  const Diagnostics strict = validate_model(m, "m", nullptr, CheckerMode::as_inference, Limits{}, /*strict=*/true);
  ASSERT_TRUE(has_errors(strict));
  EXPECT_THAT(strict[0].message, ::testing::Not(HasSubstr("--strict")));
}

}  // namespace
}  // namespace shapeprop
