#include <fstream>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "shapeprop/infer.h"
#include "shapeprop/io.h"
#include "shapeprop/text.h"
#include "test_util.h"

namespace shapeprop {
namespace {

using ::testing::HasSubstr;

using testing::torchlib;

const onnx::ValueInfoProto* value_info(const google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>& list,
                                       const std::string& name) {
  for (const auto& vi : list)
    if (vi.name() == name) return &vi;
  return nullptr;
}

std::string type_of(const onnx::ValueInfoProto* vi) {
  if (!vi) return "<none>";
  onnx::ModelProto m;
  auto* g = m.mutable_graph();
  g->set_name("g");
  *g->add_input() = *vi;
  const std::string text = print_graph(*g);
  return text.substr(3, text.find(')') - 3);  // "g (float[3] x) => ..." -> "float[3] x"
}

// 1,000 calls with 3 distinct signatures analyse 3 bodies.
TEST(Infer, MemoisedPerContext) {
  std::string text = R"(<ir_version: 8, opset_import: ["" : 18, "pkg.onnxscript.torch_lib.common" : 1]>
main (float[2,3] a, float[4] b, float[N,5,6] c) => (int64 r999) {
)";
  const char* args[] = {"a", "b", "c"};
  for (int i = 0; i < 1000; ++i)
    text += "   r" + std::to_string(i) + " = pkg.onnxscript.torch_lib.common.Rank (" + args[i % 3] + ")\n";
  text += "}\n" + torchlib("Rank");
  auto m = testing::parse_or_fail(text);
  auto r = infer_shapes(m);
  ASSERT_TRUE(r.ok()) << r.error().str();
  EXPECT_EQ(r->stats.call_sites, 1000u);
  EXPECT_EQ(r->stats.distinct_contexts, 3u);
  EXPECT_EQ(r->stats.body_analyses, 3u);
  EXPECT_THAT(summary_line(*r), HasSubstr("1000 call sites, 3 distinct contexts (3 bodies analysed)"));
  EXPECT_EQ(type_of(value_info(m.graph().value_info(), "r0")), "int64 r0");
}

TEST(Infer, RecursionIsAnErrorBeforeAnalysis) {
  auto m = testing::parse_or_fail(R"(<ir_version: 8, opset_import: ["" : 18, "local" : 1]>
main (float[2] x) => (float[2] y) {
   y = local.f (x)
}
<domain: "local", opset_import: ["" : 18, "local" : 1]>
f (x) => (y) {
   y = local.f (x)
}
)");
  auto r = infer_shapes(m);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("local.f -> local.f"));
}

TEST(Infer, TakenBranchOnlyAndJoinAcrossContexts) {
  auto m = testing::parse_or_fail(R"(<ir_version: 8, opset_import: ["" : 18, "pkg.onnxscript.torch_lib" : 1, "pkg.onnxscript.torch_lib.common" : 1]>
main (float[7] v, float[3,4] w) => (v_t, w_t) {
   v_t = pkg.onnxscript.torch_lib.aten_t (v)
   w_t = pkg.onnxscript.torch_lib.aten_t (w)
}
)" + torchlib("aten_t") + torchlib("Rank"));
  InferOptions strict;
  strict.strict = true;
  auto r = infer_shapes(m, strict);
  ASSERT_TRUE(r.ok()) << r.error().str();
  EXPECT_FALSE(has_errors(r->diagnostics)) << (r->diagnostics.empty() ? "" : r->diagnostics[0].str());
  EXPECT_EQ(type_of(&m.graph().output(0)), "float[7] v_t");
  EXPECT_EQ(type_of(&m.graph().output(1)), "float[4,3] w_t");
  const auto& f = m.functions(0);
  ASSERT_EQ(f.name(), "aten_t");
  // Ranks 1 and 2: the join keeps the element type only.
  EXPECT_EQ(type_of(value_info(f.value_info(), "self")), "float[] self");
  EXPECT_EQ(type_of(value_info(f.value_info(), "rank")), "int64 rank");
  EXPECT_EQ(m.ir_version(), 10);
}

TEST(Infer, SameRankDifferentSymbolsJoinToAFreshSymbol) {
  auto m = testing::parse_or_fail(R"(<ir_version: 10, opset_import: ["" : 18, "local" : 1]>
main (float[N,3] a, float[M,3] b) => (ya, yb) {
   ya = local.f (a)
   yb = local.f (b)
}
<domain: "local", opset_import: ["" : 18]>
f (x) => (y) {
   t = Neg (x)
   y = Abs (t)
}
)");
  auto r = infer_shapes(m);
  ASSERT_TRUE(r.ok()) << r.error().str();
  const auto& f = m.functions(0);
  EXPECT_EQ(type_of(value_info(f.value_info(), "x")), "float[unk__0,3] x");
  EXPECT_EQ(type_of(value_info(f.value_info(), "t")), "float[unk__0,3] t");
  EXPECT_EQ(type_of(&m.graph().output(0)), "float[N,3] ya");
  EXPECT_EQ(type_of(&m.graph().output(1)), "float[M,3] yb");
}

// A declared dim_param other than an input's size stands where nothing is proven only if it
// names one dim, or several the analysis proves one size (issue 44): K names a's and b's
// count, the same NonZero's, and stays; L names two NonZeros' counts, which may differ, and
// goes (listed, with the values declaring it); J names one dim and stays.
TEST(Infer, DeclaredNamesStayWhereTheyClaimNothing) {
  auto m = testing::parse_or_fail(R"(<ir_version: 10, opset_import: ["" : 18]>
main (float[N] x, float[M] y) => (int64[1,K] a, int64[1,K] b, int64[1,L] c, int64[2,L] d, int64[2,J] e) {
   a = NonZero (x)
   b = Identity (a)
   c = NonZero (y)
   e = NonZero (c)
   d = Identity (e)
}
)");
  auto r = infer_shapes(m);
  ASSERT_TRUE(r.ok()) << r.error().str();
  const auto& out = m.graph().output();
  EXPECT_EQ(type_of(&out[0]), "int64[1,K] a");
  EXPECT_EQ(type_of(&out[1]), "int64[1,K] b");
  EXPECT_THAT(type_of(&out[2]), ::testing::MatchesRegex(R"(int64\[1,dyn__[0-9]+\] c)"));
  EXPECT_THAT(type_of(&out[3]), ::testing::MatchesRegex(R"(int64\[2,dyn__[0-9]+\] d)"));
  EXPECT_EQ(type_of(&out[4]), "int64[2,J] e");
  EXPECT_TRUE(r->diagnostics.empty()) << r->diagnostics.front().str();
  ASSERT_EQ(r->dropped_dim_params.size(), 1u);
  EXPECT_EQ(r->dropped_dim_params[0].name, "L");
  EXPECT_THAT(r->dropped_dim_params[0].values, ::testing::ElementsAre("c", "d"));
  EXPECT_THAT(r->dropped_dim_params[0].why, HasSubstr("not prove one size"));
}

// What a written model may hold (issue 50): the names of the model given, the names
// shapeprop mints and expressions over them; anything else is named with its value.
TEST(Infer, ForeignDimParams) {
  auto model = testing::parse_or_fail(R"(<ir_version: 8, opset_import: ["" : 18]>
g (float[batch,'seq',24] x) => (float[a] y) <float[b] t> {
  t = Identity (x)
  y = Identity (t)
})");
  const std::set<std::string> names = dim_params_of(model);
  EXPECT_EQ(names, (std::set<std::string>{"a", "b", "batch", "seq"}));
  EXPECT_EQ(foreign_dim_param(model, names), std::nullopt);
  auto with = [&model](const std::string& text) {
    onnx::ModelProto m = model;
    m.mutable_graph()->mutable_value_info(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_param(text);
    return m;
  };
  for (const std::string ok : {"dyn__3", "unk__0", "2*floor(batch/2)", "min(seq,128)+1", "floor(dyn__3/2)", "a*b"})
    EXPECT_EQ(foreign_dim_param(with(ok), names), std::nullopt) << ok;
  EXPECT_THAT(foreign_dim_param(with(std::string("\x01") + "0"), names).value_or(""),
              HasSubstr("the type of 't' holds the dim_param \"\\x010\""));
  for (const std::string bad : {"c", "2*c", "floor(c/2)", "dyn__", "unk__1a", "batch+", "batch size"})
    EXPECT_NE(foreign_dim_param(with(bad), names), std::nullopt) << bad;
  // A model's own opaque name is kept as it is; a name the result's graph inputs hold
  // (a rename) is the model's too.
  std::set<std::string> opaque = names;
  opaque.insert("batch size");
  EXPECT_EQ(foreign_dim_param(with("batch size"), opaque), std::nullopt);
  onnx::ModelProto renamed = with("B");
  renamed.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_param("B");
  EXPECT_EQ(foreign_dim_param(renamed, names), std::nullopt);
  // Inside a sequence type, a function's value_info and a subgraph too.
  auto tensor_with = [](onnx::ValueInfoProto* vi, const std::string& name, const std::string& text) {
    vi->set_name(name);
    auto* t = vi->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto::FLOAT);
    t->mutable_shape()->add_dim()->set_dim_param(text);
    return vi;
  };
  onnx::ModelProto in_sequence = model;
  onnx::ValueInfoProto element;
  tensor_with(&element, "", std::string("\x01") + "0");
  auto* s = in_sequence.mutable_graph()->add_value_info();
  s->set_name("s");
  *s->mutable_type()->mutable_sequence_type()->mutable_elem_type() = element.type();
  EXPECT_THAT(foreign_dim_param(in_sequence, names).value_or(""), HasSubstr("'s'"));
  onnx::ModelProto in_function = model;
  tensor_with(in_function.add_functions()->add_value_info(), "v", "c");
  EXPECT_THAT(foreign_dim_param(in_function, names).value_or(""), HasSubstr("'v' holds the dim_param \"c\""));
  onnx::ModelProto in_subgraph = model;
  auto* branch = in_subgraph.mutable_graph()->add_node()->add_attribute();
  branch->set_name("then_branch");
  branch->set_type(onnx::AttributeProto::GRAPH);
  tensor_with(branch->mutable_g()->add_output(), "r", "c");
  EXPECT_THAT(foreign_dim_param(in_subgraph, names).value_or(""), HasSubstr("'r' holds the dim_param \"c\""));
}

}  // namespace
}  // namespace shapeprop
