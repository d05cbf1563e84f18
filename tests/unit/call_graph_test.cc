#include "shapeprop/call_graph.h"

#include <algorithm>
#include <fstream>
#include <iterator>
#include <set>
#include <unordered_set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test_util.h"

namespace shapeprop {
namespace {

using ::testing::ElementsAre;

CallGraph build_or_fail(const onnx::ModelProto& model) {
  auto graph = CallGraph::build(model);
  if (!graph.ok()) ADD_FAILURE() << graph.error().str();
  return graph.ok() ? *graph : *CallGraph::build(onnx::ModelProto());
}

std::string label(const onnx::FunctionProto* f) { return f ? FunctionId::of(*f).str() : "main"; }

std::vector<std::string> labels(const std::vector<const onnx::FunctionProto*>& functions) {
  std::vector<std::string> out;
  for (const auto* f : functions) out.push_back(label(f));
  return out;
}

std::vector<std::string> labels(const std::vector<CallGraph::Call>& calls) {
  std::vector<std::string> out;
  for (const auto& c : calls) out.push_back(label(c.function) + " x" + std::to_string(c.sites));
  return out;
}

// The error build() gives; fails the test if it succeeds.
Diagnostic recursion_error(const onnx::ModelProto& model) {
  auto graph = CallGraph::build(model);
  EXPECT_FALSE(graph.ok());
  return graph.ok() ? Diagnostic() : graph.error();
}

// Every callee of a listed function is listed before it.
void expect_callees_first(const CallGraph& graph) {
  std::set<const onnx::FunctionProto*> listed;
  for (const auto* f : graph.bottom_up()) {
    for (const auto& c : graph.callees(f))
      EXPECT_TRUE(listed.count(c.function)) << label(c.function) << " is listed after its caller " << label(f);
    listed.insert(f);
  }
}

// ---- FunctionId -------------------------------------------------------------------

TEST(FunctionId, CanonicalDomainAndLabel) {
  EXPECT_EQ(FunctionId("ai.onnx", "f").domain, "");
  EXPECT_EQ(FunctionId("ai.onnx", "f"), FunctionId("", "f"));
  EXPECT_EQ(FunctionId("ai.onnx", "f").str(), "f");
  EXPECT_EQ(FunctionId("ai.onnx.ml", "f").str(), "ai.onnx.ml.f");
  EXPECT_EQ(FunctionId("pkg.common", "Rank").str(), "pkg.common.Rank");
  EXPECT_EQ(FunctionId("local", "f", "abs").str(), "local.f:abs");
  EXPECT_EQ(FunctionId("", "f", "abs").str(), "f:abs");
}

TEST(FunctionId, OfNodeAndFunction) {
  onnx::NodeProto n;
  n.set_domain("ai.onnx");
  n.set_op_type("f");
  n.set_overload("o");
  onnx::FunctionProto f;
  f.set_name("f");
  f.set_overload("o");
  EXPECT_EQ(FunctionId::of(n), FunctionId::of(f));
  EXPECT_EQ(FunctionId::of(n), FunctionId("", "f", "o"));
  f.set_overload("");
  EXPECT_NE(FunctionId::of(n), FunctionId::of(f));
}

TEST(FunctionId, OrderAndHash) {
  // Domain first, then name, then overload; no overload sorts first.
  EXPECT_LT(FunctionId("a", "z"), FunctionId("b", "a"));
  EXPECT_LT(FunctionId("p", "f"), FunctionId("p", "g"));
  EXPECT_LT(FunctionId("p", "f"), FunctionId("p", "f", "abs"));
  EXPECT_LT(FunctionId("p", "f", "abs"), FunctionId("p", "f", "neg"));
  EXPECT_LT(FunctionId("ai.onnx", "z"), FunctionId("a", "a"));  // "" < "a"
  const FunctionId::Hash hash;
  EXPECT_EQ(hash(FunctionId("ai.onnx", "f")), hash(FunctionId("", "f")));
  // The parts do not run together: ("p.f", "") and ("p", "f") differ, as do the overloads.
  std::unordered_set<FunctionId, FunctionId::Hash> ids = {
      {"p", "f"}, {"p", "f", "abs"}, {"p", "f", "neg"}, {"p.f", ""}, {"", "p.f"}, {"ai.onnx", "p.f"}};
  EXPECT_EQ(ids.size(), 5u);
  EXPECT_EQ(ids.count(FunctionId("p", "f", "abs")), 1u);
}

// ---- recursion ----------------------------------------------------------------------

TEST(CallGraph, DirectSelfCallIsRecursion) {
  auto m = testing::parse_or_fail(R"ONNX(
<ir_version: 8, opset_import: ["" : 18, "pkg" : 1]>
g (float[2] x) => (float[2] y) {
   y = pkg.f (x)
}
<domain: "pkg", opset_import: ["" : 18, "pkg" : 1]>
f (x) => (y) {
   t = Abs (x)
   y = pkg.f (t)
}
)ONNX");
  auto d = recursion_error(m);
  EXPECT_EQ(d.severity, Severity::Error);
  EXPECT_EQ(d.message, "model-local function pkg.f is directly or indirectly recursive: pkg.f -> pkg.f");
  EXPECT_THAT(d.call_path, ElementsAre("function pkg.f"));
  EXPECT_EQ(d.str(), "error: " + d.message + " [at function pkg.f]");
}

constexpr const char* kThreeCycle = R"ONNX(
<ir_version: 8, opset_import: ["" : 18, "pkg" : 1]>
g (float[2] x) => (float[2] y) {
   y = pkg.g (x)
}
<domain: "pkg", opset_import: ["" : 18, "pkg" : 1]>
h (x) => (y) {
   y = pkg.f (x)
}
<domain: "pkg", opset_import: ["" : 18, "pkg" : 1]>
g (x) => (y) {
   a = pkg.leaf (x)
   y = pkg.h (a)
}
<domain: "pkg", opset_import: ["" : 18, "pkg" : 1]>
f (x) => (y) {
   y = pkg.g (x)
}
<domain: "pkg", opset_import: ["" : 18]>
leaf (x) => (y) {
   y = Abs (x)
}
)ONNX";

TEST(CallGraph, CycleThroughThreeFunctionsStartsAtTheSmallestId) {
  auto m = testing::parse_or_fail(kThreeCycle);
  auto d = recursion_error(m);
  EXPECT_EQ(d.message,
            "model-local function pkg.f is directly or indirectly recursive: pkg.f -> pkg.g -> pkg.h -> pkg.f");
  EXPECT_THAT(d.call_path, ElementsAre("function pkg.f"));
  // The same model with its functions in another order gives the same message.
  std::reverse(m.mutable_functions()->begin(), m.mutable_functions()->end());
  EXPECT_EQ(recursion_error(m).message, d.message);
}

TEST(CallGraph, CycleReachedOnlyThroughAnIfInsideAFunction) {
  auto m = testing::parse_or_fail(R"ONNX(
<ir_version: 8, opset_import: ["" : 18, "pkg" : 1]>
main (bool c, float[2] x) => (float[2] y) {
   y = pkg.f (c, x)
}
<domain: "pkg", opset_import: ["" : 18, "pkg" : 1]>
f (c, x) => (y) {
   y = If (c) <then_branch: graph = then_body () => (float[2] t) {
      t = Identity (x)
   }, else_branch: graph = else_body () => (float[2] e) {
      e = pkg.g (c, x)
   }>
}
<domain: "pkg", opset_import: ["" : 18, "pkg" : 1]>
g (c, x) => (y) {
   y = pkg.f (c, x)
}
)ONNX");
  EXPECT_EQ(recursion_error(m).message,
            "model-local function pkg.f is directly or indirectly recursive: pkg.f -> pkg.g -> pkg.f");
}

TEST(CallGraph, UnreachableRecursionIsAnErrorAndTheSmallestRecursiveFunctionIsNamed) {
  auto m = testing::parse_or_fail(R"ONNX(
<ir_version: 8, opset_import: ["" : 18, "pkg" : 1]>
main (float[2] x) => (float[2] y) {
   y = pkg.a (x)
}
<domain: "pkg", opset_import: ["" : 18]>
a (x) => (y) {
   y = Abs (x)
}
<domain: "pkg", opset_import: ["" : 18, "pkg" : 1]>
x (v) => (w) {
   w = pkg.y (v)
}
<domain: "pkg", opset_import: ["" : 18, "pkg" : 1]>
y (v) => (w) {
   w = pkg.x (v)
}
<domain: "pkg", opset_import: ["" : 18, "pkg" : 1]>
m (v) => (w) {
   w = pkg.m (v)
}
)ONNX");
  EXPECT_EQ(recursion_error(m).message,
            "model-local function pkg.m is directly or indirectly recursive: pkg.m -> pkg.m");
  m.mutable_functions()->RemoveLast();  // without pkg.m, the x/y cycle is reported
  EXPECT_EQ(recursion_error(m).message,
            "model-local function pkg.x is directly or indirectly recursive: pkg.x -> pkg.y -> pkg.x");
}

TEST(CallGraph, TheShortestCycleIsNamed) {
  // f -> g -> h -> f and f -> h -> f: the second is reported.
  auto m = testing::parse_or_fail(kThreeCycle);
  auto* f = m.mutable_functions(2);
  ASSERT_EQ(f->name(), "f");
  *f->add_node() = f->node(0);
  f->mutable_node(1)->set_op_type("h");  // f calls g and h
  EXPECT_EQ(recursion_error(m).message,
            "model-local function pkg.f is directly or indirectly recursive: pkg.f -> pkg.h -> pkg.f");
}

// ---- order, reachability, counts ------------------------------------------------------

TEST(CallGraph, BottomUpListsCalleesFirstThenBySmallestId) {
  auto m = testing::parse_or_fail(R"ONNX(
<ir_version: 8, opset_import: ["" : 18, "pkg" : 1]>
main (float[2] x) => (float[2] y) {
   t = pkg.a (x)
   y = pkg.b (t)
}
<domain: "pkg", opset_import: ["" : 18, "pkg" : 1]>
a (x) => (y) {
   t = pkg.z (x)
   y = pkg.m (t)
}
<domain: "pkg", opset_import: ["" : 18]>
b (x) => (y) {
   y = Abs (x)
}
<domain: "pkg", opset_import: ["" : 18, "pkg" : 1]>
m (x) => (y) {
   y = pkg.z (x)
}
<domain: "pkg", opset_import: ["" : 18]>
z (x) => (y) {
   y = Neg (x)
}
)ONNX");
  auto g = build_or_fail(m);
  EXPECT_THAT(labels(g.bottom_up()), ElementsAre("pkg.b", "pkg.z", "pkg.m", "pkg.a"));
  EXPECT_TRUE(g.unreachable().empty());
  expect_callees_first(g);
  EXPECT_THAT(labels(g.callees(CallGraph::kMainGraph)), ElementsAre("pkg.a x1", "pkg.b x1"));
  EXPECT_THAT(labels(g.callees(g.find({"pkg", "a"}))), ElementsAre("pkg.m x1", "pkg.z x1"));
  EXPECT_THAT(labels(g.callers(*g.find({"pkg", "z"}))), ElementsAre("pkg.a x1", "pkg.m x1"));
}

TEST(CallGraph, Reachability) {
  auto m = testing::parse_or_fail(R"ONNX(
<ir_version: 8, opset_import: ["" : 18, "pkg" : 1]>
main (float[2] x) => (float[2] y) {
   y = pkg.r (x)
}
<domain: "pkg", opset_import: ["" : 18, "pkg" : 1]>
u (x) => (y) {
   t = pkg.r (x)
   y = pkg.u2 (t)
}
<domain: "pkg", opset_import: ["" : 18]>
u2 (x) => (y) {
   y = Abs (x)
}
<domain: "pkg", opset_import: ["" : 18]>
r (x) => (y) {
   y = Neg (x)
}
)ONNX");
  auto g = build_or_fail(m);
  EXPECT_EQ(g.size(), 3u);
  EXPECT_THAT(labels(g.bottom_up()), ElementsAre("pkg.r"));
  EXPECT_THAT(labels(g.unreachable()), ElementsAre("pkg.u", "pkg.u2"));
  EXPECT_EQ(g.call_sites(), 3u);  // calls made by unreachable functions count too
  EXPECT_THAT(labels(g.callers(*g.find({"pkg", "r"}))), ElementsAre("main x1", "pkg.u x1"));
  EXPECT_THAT(labels(g.callers(*g.find({"pkg", "u"}))), ElementsAre());
  EXPECT_THAT(labels(g.callees(g.find({"pkg", "u2"}))), ElementsAre());
  EXPECT_EQ(g.find({"pkg", "missing"}), nullptr);
  EXPECT_EQ(g.find({"", "Abs"}), nullptr);
}

// Calls inside If/Loop/Scan bodies, nested, count for the graph or function holding them.
constexpr const char* kNested = R"ONNX(
<ir_version: 8, opset_import: ["" : 18, "pkg" : 1]>
main (bool c, int64 n, float[2] x) => (float[2] y) {
   d = pkg.f (x)
   y = If (c) <then_branch: graph = then_body () => (float[2] t) {
      t = Loop (n, c, d) <body: graph = loop_body (int64 i, bool ci, float[2] v) => (bool co, float[2] w) {
         co = Identity (ci)
         a = pkg.f (v)
         b = pkg.f (a)
         w = If (ci) <then_branch: graph = inner_then () => (float[2] p) {
            p = pkg.g (b)
         }, else_branch: graph = inner_else () => (float[2] q) {
            q = Identity (b)
         }>
      }>
   }, else_branch: graph = else_body () => (float[2] e) {
      e = Scan (d) <num_scan_inputs: int = 1, body: graph = scan_body (float s) => (float r) {
         r = pkg.f (s)
      }>
   }>
}
<domain: "pkg", opset_import: ["" : 18, "pkg" : 1]>
g (c, x) => (y) {
   y = If (c) <then_branch: graph = gt () => (float[2] t) {
      t = If (c) <then_branch: graph = gtt () => (float[2] u) {
         u = pkg.f (x)
      }, else_branch: graph = gte () => (float[2] v) {
         v = pkg.f (x)
      }>
   }, else_branch: graph = ge () => (float[2] e) {
      e = pkg.f (x)
   }>
}
<domain: "pkg", opset_import: ["" : 18]>
f (x) => (y) {
   y = Abs (x)
}
<domain: "pkg", opset_import: ["" : 18, "pkg" : 1]>
unused (x) => (y) {
   y = pkg.g (x)
}
)ONNX";

