// shapeprop::SchemaRegistry: ONNX's own InferShapes, analysing model-local functions per
// call site through shapeprop.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <iostream>
#include <map>
#include <set>

#include "infer/declared_type.h"
#include "check/facts_view.h"
#include "onnx/checker.h"
#include "onnx/shape_inference/implementation.h"
#include "shapeprop/infer.h"
#include "shapeprop/schema_registry.h"
#include "support/dim_params.h"
#include "test_util.h"

namespace shapeprop {
namespace {

using ::testing::HasSubstr;

const onnx::ShapeInferenceOptions kStrict{/*check_type=*/true, /*error_mode=*/1, /*enable_data_propagation=*/false};

// torchlib's aten_t (If on Rank(self) == 2: Transpose, else Identity), called on float[7]
// and float[3,4].
onnx::ModelProto aten_t_model() {
  return testing::parse_or_fail(R"(<ir_version: 8, opset_import: ["" : 18, "pkg.onnxscript.torch_lib" : 1,
                                                              "pkg.onnxscript.torch_lib.common" : 1]>
main (float[7] v, float[3,4] w) => (float[7] v_t, float[4,3] w_t) {
   v_t = pkg.onnxscript.torch_lib.aten_t (v)
   w_t = pkg.onnxscript.torch_lib.aten_t (w)
}
)" + testing::torchlib("aten_t") + testing::torchlib("Rank"));
}

std::string type_text(const onnx::ValueInfoProto& vi) { return infer::type_text(vi.type()); }

TEST(SchemaRegistry, StrictInferencePassesAtenTOnRank1) {
  const auto model = aten_t_model();
  // ONNX's own registry: both branches of the If are inferred, and the Transpose of the
  // rank-1 call's never-taken branch fails.
  onnx::ModelProto with_onnx = model;
  EXPECT_THROW(onnx::shape_inference::InferShapes(with_onnx, onnx::OpSchemaRegistry::Instance(), kStrict),
               onnx::InferenceError);
  // Through the registry: each call is analysed in its context, taken branch only.
  onnx::ModelProto with_shapeprop = model;
  SchemaRegistry registry(model);
  EXPECT_NO_THROW(onnx::shape_inference::InferShapes(with_shapeprop, &registry, kStrict));
  EXPECT_EQ(type_text(with_shapeprop.graph().output(0)), "float[7]");
  EXPECT_EQ(type_text(with_shapeprop.graph().output(1)), "float[4,3]");
  // A full check built on it: ONNX's structural checker with the registry, then strict
  // inference on a copy, as check_model(model, full_check=true) does.
  onnx::checker::CheckerContext ctx;
  ctx.set_ir_version(static_cast<int>(model.ir_version()));
  ctx.set_schema_registry(&registry);
  std::unordered_map<std::string, int> opsets;
  for (const auto& o : model.opset_import()) opsets[o.domain()] = static_cast<int>(o.version());
  ctx.set_opset_imports(opsets);
  onnx::checker::LexicalScopeContext lex;
  EXPECT_NO_THROW(onnx::checker::check_graph(model.graph(), ctx, lex));
  onnx::ModelProto copy = model;
  EXPECT_NO_THROW(onnx::shape_inference::InferShapes(copy, ctx.get_schema_registry(), kStrict));
}

TEST(SchemaRegistry, CallsAreMemoisedPerContext) {
  std::string text = R"(<ir_version: 8, opset_import: ["" : 18, "local" : 1]>
main (float[2,3] a, float[4] b, float[N,5,6] c) => (r999) {
)";
  const char* args[] = {"a", "b", "c"};
  for (int i = 0; i < 1000; ++i) text += "   r" + std::to_string(i) + " = local.Rank (" + args[i % 3] + ")\n";
  text += R"(}
<domain: "local", opset_import: ["" : 18]>
Rank (input) => (return_val) {
   tmp = Shape (input)
   return_val = Size (tmp)
}
)";
  auto model = testing::parse_or_fail(text);
  SchemaRegistry registry(model);
  onnx::shape_inference::InferShapes(model, &registry, kStrict);
  EXPECT_EQ(registry.calls_answered(), 1000u);
  EXPECT_EQ(registry.contexts_analysed(), 3u);
}

