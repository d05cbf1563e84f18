// The name sets the rewrites make fresh names with (src/ir/names.h): the two rules for a
// fresh name (ours, and ONNX's inliner's with one counter), copies that outlive the
// string they were made from, the counts of names subgraphs define and read, and scoped
// renaming with shadowing.
#include "ir/names.h"

#include <gtest/gtest.h>

#include "test_util.h"

namespace shapeprop::ir {
namespace {

TEST(NameSetTest, FreshTakesTheBaseThenTheFirstFreeSuffix) {
  NameSet names;
  names.insert("x");
  names.insert("x_1");
  EXPECT_EQ(names.fresh("y"), "y");
  EXPECT_EQ(names.fresh("x"), "x_2");
  EXPECT_EQ(names.fresh("x"), "x_3");
  EXPECT_EQ(names.fresh("y"), "y_1");
  EXPECT_TRUE(names.contains("x_3"));
  EXPECT_FALSE(names.contains("x_4"));
}

TEST(NameSetTest, OnnxInlinerRuleSharesOneCounter) {
  // onnx/inliner: while the name is taken, suggestion_K with K from one counter.
  NameSet names;
  unsigned counter = 0;
  names.insert("a");
  names.insert("b");
  EXPECT_EQ(names.fresh("c", counter), "c");
  EXPECT_EQ(counter, 0u);
  EXPECT_EQ(names.fresh("a", counter), "a_0");
  EXPECT_EQ(names.fresh("b", counter), "b_1");
  EXPECT_EQ(names.fresh("a", counter), "a_2");
}

TEST(NameSetTest, InsertKeepsACopyThatOutlivesTheString) {
  NameSet names;
  {
    std::string name = "a_rather_long_value_name_that_is_not_inline";
    EXPECT_TRUE(names.insert(name));
    EXPECT_FALSE(names.insert(name));
    name.assign(name.size(), 'z');  // the caller's string changes; the set's copy does not
  }
  std::string other(200, 'q');  // reuses freed memory, were the set to view it
  EXPECT_TRUE(names.contains("a_rather_long_value_name_that_is_not_inline"));
  EXPECT_FALSE(names.contains(std::string(43, 'z')));
  // Many names: the copies spill over several blocks and stay put.
  for (int i = 0; i < 5000; ++i) names.insert("value_" + std::to_string(i) + std::string(20, 'p'));
  EXPECT_TRUE(names.contains("value_0" + std::string(20, 'p')));
  EXPECT_TRUE(names.contains("value_4999" + std::string(20, 'p')));
  EXPECT_TRUE(names.contains("a_rather_long_value_name_that_is_not_inline"));
}

TEST(NameSetTest, EmptyNameIsANameLikeAnyOther) {
  NameSet names;
  EXPECT_FALSE(names.contains(""));
  EXPECT_TRUE(names.insert(""));
  EXPECT_TRUE(names.contains(""));
  EXPECT_EQ(names.fresh(""), "_1");
}

constexpr std::string_view kNested = R"(
<ir_version: 10, opset_import: ["" : 18]>
g (bool c, float[2] x) => (float[2] y) {
  t = Neg (x)
  y = If (c) <then_branch = g1 () => (float[2] a) {
      a = Abs (t)
    }, else_branch = g2 () => (float[2] a) {
      b = Relu (x)
      a = If (c) <then_branch = g3 () => (float[2] d) { d = Neg (b) },
                  else_branch = g4 () => (float[2] d) { d = Abs (t) }>
    }>
}
)";

TEST(NameSetTest, InsertAllReachesEveryDepth) {
  const onnx::ModelProto m = testing::parse_or_fail(kNested);
  NameSet names;
  names.insert_all(m.graph().node(), NameSet::Keep::Views);
  for (const char* n : {"x", "t", "c", "y", "a", "b", "d"}) EXPECT_TRUE(names.contains(n)) << n;
  EXPECT_FALSE(names.contains("g1"));  // a graph's name is not a value's
  NameSet copies;
  copies.insert_all(m.graph(), NameSet::Keep::Copies);
  for (const char* n : {"x", "t", "c", "y", "a", "b", "d"}) EXPECT_TRUE(copies.contains(n)) << n;
}

TEST(NameCountsTest, SubgraphDefinitionsAndReads) {
  const onnx::ModelProto m = testing::parse_or_fail(kNested);
  NameCounts defined;
  defined.add_subgraph_definitions(m.graph().node());
  EXPECT_EQ(defined.count("a"), 2u);  // once in each branch
  EXPECT_EQ(defined.count("d"), 2u);  // at depth two
  EXPECT_EQ(defined.count("b"), 1u);
  EXPECT_EQ(defined.count("t"), 0u);  // defined at the top, not in a subgraph
  EXPECT_EQ(defined.count("y"), 0u);

  NameCounts reads;
  reads.add_reads(m.graph().node());
  EXPECT_EQ(reads.count("t"), 2u);  // by g1 and g4
  EXPECT_EQ(reads.count("x"), 2u);  // by Neg and g2's Relu
  EXPECT_EQ(reads.count("c"), 2u);
  EXPECT_EQ(reads.count("a"), 2u);  // as the branches' outputs
  EXPECT_TRUE(reads.contains("b"));
  EXPECT_FALSE(reads.contains("y"));
}

TEST(ScopedRenamingTest, InnerScopesShadowAndPopRestores) {
  ScopedRenaming r;
  r.bind("x", "x__1");
  EXPECT_EQ(*r.find("x"), "x__1");
  EXPECT_EQ(r.find("y"), nullptr);
  r.push();
  EXPECT_EQ(r.bound_here("x"), nullptr);  // bound in the outer scope only
  EXPECT_EQ(*r.find("x"), "x__1");
  r.bind("x", "x__2");
  EXPECT_EQ(*r.find("x"), "x__2");
  r.bind("x", "x__3");  // a second binding in one scope replaces the first
  EXPECT_EQ(*r.bound_here("x"), "x__3");
  r.pop();
  EXPECT_EQ(*r.find("x"), "x__1");
  std::string from = "a_name_long_enough_to_be_on_the_heap";
  r.bind(from, "b");
  from.assign(from.size(), '#');
  EXPECT_EQ(*r.find("a_name_long_enough_to_be_on_the_heap"), "b");
}

// A scope keeps its first bindings in a list and indexes them once it outgrows it: the
// bindings made before and after that, and rebindings on either side, all hold.
TEST(ScopedRenamingTest, ManyBindingsInOneScopeStayFoundAcrossTheIndex) {
  ScopedRenaming r;
  r.bind("outer", "outer__1");
  r.push();
  r.reserve(4);  // fewer than it gets
  for (int i = 0; i < 40; ++i) {
    std::string from = "value_with_a_long_name_" + std::to_string(i);
    r.bind(from, "v" + std::to_string(i));
    from.assign(from.size(), '#');  // the scope keeps its own copy of the name
    if (i == 5 || i == 30) r.bind("value_with_a_long_name_3", "again" + std::to_string(i));
  }
  for (int i = 0; i < 40; ++i) {
    const std::string* to = r.bound_here("value_with_a_long_name_" + std::to_string(i));
    ASSERT_NE(to, nullptr) << i;
    EXPECT_EQ(*to, i == 3 ? "again30" : "v" + std::to_string(i));
  }
  EXPECT_EQ(r.bound_here("value_with_a_long_name_40"), nullptr);
  EXPECT_EQ(r.bound_here("outer"), nullptr);
  EXPECT_EQ(*r.find("outer"), "outer__1");
  r.bind("outer", "shadow");
  EXPECT_EQ(*r.find("outer"), "shadow");
  r.pop();
  EXPECT_EQ(*r.find("outer"), "outer__1");
  EXPECT_EQ(r.find("value_with_a_long_name_0"), nullptr);
}

}  // namespace
}  // namespace shapeprop::ir