TEST(CallGraph, CountsCallsInNestedSubgraphs) {
  auto m = testing::parse_or_fail(kNested);
  auto g = build_or_fail(m);
  EXPECT_THAT(labels(g.callees(CallGraph::kMainGraph)), ElementsAre("pkg.f x4", "pkg.g x1"));
  EXPECT_THAT(labels(g.callees(g.find({"pkg", "g"}))), ElementsAre("pkg.f x3"));
  EXPECT_THAT(labels(g.callers(*g.find({"pkg", "f"}))), ElementsAre("main x4", "pkg.g x3"));
  EXPECT_THAT(labels(g.callers(*g.find({"pkg", "g"}))), ElementsAre("main x1", "pkg.unused x1"));
  EXPECT_EQ(g.call_sites(), 9u);
  EXPECT_THAT(labels(g.bottom_up()), ElementsAre("pkg.f", "pkg.g"));
  EXPECT_THAT(labels(g.unreachable()), ElementsAre("pkg.unused"));
}

TEST(CallGraph, CountsCallsInGraphValuedAttributeDefaults) {
  auto m = testing::parse_or_fail(kNested);
  // pkg.f gets a graph attribute default whose body calls pkg.leaf.
  auto* f = m.mutable_functions(1);
  ASSERT_EQ(f->name(), "f");
  auto* leaf = m.add_functions();
  *leaf = *f;
  leaf->set_name("leaf");
  auto* a = f->add_attribute_proto();
  a->set_name("body");
  a->set_type(onnx::AttributeProto::GRAPH);
  *a->mutable_g()->add_node() = m.graph().node(0);
  a->mutable_g()->mutable_node(0)->set_op_type("leaf");
  auto g = build_or_fail(m);
  EXPECT_THAT(labels(g.callees(g.find({"pkg", "f"}))), ElementsAre("pkg.leaf x1"));
  EXPECT_THAT(labels(g.bottom_up()), ElementsAre("pkg.leaf", "pkg.f", "pkg.g"));
}

