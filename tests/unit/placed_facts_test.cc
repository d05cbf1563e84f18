// Facts by place (src/transform/fold_body.h, PlacedFacts): what folding records of the
// nodes and initializers it emits reaches the mutable body the rewrites work on, output by
// output, also where folding renamed a definition (a taken branch's) or made an initializer.
// And fold_changes_nothing, which tells by the analysis's value ids that a body is idle,
// and fold_gives_back, on which a round copies its graph instead of folding it.
#include <gtest/gtest.h>

#include <optional>

#include "infer/analyzer.h"
#include "ir/mutable_body.h"
#include "shapeprop/call_graph.h"
#include "test_util.h"
#include "transform/fold_body.h"
#include "transform/function_dce.h"

namespace shapeprop::transform {
namespace {

// A model parsed from text and analysed: its main graph's facts.
class Analysed {
 public:
  explicit Analysed(std::string_view text) : model(testing::parse_or_fail(text)), calls_(CallGraph::build(model)) {
    EXPECT_TRUE(calls_) << text;
    if (!calls_) return;
    analysis_.emplace(model, *calls_, InferOptions{});
    analysis_->run();
  }
  // The main graph's; the test has failed already when there is no analysis.
  const infer::BodyFacts& facts() const { return analysis_->graph().facts; }
  bool ok() const { return analysis_.has_value(); }

  onnx::ModelProto model;