TEST(SchemaRegistry, AnErrorOnTheTakenPathFailsTheCallWithItsPath) {
  auto model = testing::parse_or_fail(R"(<ir_version: 8, opset_import: ["" : 18, "local" : 1]>
main (float[7] v) => (y) {
   y = local.f (v)
}
<domain: "local", opset_import: ["" : 18]>
f (x) => (r) {
   r = Transpose <perm: ints = [1, 0]> (x)
}
)");
  SchemaRegistry registry(model);
  try {
    onnx::shape_inference::InferShapes(model, &registry, kStrict);
    ADD_FAILURE() << "strict inference passed";
  } catch (const onnx::InferenceError& e) {
    EXPECT_THAT(e.what(), HasSubstr("(op_type:f): [ShapeInferenceError] shapeprop: error: ONNX inference failed: "));
    EXPECT_THAT(e.what(), HasSubstr("[at function local.f > node 'r' (Transpose)]"));
  }
}

TEST(SchemaRegistry, AnswersOnlyForTheModelsOwnFunctions) {
  auto model = testing::parse_or_fail(R"(<ir_version: 10, opset_import: ["" : 18, "local" : 1]>
main (float[7] v) => (y) {
   y = local.f (v)
}
<domain: "local", opset_import: ["" : 18]>
f (x) => (r) {
   r = Identity (x)
}
<domain: "local", overload: "one", opset_import: ["" : 18]>
g (x) => (r) {
   r = Identity (x)
}
<domain: "local", overload: "two", opset_import: ["" : 18]>
g (x) => (r) {
   r = Neg (x)
}
)");
  SchemaRegistry registry(model);
  EXPECT_EQ(registry.GetSchema("Relu", 18, ""), onnx::OpSchemaRegistry::Instance()->GetSchema("Relu", 18, ""));
  ASSERT_NE(registry.GetSchema("f", 1, "local"), nullptr);
  EXPECT_EQ(registry.GetSchema("f", 1, "local")->domain(), "local");
  EXPECT_EQ(registry.GetSchema("g", 1, "local"), nullptr);  // overloaded: left to ONNX
  EXPECT_EQ(registry.GetSchema("h", 1, "local"), nullptr);
}

// ----------------------------------------------------------------- the corpus

// Equal types, but that where shapeprop leaves a dim unknown ONNX may have made up a
// symbol (unk__N, not among the model's dim_params).
bool same_type(const onnx::TypeProto& onnx_type, const onnx::TypeProto& ours, const std::set<std::string>& model_symbols) {
  if (onnx_type.value_case() != ours.value_case()) return false;
  switch (ours.value_case()) {
    case onnx::TypeProto::kTensorType: {
      const auto& a = onnx_type.tensor_type();
      const auto& b = ours.tensor_type();
      if (a.elem_type() != b.elem_type() || a.has_shape() != b.has_shape()) return false;
      if (!b.has_shape()) return true;
      if (a.shape().dim_size() != b.shape().dim_size()) return false;
      for (int i = 0; i < b.shape().dim_size(); ++i) {
        const auto& x = a.shape().dim(i);
        const auto& y = b.shape().dim(i);
        // A symbol made up for a size nobody knows (ONNX's unk__N, shapeprop's fresh dyn__N,
        // each numbered its own way) says as much as no dim.
        auto fresh = [&](const std::string& p) {
          return (p.rfind("unk__", 0) == 0 || Dim::is_fresh_symbol(p)) && !model_symbols.count(p);
        };
        const bool made_up = !x.has_dim_value() && (!x.has_dim_param() || fresh(x.dim_param()));
        const bool unknown = !y.has_dim_value() && (!y.has_dim_param() || fresh(y.dim_param()));
        if (made_up || unknown) {
          if (made_up != unknown) return false;
        } else if (x.SerializeAsString() != y.SerializeAsString()) {
          return false;
        }
      }
      return true;
    }
    case onnx::TypeProto::kSequenceType:
      return same_type(onnx_type.sequence_type().elem_type(), ours.sequence_type().elem_type(), model_symbols);
    case onnx::TypeProto::kOptionalType:
      return same_type(onnx_type.optional_type().elem_type(), ours.optional_type().elem_type(), model_symbols);
    default:
      return onnx_type.SerializeAsString() == ours.SerializeAsString();
  }
}

std::map<std::string, const onnx::TypeProto*> graph_types(const onnx::GraphProto& g) {
  std::map<std::string, const onnx::TypeProto*> out;
  for (const auto* list : {&g.input(), &g.value_info(), &g.output()})
    for (const auto& vi : *list)
      if (vi.has_type()) out[vi.name()] = &vi.type();
  return out;
}