TEST(CallGraph, OverloadsAreDistinctFunctions) {
  auto m = testing::parse_or_fail(R"ONNX(
<ir_version: 10, opset_import: ["" : 18, "local" : 1]>
g (float[2] x) => (float[2] y) {
   t = local.f:abs (x)
   u = local.f:abs (t)
   y = local.f:neg (u)
}
<domain: "local", overload: "neg", opset_import: ["" : 18]>
f (x) => (y) {
   y = Neg (x)
}
<domain: "local", overload: "abs", opset_import: ["" : 18]>
f (x) => (y) {
   y = Abs (x)
}
)ONNX");
  auto g = build_or_fail(m);
  EXPECT_EQ(g.size(), 2u);
  EXPECT_EQ(g.find({"local", "f", "abs"}), &m.functions(1));
  EXPECT_EQ(g.find({"local", "f", "neg"}), &m.functions(0));
  EXPECT_EQ(g.find({"local", "f"}), nullptr);
  EXPECT_THAT(labels(g.callees(CallGraph::kMainGraph)), ElementsAre("local.f:abs x2", "local.f:neg x1"));
  // A call without the overload names neither.
  m.mutable_graph()->mutable_node(2)->clear_overload();
  EXPECT_THAT(labels(build_or_fail(m).callees(CallGraph::kMainGraph)), ElementsAre("local.f:abs x2"));
}

