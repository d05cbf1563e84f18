// shapeprop::check_model: the library entry point of the checker (its diagnostics one by
// one are golden tests, tests/golden/check/).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "shapeprop/check.h"
#include "shapeprop/validate.h"
#include "test_util.h"

namespace shapeprop {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// torchlib's aten_t (If on Rank(self) == 2: Transpose, else Identity) with `value_info`
// as its value_info, called on float[7] and float[3,4].
onnx::ModelProto aten_t(const std::string& value_info) {
  std::string body = testing::torchlib("aten_t");
  const std::string signature = "aten_t (self) => (result_1)\n";
  body.insert(body.find(signature) + signature.size(), value_info + "\n");
  return testing::parse_or_fail(R"(<ir_version: 10, opset_import: ["" : 18, "pkg.onnxscript.torch_lib" : 1,
                                                               "pkg.onnxscript.torch_lib.common" : 1]>
main (float[7] v, float[3,4] w) => (float[7] v_t, float[4,3] w_t) {
   v_t = pkg.onnxscript.torch_lib.aten_t (v)
   w_t = pkg.onnxscript.torch_lib.aten_t (w)
}
)" + body + testing::torchlib("Rank"));
}

Diagnostics errors_of(const Diagnostics& all) {
  Diagnostics out;
  for (const auto& d : all)
    if (d.severity == Severity::Error) out.push_back(d);
  return out;
}

TEST(CheckModel, PassesWhatTheFullCheckerRejects) {
  // The rank-1 call never takes the Transpose branch; the branch's declared type holds in
  // the rank-2 context, the only one that computes it.
  auto m = aten_t("<float[] self, int64 rank, float[4,3] result>");
  const auto found = check_model(m);
  EXPECT_TRUE(errors_of(found).empty()) << errors_of(found).front().str();
  ASSERT_FALSE(found.empty());
  EXPECT_EQ(found.back().severity, Severity::Note);
  EXPECT_EQ(found.back().message, "checked 2 declared types in the graph and 5 in 1 function (2 contexts)");
  EXPECT_TRUE(has_errors(run_onnx_checker(m, /*full_check=*/true, "")));
}

TEST(CheckModel, NeverChangesTheModel) {
  auto m = aten_t("<float[7] self, float[9] result>");
  const std::string before = m.SerializeAsString();
  EXPECT_TRUE(has_errors(check_model(m)));
  EXPECT_EQ(m.SerializeAsString(), before);
}

TEST(CheckModel, FunctionEntryFalseInOneContextNamesThatCall) {
  auto m = aten_t("<float[7] self>");
  const auto errors = errors_of(check_model(m));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].message,
            "'self' is declared float[7] (value_info of function pkg.onnxscript.torch_lib.aten_t) but proven "
            "float[3,4] in the context (float[3,4]): rank 1, proven 2; false in 1 of the 2 contexts that compute "
            "it, which all hold float[]");
  EXPECT_THAT(errors[0].call_path, ElementsAre("graph 'main'", "node 'w_t' (pkg.onnxscript.torch_lib.aten_t)",
                                               "input 'self'"));
}

TEST(CheckModel, DeclarationsVouchForNothing) {
  // NonZero's count is left to the data (the analysis names it dyn__0 without knowing
  // it): neither declaration is proven false, and the first one does not make the second
  // one false either (they are not used as facts).
  auto m = testing::parse_or_fail(R"(<ir_version: 10, opset_import: ["" : 18]>
main (float[4] x) => (int64[1,6] u) <int64[1,5] t> {
   t = NonZero (x)
   u = Identity (t)
}
)");
  EXPECT_TRUE(errors_of(check_model(m)).empty());
}

TEST(CheckModel, OneDimParamForSizesThatDiffer) {
  // TorchScript's exporter reuses one dim_param for the sizes of two strided layers:
  // floor((H+1)/2) and floor((H+3)/4), equal at H=1 but not at H=3.
  auto m = testing::parse_or_fail(R"(<ir_version: 10, opset_import: ["" : 18]>
main (float[1,1,H] x) => (float[1,1,D] b) <float[1,1,D] a> {
   a = MaxPool <kernel_shape = [3], strides = [2], pads = [1, 1]> (x)
   b = MaxPool <kernel_shape = [3], strides = [2], pads = [1, 1]> (a)
}
)");
  const auto errors = errors_of(check_model(m));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_THAT(errors[0].message, HasSubstr("'b' is declared float[1,1,D] (graph output) but proven float[1,1,floor((H+3)/4)]: "
                                           "dim 2 is D, which is floor((H+1)/2) at 'a' (dim 2), proven floor((H+3)/4) "
                                           "(they differ where H=3)"));
}

TEST(CheckModel, DimParamOfAFunctionIsOneSizePerCall) {
  auto m = testing::parse_or_fail(R"(<ir_version: 10, opset_import: ["" : 18, "local" : 1]>
main (float[2] a, float[3] b) => (y1, y2) {
   y1 = local.pair (a, a)
   y2 = local.pair (a, b)
}
<domain: "local", opset_import: ["" : 18]>
pair (x, z) => (y)
  <float[S] x, float[S] z>
{
   y = Concat <axis: int = 0> (x, z)
}
)");
  const auto errors = errors_of(check_model(m));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_THAT(errors[0].message, HasSubstr("'z' is declared float[S] (value_info of function local.pair) but proven "
                                           "float[3] in the context (float[2], float[3]): dim 0 is S, which is 2 at "
                                           "'x' (dim 0), proven 3"));
  EXPECT_THAT(errors[0].call_path, ElementsAre("graph 'main'", "node 'y2' (local.pair)", "input 'z'"));
}

TEST(CheckModel, DimParamOfTheGraphIsOneSize) {
  auto m = testing::parse_or_fail(R"(<ir_version: 10, opset_import: ["" : 18]>
main (float[3] a, float[4] b) => (float[S] ya, float[S] yb) {
   ya = Identity (a)
   yb = Identity (b)
}
)");
  const auto errors = errors_of(check_model(m));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].message,
            "'yb' is declared float[S] (graph output) but proven float[4]: dim 0 is S, which is 3 at 'ya' (dim 0), proven 4");
}

TEST(CheckModel, TypesOtherThanTensors) {
  auto m = testing::parse_or_fail(R"(<ir_version: 10, opset_import: ["" : 18]>
main (float[3] x) => (seq(int64[3]) s, seq(float[3]) t, float[3] u) {
   zero = Constant <value: tensor = int64 {0}> ()
   s = SequenceConstruct (x, x)
   t = SequenceConstruct (x)
   u = SequenceAt (t, zero)
}
)");
  const auto errors = errors_of(check_model(m));
  ASSERT_EQ(errors.size(), 1u) << errors.back().str();
  EXPECT_EQ(errors[0].message, "'s' is declared seq(int64[3]) (graph output) but proven seq(float[3]): element type "
                               "int64, proven float");
}

TEST(CheckModel, MalformedModelStopsBeforeInference) {
  auto m = testing::parse_or_fail(R"(<ir_version: 10, opset_import: ["" : 18, "local" : 1]>
main (float[3] a) => (float[3] y) {
   y = local.missing (a)
}
<domain: "local", opset_import: ["" : 18]>
other (x) => (y) {
   y = Identity (x)
}
)");
  CheckOptions options;
  options.origin = "m.onnx";
  const auto found = check_model(m, options);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].str(), "m.onnx: error: calls function local.missing, which the model does not define [at graph "
                            "'main' > node 'y' (local.missing)]");
}

}  // namespace
}  // namespace shapeprop