// ONNX's InferShapes through the registry (strict, with data propagation) next to
// shapeprop's annotation, on the main graph's values:
//   - they never contradict each other;
//   - a call of a model-local function whose inputs ONNX knows as shapeprop does (the same
//     types, and the same elements wherever shapeprop knows elements) gets the same types
//     for its outputs: the registry answers what shapeprop's analysis of that context is.
// Where ONNX's own inference of an operator in the main graph knows less (Slice, Where in
// the transformers), the calls after it get a vaguer context, and it shows in the count
// of values that differ.
TEST(SchemaRegistry, AgreesWithAnnotationOnEveryCorpusModel) {
  size_t models = 0;
  for (const auto& path : testing::files_under(testing::corpus_dir(), ".onnx")) {
    if (path.filename() == "dort_llama_rotary_1_inlined.onnx") continue;  // no opset import for com.microsoft
    SCOPED_TRACE(path.string());
    auto loaded = load_model(path);
    ASSERT_TRUE(loaded.ok()) << loaded.error().str();
    const onnx::ModelProto& model = *loaded;
    ++models;

    onnx::ModelProto through_registry = model;
    SchemaRegistry registry(model);
    onnx::shape_inference::DataValueMap shape_data;
    const onnx::ShapeInferenceOptions options{/*check_type=*/true, /*error_mode=*/1, /*enable_data_propagation=*/true};
    ASSERT_NO_THROW(onnx::shape_inference::InferShapes(through_registry, &registry, options, &shape_data));

    onnx::ModelProto annotated = model;
    ASSERT_TRUE(infer_shapes(annotated).ok());
    auto calls = CallGraph::build(model);
    ASSERT_TRUE(calls.ok());
    check::FactsView facts(model, *calls, InferOptions{});

    const auto symbols = declared_dim_params(model);
    const auto theirs = graph_types(through_registry.graph());
    const auto ours = graph_types(annotated.graph());
    size_t same = 0;
    for (const auto& [name, type] : ours) {
      auto it = theirs.find(name);
      if (it == theirs.end()) continue;
      infer::DimParams scratch;
      EXPECT_FALSE(infer::contradiction(*it->second, Fact::of_type(*type), scratch, name))
          << name << ": " << infer::type_text(*it->second) << " vs " << infer::type_text(*type);
      if (same_type(*it->second, *type, symbols)) ++same;
    }

    std::set<std::string> constants;  // what ONNX knows the elements of besides its shape data
    for (const auto& t : model.graph().initializer()) constants.insert(t.name());
    for (const auto& n : model.graph().node())
      if (n.op_type() == "Constant" && n.domain().empty()) constants.insert(n.output(0));
    size_t calls_alike = 0, calls_total = 0;
    for (const auto& n : model.graph().node()) {
      if (!calls->find(FunctionId::of(n))) continue;
      ++calls_total;
      bool alike = true;
      for (const auto& in : n.input()) {
        if (in.empty() || constants.count(in)) continue;  // ONNX knows a constant exactly
        auto a = theirs.find(in), b = ours.find(in);
        if (a == theirs.end() || b == ours.end() || !same_type(*a->second, *b->second, symbols)) alike = false;
        const Fact* f = facts.fact(facts.main(), in);
        if (alike && f && f->has_elements()) {
          auto data = shape_data.find(in);
          auto ours_value = f->as_shape_value();
          alike = data != shape_data.end() && ours_value &&
                  data->second.SerializeAsString() == ours_value->SerializeAsString();
        }
      }
      if (!alike) continue;
      ++calls_alike;
      for (const auto& out : n.output()) {
        auto a = theirs.find(out), b = ours.find(out);
        if (b == ours.end()) continue;
        ASSERT_NE(a, theirs.end()) << out;
        EXPECT_TRUE(same_type(*a->second, *b->second, symbols))
            << "node " << out << ": ONNX+registry " << infer::type_text(*a->second) << ", annotate "
            << infer::type_text(*b->second);
      }
    }
    std::cout << "[          ] " << path.filename().string() << ": " << same << " of " << ours.size()
              << " graph values the same; " << calls_alike << " of " << calls_total
              << " calls with inputs known alike, their outputs the same\n";
  }
  EXPECT_GE(models, 39u);
}

}  // namespace
}  // namespace shapeprop