TEST(CallGraph, DomainsEmptyAndAiOnnxAreTheSame) {
  auto m = testing::parse_or_fail(R"ONNX(
<ir_version: 8, opset_import: ["" : 18, "local" : 1]>
g (float[2] x) => (float[2] y) {
   t = local.f (x)
   y = local.f (t)
}
<domain: "local", opset_import: ["" : 18]>
f (x) => (y) {
   y = Abs (x)
}
)ONNX");
  // A function defined in "" called as ai.onnx.f, and the other way round.
  m.mutable_functions(0)->set_domain("");
  m.mutable_graph()->mutable_node(0)->set_domain("ai.onnx");
  m.mutable_graph()->mutable_node(1)->set_domain("");
  auto g = build_or_fail(m);
  EXPECT_EQ(g.find({"ai.onnx", "f"}), &m.functions(0));
  EXPECT_THAT(labels(g.callees(CallGraph::kMainGraph)), ElementsAre("f x2"));
  m.mutable_functions(0)->set_domain("ai.onnx");
  EXPECT_THAT(labels(build_or_fail(m).callees(CallGraph::kMainGraph)), ElementsAre("f x2"));
}

TEST(CallGraph, TheFirstOfDuplicateDefinitionsIsTheFunction) {
  auto m = testing::parse_or_fail(R"ONNX(
<ir_version: 8, opset_import: ["" : 18, "local" : 1]>
g (float[2] x) => (float[2] y) {
   y = local.f (x)
}
<domain: "local", opset_import: ["" : 18, "local" : 1]>
f (x) => (y) {
   y = local.h (x)
}
<domain: "local", opset_import: ["" : 18, "local" : 1]>
f (x) => (y) {
   y = local.f (x)
}
<domain: "local", opset_import: ["" : 18]>
h (x) => (y) {
   y = Abs (x)
}
)ONNX");
  auto g = build_or_fail(m);  // the second f would be recursive
  EXPECT_EQ(g.size(), 2u);
  EXPECT_EQ(g.find({"local", "f"}), &m.functions(0));
  EXPECT_THAT(labels(g.bottom_up()), ElementsAre("local.h", "local.f"));
  EXPECT_EQ(g.call_sites(), 2u);
}