 private:
  Result<CallGraph> calls_;
  std::optional<infer::Analyzer> analysis_;
};

// The fact the mutable body holds for each named top-level value, as "name: fact".
std::vector<std::string> facts_of(const ir::MutableBody& body) {
  std::vector<std::string> out;
  for (auto id = body.first(); id != ir::MutableBody::kNone; id = body.next(id))
    for (size_t k = 0; k < body.num_outputs(id); ++k) {
      const ir::ValueId v = body.output(id, k);
      if (v == ir::kNoValue) continue;
      const Fact* f = body.fact(v);
      out.push_back(std::string(body.name(v)) + ": " + (f ? f->str() : "?"));
    }
  return out;
}

constexpr std::string_view kModel = R"(
<ir_version: 10, opset_import: ["" : 18]>
g (float[N,3] x) => (float[N,3] y, int64[2] s) {
  s0 = Shape (x)
  r = Size (s0)
  two = Constant <value = int64 {2}> ()
  c = Equal (r, two)
  t = If (c) <
    then_branch = b1 () => (float[N,3] t1) { u = Neg (x)  t1 = Abs (u) },
    else_branch = b2 () => (float[N,3] t2) { t2 = Identity (x) }>
  u = Exp (t)
  y = Relu (u)
  s = Identity (s0)
}
)";

TEST(PlacedFacts, FoldedNodesAndInitializersReachTheMutableBody) {
  Analysed a(kModel);
  ASSERT_TRUE(a.ok());
  const onnx::ModelProto& m = a.model;
  const infer::BodyFacts& facts = a.facts();

  onnx::GraphProto out;  // where folded constants go
  *out.mutable_initializer() = m.graph().initializer();
  BodyTarget target;
  target.main_graph = &out;
  const ir::ValueNames keep{"x", "y", "s"};
  Counters counters;
  PlacedFacts placed(&facts, static_cast<size_t>(out.initializer_size()));
  NodeList nodes = fold_body(m.graph().node(), facts, target, keep, counters, &placed);

  ir::MutableBody body(nodes, placed.source(), &out, keep);
  // The taken branch's u is renamed apart from the graph's u; each keeps its own fact.
  EXPECT_EQ(facts_of(body), (std::vector<std::string>{"s0: int64[2] {N,3}", "u_1: float[N,3]", "t1: float[N,3]",
                                                      "t: float[N,3]", "u: float[N,3]", "y: float[N,3]",
                                                      "s: int64[2] {N,3}"}));
  // Size, Constant and Equal folded to initializers, which keep their facts.
  ASSERT_EQ(body.initializers().size(), 3u);
  std::vector<std::string> initializers;
  for (ir::ValueId v : body.initializers()) {
    const Fact* f = body.fact(v);
    initializers.push_back(std::string(body.name(v)) + ": " + (f ? f->str() : "?"));
  }
  EXPECT_EQ(initializers, (std::vector<std::string>{"r: int64 {2}", "two: int64 {2}", "c: bool {1}"}));
  // x, an input: the analysis's, by name.
  const ir::MutableBody::NodeId first = body.first();
  ASSERT_NE(body.input(first, 0), ir::kNoValue);
  ASSERT_NE(body.fact(body.input(first, 0)), nullptr);
  EXPECT_EQ(body.fact(body.input(first, 0))->str(), "float[N,3]");
}

TEST(PlacedFacts, TheAnalysedNodesThemselvesKeepTheirInitializersFacts) {
  Analysed a(R"(
<ir_version: 10, opset_import: ["" : 18]>
g (float[N,3] x) => (float[N,3] y) <int64[2] shape = {-1, 3}> {
  y = Reshape (x, shape)
}
)");
  ASSERT_TRUE(a.ok());
  const PlacedFacts placed = PlacedFacts::of_analysed(a.facts());
  // The analysis reads the model; the body is rewritten only once the facts are taken.
  onnx::GraphProto& g = *a.model.mutable_graph();
  ir::MutableBody body(*g.mutable_node(), placed.source(), &g, {"x", "y"});
  ASSERT_EQ(body.initializers().size(), 1u);
  ASSERT_NE(body.fact(body.initializers()[0]), nullptr);
  EXPECT_EQ(body.fact(body.initializers()[0])->str(), "int64[2] {-1,3}");
  EXPECT_EQ(facts_of(body), (std::vector<std::string>{"y: float[N,3]"}));
}

// fold_changes_nothing on the main graph `graph` (of opset 18), analysed.
bool idle(const std::string& graph) {
  Analysed a("<ir_version: 10, opset_import: [\"\" : 18]>\n" + graph);
  if (!a.ok()) return false;
  BodyTarget target;
  target.main_graph = a.model.mutable_graph();
  return fold_changes_nothing(a.model.graph().node(), a.facts(), target);
}

TEST(FoldChangesNothing, OnlyWhenEveryNodeIsLiveAndNothingFolds) {
  struct Case {
    const char* graph;
    bool idle;
  };
  const Case cases[] = {
      {"g (float[N,3] x) => (float[N,3] y, float[N,3] z) { a = Neg (x)  y = Abs (a)  z = Exp (a) }", true},
      // b is read by nothing.
      {"g (float[N,3] x) => (float[N,3] y) { a = Neg (x)  b = Sin (a)  y = Abs (a) }", false},
      // a is read only by c, which nothing reads.
      {"g (float[N,3] x) => (float[N,3] y) { a = Neg (x)  c = Sin (a)  y = Abs (x) }", false},
      // s folds to a constant.
      {"g (float[N,3] x) => (int64 y) { s = Shape (x)  y = Size (s) }", false},
      // w is read by nothing; v by y.
      {"g (float[N,3] x) => (float[N,3] y) <float[3] w = {1,2,3}, float[3] v = {1,2,3}> { y = Add (x, v) }", false},
      {"g (float[N,3] x) => (float[N,3] y) <float[3] v = {1,2,3}> { y = Add (x, v) }", true},
  };
  for (const Case& c : cases) EXPECT_EQ(idle(c.graph), c.idle) << c.graph;
}

// Where fold_gives_back says so, folding gives the nodes back as they are, and the facts by
// place it records are those the analysis has of them (which a round then reads instead,
// PlacedFacts::of_analysed): an Identity and a dead node are given back (the mutable body
// removes them later); a node that folds, a decided If and a call are not.
TEST(FoldGivesBack, OnlyWhereFoldingCopiesEveryNodeWithTheAnalysisFacts) {
  struct Case {
    const char* model;
    bool gives_back;
  };
  const Case cases[] = {
      {R"(<ir_version: 10, opset_import: ["" : 18]>
g (float[N,3] x) => (float[N,3] y, float[N,3] z) <float[3] v = {1,2,3}> {
  a = Neg (x)  b = Sin (a)  i = Identity (a)  y = Add (i, v)  z = Exp (a)
})",
       true},
      {R"(<ir_version: 10, opset_import: ["" : 18]>
g (float[N,3] x) => (int64 y) { s = Shape (x)  y = Size (s) })",
       false},
      {kModel.data(), false},
      {R"(<ir_version: 10, opset_import: ["" : 18, "local" : 1]>
g (float[N,3] x) => (float[N,3] y) { y = local.f (x) }
<domain: "local", opset_import: ["" : 18]>
f (a) => (b) { b = Neg (a) })",
       false},
  };
  for (const Case& c : cases) {
    Analysed a(c.model);
    ASSERT_TRUE(a.ok()) << c.model;
    onnx::GraphProto out;
    *out.mutable_initializer() = a.model.graph().initializer();
    BodyTarget target;
    target.main_graph = &out;
    const size_t initializers = static_cast<size_t>(out.initializer_size());
    const bool gives_back = fold_gives_back(a.model.graph().node(), a.facts(), target);
    EXPECT_EQ(gives_back, c.gives_back) << c.model;
    if (!gives_back) continue;
    const ir::ValueNames keep = interface_names(a.model.graph());
    Counters counters;
    PlacedFacts recorded(&a.facts(), initializers);
    NodeList folded = fold_body(a.model.graph().node(), a.facts(), target, keep, counters, &recorded);
    ASSERT_EQ(folded.size(), a.model.graph().node_size()) << c.model;
    for (int i = 0; i < folded.size(); ++i)
      EXPECT_EQ(folded.Get(i).SerializeAsString(), a.model.graph().node(i).SerializeAsString()) << c.model << " node " << i;
    EXPECT_EQ(out.initializer_size(), static_cast<int>(initializers));
    NodeList copied = a.model.graph().node();
    onnx::GraphProto out_copy = out;
    const PlacedFacts by_place = PlacedFacts::of_analysed(a.facts());
    ir::MutableBody from_fold(folded, recorded.source(), &out, keep);
    ir::MutableBody from_copy(copied, by_place.source(), &out_copy, keep);
    EXPECT_EQ(facts_of(from_fold), facts_of(from_copy)) << c.model;
    EXPECT_FALSE(facts_of(from_copy).empty());
  }
}

}  // namespace
}  // namespace shapeprop::transform
