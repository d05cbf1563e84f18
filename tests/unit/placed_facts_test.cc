// Facts by place (src/transform/fold_body.h, PlacedFacts): what folding records of the
// nodes and initializers it emits reaches the mutable body the rewrites work on, output by
// output, also where folding renamed a definition (a taken branch's) or made an initializer.
// And fold_changes_nothing, which tells by the analysis's value ids that a body is idle,
// and fold_gives_back, on which a round copies its graph instead of folding it; and
// fold_body taking the nodes it would copy as they are (take_from) instead of copying them.
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


// fold_body with take_from, on a copy of `nodes`: the result, the facts the mutable body
// gets and the counters are those of folding without it; each node taken is left empty in
// the copy, the others as they were. Returns how many were taken, and whether fold_body
// said it took every node as it was.
struct Taking {
  int taken = 0;
  bool untouched = false;
};
Taking take_and_compare(Analysed& a, const BodyTarget& with_calls) {
  onnx::ModelProto& m = a.model;
  const ir::ValueNames keep = interface_names(m.graph());
  auto fold = [&](NodeList* take_from, bool* untouched, onnx::GraphProto& out, Counters& counters,
                  PlacedFacts& placed) {
    BodyTarget target = with_calls;
    target.main_graph = &out;
    return fold_body(m.graph().node(), a.facts(), target, keep, counters, &placed, take_from, untouched);
  };
  onnx::GraphProto out_copied = m.graph(), out_taken = m.graph();
  out_copied.clear_node();
  out_taken.clear_node();
  Counters counted_copied, counted_taken;
  PlacedFacts placed_copied(&a.facts(), static_cast<size_t>(out_copied.initializer_size()));
  PlacedFacts placed_taken(&a.facts(), static_cast<size_t>(out_taken.initializer_size()));
  NodeList copied = fold(nullptr, nullptr, out_copied, counted_copied, placed_copied);
  // The analysis views the names of m's nodes: the nodes taken from must be those very
  // nodes, so the model's own list is taken from (and compared with a copy kept here).
  const NodeList before = m.graph().node();
  Taking result;
  NodeList taken = fold(m.mutable_graph()->mutable_node(), &result.untouched, out_taken, counted_taken, placed_taken);
  EXPECT_EQ(taken.size(), copied.size());
  for (int i = 0; i < std::min(taken.size(), copied.size()); ++i)
    EXPECT_EQ(taken.Get(i).SerializeAsString(), copied.Get(i).SerializeAsString()) << "node " << i;
  EXPECT_EQ(out_taken.SerializeAsString(), out_copied.SerializeAsString());
  EXPECT_EQ(counted_taken, counted_copied);
  {
    ir::MutableBody from_taken(taken, placed_taken.source(), &out_taken, keep);
    ir::MutableBody from_copied(copied, placed_copied.source(), &out_copied, keep);
    EXPECT_EQ(facts_of(from_taken), facts_of(from_copied));
  }
  EXPECT_EQ(m.graph().node_size(), before.size());
  for (int i = 0; i < std::min(m.graph().node_size(), before.size()); ++i) {
    if (m.graph().node(i).ByteSizeLong() == 0) {
      ++result.taken;
    } else {
      EXPECT_EQ(m.graph().node(i).SerializeAsString(), before.Get(i).SerializeAsString()) << "node " << i;
    }
  }
  return result;
}

TEST(FoldTakingNodes, TheSameResultAndFactsWithTheCopiesLeftEmpty) {
  // Size, the Constant and Equal fold to constants (N unknown, Shape does not); Shape, Exp
  // and Relu are taken, and so is the Identity of the graph's input to its output (it
  // stays for the mutable body).
  Analysed folds(R"(
<ir_version: 10, opset_import: ["" : 18]>
g (float[N,3] x) => (float[N,3] y, bool c, float[N,3] z) {
  s0 = Shape (x)
  r = Size (s0)
  two = Constant <value = int64 {2}> ()
  c = Equal (r, two)
  u = Exp (x)
  y = Relu (u)
  z = Identity (x)
}
)");
  ASSERT_TRUE(folds.ok());
  const Taking t = take_and_compare(folds, BodyTarget());
  EXPECT_EQ(t.taken, 4);
  EXPECT_FALSE(t.untouched);  // constants replaced three nodes

  Analysed idle(R"(
<ir_version: 10, opset_import: ["" : 18]>
g (float[N,3] x) => (float[N,3] y) { u = Exp (x)  y = Relu (u) }
)");
  ASSERT_TRUE(idle.ok());
  const Taking all = take_and_compare(idle, BodyTarget());
  EXPECT_EQ(all.taken, 2);
  EXPECT_TRUE(all.untouched);
}

// A call to local.f, with an attribute (`<k: int = 2>`) or without.
std::string call_model(std::string_view attribute) {
  return R"(<ir_version: 10, opset_import: ["" : 18, "local" : 1]>
g (float[N,3] x) => (float[N,3] y) { t = local.f )" +
         std::string(attribute) + R"( (x)  y = Neg (t) }
<domain: "local", opset_import: ["" : 18]>
f <k> (a) => (b) { b = Abs (a) })";
}

TEST(FoldTakingNodes, CallsAreTakenAndRetargeted) {
  BodyTarget renamed;
  renamed.callee_name = [](const infer::CallContext*) { return std::string("f__0"); };
  renamed.callee_overload = [](const infer::CallContext*) { return std::string("o"); };
  BodyTarget same;
  same.callee_name = [](const infer::CallContext*) { return std::string("f"); };
  // Retargeted to a specialization: taken, the callee and overload set and the call's
  // attributes gone (the specialization holds their values), as a copy would be.
  Analysed a(call_model("<k: int = 2>"));
  ASSERT_TRUE(a.ok());
  const Taking r = take_and_compare(a, renamed);
  EXPECT_EQ(r.taken, 2);
  EXPECT_FALSE(r.untouched);
  // The same name kept: the call's attributes still go, so the node is not as it was.
  Analysed b(call_model("<k: int = 2>"));
  ASSERT_TRUE(b.ok());
  EXPECT_FALSE(take_and_compare(b, same).untouched);
  // Without attributes and with the same name, the call is taken as it was.
  Analysed c(call_model(""));
  ASSERT_TRUE(c.ok());
  const Taking kept = take_and_compare(c, same);
  EXPECT_EQ(kept.taken, 2);
  EXPECT_TRUE(kept.untouched);
}

}  // namespace
}  // namespace shapeprop::transform