// ---- print --------------------------------------------------------------------------

TEST(CallGraph, Print) {
  auto m = testing::parse_or_fail(kNested);
  EXPECT_EQ(build_or_fail(m).print(),
            "call graph: 3 functions, 2 reachable, 9 call sites\n"
            "  graph 'main' -> pkg.f (x4), pkg.g (x1)\n"
            "  pkg.f -> (none)\n"
            "  pkg.g -> pkg.f (x3)\n"
            "  pkg.unused -> pkg.g (x1)\n"
            "  unreachable: pkg.unused\n");

  auto one = testing::parse_or_fail(R"ONNX(
<ir_version: 8, opset_import: ["" : 18, "local" : 1]>
g (float[2] x) => (float[2] y) {
   y = local.f:abs (x)
}
<domain: "local", overload: "abs", opset_import: ["" : 18]>
f (x) => (y) {
   y = Abs (x)
}
)ONNX");
  EXPECT_EQ(build_or_fail(one).print(),
            "call graph: 1 function, 1 reachable, 1 call site\n"
            "  graph 'g' -> local.f:abs (x1)\n"
            "  local.f:abs -> (none)\n");

  one.clear_functions();
  EXPECT_EQ(build_or_fail(one).print(),
            "call graph: 0 functions, 0 reachable, 0 call sites\n"
            "  graph 'g' -> (none)\n");
}

// ---- real models --------------------------------------------------------------------

// Properties every call graph has, checked on real models.
void expect_consistent(const onnx::ModelProto& model, const CallGraph& g) {
  std::set<FunctionId> ids;
  for (const auto& f : model.functions()) ids.insert(FunctionId::of(f));
  EXPECT_EQ(g.size(), ids.size());
  auto listed = g.bottom_up();
  auto lost = g.unreachable();
  EXPECT_EQ(listed.size() + lost.size(), g.size());
  for (const auto* f : lost) EXPECT_EQ(std::count(listed.begin(), listed.end(), f), 0) << label(f);
  for (const auto& id : ids) EXPECT_NE(g.find(id), nullptr) << id.str();
  expect_callees_first(g);
  std::size_t sites = 0;
  for (const auto& c : g.callees(CallGraph::kMainGraph)) sites += c.sites;
  for (const auto& id : ids)
    for (const auto& c : g.callees(g.find(id))) sites += c.sites;
  EXPECT_EQ(sites, g.call_sites());
}

TEST(CallGraphCorpus, EveryModelWithFunctions) {
  const auto files = testing::files_under(testing::corpus_dir(), ".onnx");
  ASSERT_GE(files.size(), 40u);
  std::size_t with_functions = 0;
  for (const auto& path : files) {
    SCOPED_TRACE(path.string());
    auto model = load_model(path);
    ASSERT_TRUE(model.ok()) << model.error().str();
    if (model->functions_size() == 0) continue;
    ++with_functions;
    auto g = build_or_fail(*model);
    expect_consistent(*model, g);
    EXPECT_EQ(g.print(), build_or_fail(*model).print());
  }
  EXPECT_EQ(with_functions, 29u);
}

TEST(CallGraphCorpus, TorchDynamoConvMaxpool) {
  auto model = load_model(testing::corpus_dir() / "torch-dynamo" / "dort_debug_7951_conv_maxpool.onnx");
  ASSERT_TRUE(model.ok()) << model.error().str();
  ASSERT_EQ(model->functions_size(), 8);
  auto g = build_or_fail(*model);
  const std::string lib = "pkg.onnxscript.torch_lib.";
  // IsScalar is defined but nothing calls it. Rank comes after the leaves in the smaller
  // domain ("pkg.onnxscript.torch_lib" < "pkg.onnxscript.torch_lib.common"), before its callers.
  EXPECT_THAT(labels(g.bottom_up()),
              ElementsAre(lib + "aten_addmm", lib + "aten_relu", lib + "aten_view", lib + "common.Rank",
                          lib + "_aten_convolution_onnx", lib + "_aten_max_pool_with_indices_onnx", lib + "aten_t"));
  EXPECT_THAT(labels(g.unreachable()), ElementsAre(lib + "common.IsScalar"));
  EXPECT_THAT(labels(g.callers(*g.find({lib + "common", "Rank"}))),
              ElementsAre(lib + "_aten_convolution_onnx x2", lib + "_aten_max_pool_with_indices_onnx x1",
                          lib + "aten_t x1"));
  expect_consistent(*model, g);
  EXPECT_EQ(g.print(),
            "call graph: 8 functions, 7 reachable, 19 call sites\n"
            "  graph 'main_graph' -> " + lib + "_aten_convolution_onnx (x1), " + lib +
                "_aten_max_pool_with_indices_onnx (x1), " + lib + "aten_addmm (x3), " + lib + "aten_relu (x3), " + lib +
                "aten_t (x6), " + lib + "aten_view (x1)\n"
            "  " + lib + "_aten_convolution_onnx -> " + lib + "common.Rank (x2)\n"
            "  " + lib + "_aten_max_pool_with_indices_onnx -> " + lib + "common.Rank (x1)\n"
            "  " + lib + "aten_addmm -> (none)\n"
            "  " + lib + "aten_relu -> (none)\n"
            "  " + lib + "aten_t -> " + lib + "common.Rank (x1)\n"
            "  " + lib + "aten_view -> (none)\n"
            "  " + lib + "common.IsScalar -> (none)\n"
            "  " + lib + "common.Rank -> (none)\n"
            "  unreachable: " + lib + "common.IsScalar\n");
}

// torchlib's whole function library (2024-03) in one model whose main graph calls each
// function once: no recursion; its functions call only Rank and IsScalar.
TEST(CallGraphCorpus, TorchlibLibrary) {
  const auto files = testing::files_under(testing::corpus_dir() / "torchlib-2024-03" / "functions", ".onnxtxt");
  ASSERT_EQ(files.size(), 332u);
  onnx::ModelProto model;
  model.mutable_graph()->set_name("all");
  for (const auto& path : files) {
    std::ifstream in(path);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto f = parse_function_text(text, path.string());
    ASSERT_TRUE(f.ok()) << f.error().str();
    auto* call = model.mutable_graph()->add_node();
    call->set_domain(f->domain());
    call->set_op_type(f->name());
    call->set_overload(f->overload());
    *model.add_functions() = std::move(*f);
  }
  auto g = build_or_fail(model);
  expect_consistent(model, g);
  EXPECT_EQ(g.bottom_up().size(), 332u);
  EXPECT_TRUE(g.unreachable().empty());
  EXPECT_EQ(g.call_sites(), 332u + 63u);
  const std::string common = "pkg.onnxscript.torch_lib.common";
  EXPECT_EQ(g.callers(*g.find({common, "Rank"})).size(), 1u + 22u);
  EXPECT_EQ(g.callers(*g.find({common, "IsScalar"})).size(), 1u + 31u);
  for (const auto* f : g.bottom_up())
    for (const auto& c : g.callees(f)) EXPECT_EQ(FunctionId::of(*c.function).domain, common) << label(f);
}

TEST(CallGraphCorpus, TransformerL16) {
  auto model = load_model(testing::corpus_dir() / "torchlib-2024-03" / "models" / "transformer_L16.onnx");
  ASSERT_TRUE(model.ok()) << model.error().str();
  auto g = build_or_fail(*model);
  EXPECT_EQ(g.print().substr(0, g.print().find('\n')), "call graph: 19 functions, 19 reachable, 829 call sites");
}

}  // namespace
}  // namespace shapeprop
