// The mutable IR's edits that the rewrite passes lean on (src/ir/mutable_body.h): dropping
// an unread optional output, omitted inputs at the end of a node going at commit, Identity
// chains collapsing and dead nodes going.
#include "ir/mutable_body.h"

#include <gtest/gtest.h>

#include "test_util.h"

namespace shapeprop::ir {
namespace {

struct Body {
  onnx::ModelProto model;
  std::unique_ptr<MutableBody> body;
  explicit Body(std::string_view text, ValueNames interface)
      : model(testing::parse_or_fail(text)) {
    body = std::make_unique<MutableBody>(*model.mutable_graph()->mutable_node(), MutableBody::FactSource{},
                                         model.mutable_graph(), interface);
  }
  MutableBody::NodeId node(size_t k) {
    auto id = body->first();
    for (size_t i = 0; i < k; ++i) id = body->next(id);
    return id;
  }
};

constexpr std::string_view kLayerNorm = R"(
<ir_version: 10, opset_import: ["" : 18]>
g (float[2,3] t, float[3] s) => (float[2,3] y, float[2,1] inv, float[2,1] q) {
  y, mean, inv = LayerNormalization <axis = -1> (t, s)
  y2, mean2, inv2 = LayerNormalization <axis = -1> (t, s)
  q = Neg (mean2)
}
)";

TEST(MutableBodyTest, DropOutputLeavesAnEmptyNameInTheMiddleAndTrimsTheEnd) {
  Body b(kLayerNorm, {"t", "s", "y", "inv", "q"});
  const auto first = b.node(0), second = b.node(1);
  EXPECT_FALSE(b.body->drop_output(first, 0));  // a body output
  EXPECT_FALSE(b.body->drop_output(first, 2));  // a body output
  EXPECT_FALSE(b.body->drop_output(second, 1)); // read by Neg
  EXPECT_FALSE(b.body->drop_output(first, 3));  // no such output
  EXPECT_FALSE(b.body->changed());
  EXPECT_TRUE(b.body->drop_output(first, 1));
  EXPECT_EQ(b.body->num_outputs(first), 3u);
  EXPECT_EQ(b.body->output(first, 1), kNoValue);
  EXPECT_TRUE(b.body->drop_output(second, 2));
  EXPECT_EQ(b.body->num_outputs(second), 2u);  // the trailing one is gone, not ""
  EXPECT_FALSE(b.body->drop_output(first, 1)); // dropped already
  EXPECT_TRUE(b.body->commit());
  const auto& nodes = b.model.graph().node();
  ASSERT_EQ(nodes.size(), 3);
  EXPECT_EQ(std::vector<std::string>(nodes[0].output().begin(), nodes[0].output().end()),
            (std::vector<std::string>{"y", "", "inv"}));
  EXPECT_EQ(std::vector<std::string>(nodes[1].output().begin(), nodes[1].output().end()),
            (std::vector<std::string>{"y2", "mean2"}));
}

// The ops a body may hold (what passes look at before walking it): those it was built
// with, those an edit brings (an inserted node, a node forwarded to an Identity), and
// those erased since; never one it has not had.
// Equal constants are one value: found by a hash of their ends first (tensor_sample_hash),
// then compared whole, with one candidate of those ends or several.
TEST(MutableBodyTest, AddConstantFindsTheEqualOneAmongThoseWithTheSameEnds) {
  Body b(kLayerNorm, {"t", "s", "y", "inv", "q"});
  const auto floats = [](size_t changed) {  // 100 floats: ends alike, the middle told apart
    onnx::TensorProto t;
    t.set_data_type(onnx::TensorProto::FLOAT);
    t.add_dims(100);
    for (size_t i = 0; i < 100; ++i) t.add_float_data(i == changed ? 1.0f : 0.0f);
    return t;
  };
  ASSERT_EQ(tensor_sample_hash(floats(50)), tensor_sample_hash(floats(49)));
  const ValueId zeros = b.body->add_constant(floats(100), "c");
  EXPECT_EQ(b.body->add_constant(floats(100), "c"), zeros);  // one candidate, equal
  const ValueId at50 = b.body->add_constant(floats(50), "c");  // one candidate, not equal
  EXPECT_NE(at50, zeros);
  EXPECT_EQ(b.body->add_constant(floats(50), "c"), at50);  // two candidates
  EXPECT_EQ(b.body->add_constant(floats(100), "c"), zeros);
  const ValueId at49 = b.body->add_constant(floats(49), "c");
  EXPECT_NE(at49, zeros);
  EXPECT_NE(at49, at50);
  EXPECT_EQ(b.body->add_constant(floats(49), "c"), at49);  // three candidates
  onnx::TensorProto doubled = floats(100);
  doubled.set_data_type(onnx::TensorProto::INT32);  // the same bytes, another type
  doubled.clear_float_data();
  for (int i = 0; i < 100; ++i) doubled.add_int32_data(0);
  EXPECT_NE(b.body->add_constant(doubled, "c"), zeros);
}

TEST(MutableBodyTest, MayHoldTheOpsItWasBuiltWithAndThoseEditsBring) {
  Body b(kLayerNorm, {"t", "s", "y", "inv", "q"});
  EXPECT_TRUE(b.body->may_hold("LayerNormalization"));
  EXPECT_TRUE(b.body->may_hold("Neg"));
  EXPECT_FALSE(b.body->may_hold("Relu"));
  EXPECT_FALSE(b.body->may_hold("Identity"));
  onnx::NodeProto relu;
  relu.set_op_type("Relu");
  const ValueId r = b.body->new_value("r");
  b.body->insert_before(b.node(2), relu, {b.body->output(b.node(0), 0)}, {r});
  EXPECT_TRUE(b.body->may_hold("Relu"));
  // q = Neg(mean2) forwarded to t: q keeps its name, so the node becomes an Identity.
  EXPECT_TRUE(b.body->forward(b.node(3), b.body->input(b.node(0), 0)));
  EXPECT_TRUE(b.body->may_hold("Identity"));
  EXPECT_TRUE(b.body->may_hold("Neg"));  // erased, still listed: may, not must
  EXPECT_FALSE(b.body->may_hold("Clip"));
}

TEST(MutableBodyTest, OmittedInputsAtTheEndGoAtCommit) {
  Body b(R"(
<ir_version: 10, opset_import: ["" : 18]>
g (float[5,2,2] x, float[1,9,2] w, float[1,9,3] r, float[1,2,3] h0) => (float[1,2,3] h) {
  y, h = GRU <hidden_size = 3> (x, w, r, , , h0)
}
)",
         {"x", "w", "r", "h0", "h"});
  b.body->set_input(b.node(0), 5, kNoValue);
  EXPECT_EQ(b.body->num_inputs(b.node(0)), 6u);  // the node keeps its places until commit
  EXPECT_TRUE(b.body->commit());
  const auto& in = b.model.graph().node(0).input();
  EXPECT_EQ(std::vector<std::string>(in.begin(), in.end()), (std::vector<std::string>{"x", "w", "r"}));
}

// The names of the nodes' outputs and inputs, one line per node, as committed.
std::vector<std::string> lines(const onnx::GraphProto& g) {
  std::vector<std::string> out;
  for (const auto& n : g.node()) {
    std::string line;
    for (const auto& o : n.output()) line += o + " ";
    line += "= " + n.op_type() + "(";
    for (int i = 0; i < n.input_size(); ++i) line += (i ? "," : "") + n.input(i);
    out.push_back(line + ")");
  }
  return out;
}

TEST(MutableBodyTest, UntouchedNodesKeepTheirOmittedInputsAtCommit) {
  Body b(R"(
<ir_version: 10, opset_import: ["" : 18]>
g (float[2] x, float lo) => (float[2] y, float[2] z) {
  t = Identity (x)
  y = Clip (t, lo, )
  z = Neg (t)
}
)",
         {"x", "lo", "y", "z"});
  b.body->collapse_identities();
  EXPECT_TRUE(b.body->commit());
  EXPECT_EQ(lines(b.model.graph()), (std::vector<std::string>{"y = Clip(x,lo,)", "z = Neg(x)"}));
}

TEST(MutableBodyTest, IdentitiesCollapseIntoReadersAndIntoTheProducerOfAKeptName) {
  Body b(R"(
<ir_version: 10, opset_import: ["" : 18]>
g (float[2] x) => (float[2] y, float[2] z, float[2] w, float[2] v) {
  a = Neg (x)
  b = Identity (a)
  c = Identity (b)
  y = Identity (c)
  p = Abs (x)
  z = Identity (p)
  w = Identity (p)
  v = Identity (x)
}
)",
         {"x", "y", "z", "w", "v"});
  b.body->collapse_identities();
  EXPECT_TRUE(b.body->commit());
  // y: the chain a -> b -> c collapses, and Neg, now a's only reader being y's identity,
  // writes y. z and w both read p: Abs writes z, the first, and w reads z. v reads an
  // input: it stays.
  EXPECT_EQ(lines(b.model.graph()),
            (std::vector<std::string>{"y = Neg(x)", "z = Abs(x)", "w = Identity(z)", "v = Identity(x)"}));
}

// An output's Identity of a value with other readers: the value's producer writes the
// output, unless a subgraph defines the output's name itself (ONNX's scoping lets a branch
// define z before the graph does), where a read of p renamed z would find the branch's z.
TEST(MutableBodyTest, AnOutputsNameTakenBySubgraphKeepsItsIdentity) {
  Body b(R"(
<ir_version: 10, opset_import: ["" : 18]>
g (float[2] x, bool c) => (float[2] z, float[2] r) {
  p = Abs (x)
  r = If (c) <then_branch = t () => (float[2] o) { z = Neg (x)
    o = Add (z, p) }, else_branch = e () => (float[2] o2) { o2 = Identity (p) }>
  z = Identity (p)
}
)",
         {"x", "c", "z", "r"});
  b.body->collapse_identities();
  b.body->commit();
  EXPECT_EQ(lines(b.model.graph()), (std::vector<std::string>{"p = Abs(x)", "r = If(c)", "z = Identity(p)"}));
  EXPECT_EQ(b.model.graph().node(1).attribute(0).g().node(1).input(1), "p");
}

// A subgraph defines k and the graph defines k after it (ONNX's scoping allows both): a
// constant k of the graph's may not be an initializer named k, which would be in scope in
// the branch. It takes a fresh name, read by k's readers; an output keeps its name through
// an Identity. Subgraph reads of names the subgraph defines are no uses of the graph's.
TEST(MutableBodyTest, AConstantNamedLikeASubgraphValueTakesAFreshName) {
  Body b(R"(
<ir_version: 10, opset_import: ["" : 18]>
g (float[2] x, bool c) => (float[2] y, float[2] m) {
  y1 = If (c) <then_branch = t () => (float[2] o) { k = Neg (x)  m = Abs (k)  o = Identity (m) },
               else_branch = e () => (float[2] o2) { o2 = Identity (x) }>
  k = Neg (y1)
  m = Abs (y1)
  y = Add (k, y1)
}
)",
         {"x", "c", "y", "m"});
  onnx::TensorProto value;
  value.set_data_type(onnx::TensorProto::FLOAT);
  value.add_dims(2);
  value.add_float_data(1);
  value.add_float_data(2);
  const auto k_node = b.node(1), m_node = b.node(2);
  EXPECT_EQ(b.body->uses(b.body->output(k_node, 0)), 1u);  // y's read; the branch's reads of its own k are none
  b.body->make_constant(k_node, value);
  b.body->make_constant(m_node, value);
  EXPECT_TRUE(b.body->commit());
  const auto& inits = b.model.graph().initializer();
  std::vector<std::string> names;
  for (const auto& t : inits) names.push_back(t.name());
  EXPECT_EQ(names, (std::vector<std::string>{"k_1"}));  // one for both: equal constants are shared
  EXPECT_EQ(lines(b.model.graph()),
            (std::vector<std::string>{"y1 = If(c)", "m = Identity(k_1)", "y = Add(k_1,y1)"}));
  // The branch is as written.
  const auto& branch = b.model.graph().node(0).attribute(0).g();
  EXPECT_EQ(lines(branch), (std::vector<std::string>{"k = Neg(x)", "m = Abs(k)", "o = Identity(m)"}));
}

TEST(MutableBodyTest, DeadNodesGoLastFirstAndKeptOnesStay) {
  Body b(R"(
<ir_version: 10, opset_import: ["" : 18]>
g (float[2] x) => (float[2] y) {
  a = Neg (x)
  b = Abs (a)
  c = Exp (b)
  y = Relu (x)
  d, e = Split <num_outputs = 2> (c)
}
)",
         {"x", "y"});
  b.body->remove_dead_nodes();
  EXPECT_TRUE(b.body->changed());
  EXPECT_TRUE(b.body->commit());
  EXPECT_EQ(lines(b.model.graph()), (std::vector<std::string>{"y = Relu(x)"}));
}

TEST(MutableBodyTest, UnreadInitializersGoByUseLists) {
  // dflt is also an input (an input's default: interface), kept_out a graph output;
  // in_branch is read in a branch only; the branch that defines `shadowed` reads its own;
  // dead_reader loses its reader when dead nodes go.
  Body b(R"(
<ir_version: 10, opset_import: ["" : 18]>
g (bool c, float[2] x, float[2] dflt) => (float[2] y, float[2] kept_out)
    <float[2] dflt = {1,2}, float[2] unread = {3,4}, float[2] in_branch = {5,6},
     float[2] shadowed = {7,8}, float[2] kept_out = {9,10}, float[2] dead_reader = {1,1}> {
  y = If (c) <then_branch = g1 () => (float[2] a) { a = Add (x, in_branch) },
              else_branch = g2 () => (float[2] a) { shadowed = Neg (x)
                                                   a = Abs (shadowed) }>
  z = Mul (x, dead_reader)
}
)",
         {"c", "x", "dflt", "y", "kept_out"});
  b.body->remove_dead_nodes();
  EXPECT_EQ(b.body->remove_unread_initializers(), 3u);
  std::vector<std::string> names;
  for (const auto& t : b.model.graph().initializer()) names.push_back(t.name());
  EXPECT_EQ(names, (std::vector<std::string>{"dflt", "in_branch", "kept_out"}));
  EXPECT_EQ(b.model.graph().initializer(1).float_data(0), 5.0f);  // the tensors stay whole
  EXPECT_TRUE(b.body->commit());
  EXPECT_EQ(b.model.graph().node_size(), 1);
}

}  // namespace
}  // namespace shapeprop::ir

// same_tensor_value compares what tensor_value_key holds without building it: equal
// exactly where the keys are, whatever field holds the data and however long it is.
TEST(MutableBodyTest, SameTensorValueAgreesWithTheKeys) {
  std::vector<onnx::TensorProto> ts;
  auto add = [&ts](int32_t type, std::vector<int64_t> dims, auto fill) {
    onnx::TensorProto t;
    t.set_data_type(type);
    for (int64_t d : dims) t.add_dims(d);
    fill(t);
    ts.push_back(t);
  };
  using onnx::TensorProto;
  add(TensorProto::FLOAT, {2}, [](TensorProto& t) { t.add_float_data(1); t.add_float_data(2); });
  add(TensorProto::FLOAT, {2}, [](TensorProto& t) { t.add_float_data(1); t.add_float_data(3); });
  add(TensorProto::FLOAT, {1, 2}, [](TensorProto& t) { t.add_float_data(1); t.add_float_data(2); });
  add(TensorProto::FLOAT, {2}, [](TensorProto& t) { float v[2] = {1, 2}; t.set_raw_data(std::string(reinterpret_cast<char*>(v), 8)); });
  add(TensorProto::INT32, {2}, [](TensorProto& t) { t.add_int32_data(1); t.add_int32_data(2); });
  add(TensorProto::INT64, {}, [](TensorProto& t) { t.add_int64_data(7); });
  add(TensorProto::INT64, {}, [](TensorProto& t) { t.add_int64_data(8); });
  add(TensorProto::STRING, {2}, [](TensorProto& t) { t.add_string_data("ab"); t.add_string_data("c"); });
  add(TensorProto::STRING, {2}, [](TensorProto& t) { t.add_string_data("a"); t.add_string_data("bc"); });
  add(TensorProto::FLOAT, {300}, [](TensorProto& t) { t.set_raw_data(std::string(1200, '\x01')); });
  add(TensorProto::FLOAT, {300}, [](TensorProto& t) { std::string s(1200, '\x01'); s[1199] = 2; t.set_raw_data(s); });
  add(TensorProto::FLOAT, {2}, [](TensorProto& t) { t.set_raw_data(std::string(4, '\0')); t.add_float_data(2); });
  add(TensorProto::FLOAT, {2}, [](TensorProto& t) { t.set_raw_data(""); });
  add(TensorProto::FLOAT, {2}, [](TensorProto&) {});
  add(TensorProto::FLOAT, {2}, [](TensorProto& t) {
    t.set_data_location(TensorProto::EXTERNAL);
    auto* e = t.add_external_data();
    e->set_key("location");
    e->set_value("w.bin");
  });
  const size_t n = ts.size();
  for (size_t i = 0; i < n; ++i) ts.push_back(ts[i]);  // an equal copy of each, named apart
  for (size_t i = n; i < ts.size(); ++i) ts[i].set_name("copy");
  for (const auto& a : ts)
    for (const auto& b : ts)
      EXPECT_EQ(shapeprop::ir::same_tensor_value(a, b),
                shapeprop::ir::tensor_value_key(a) == shapeprop::ir::tensor_value_key(b))
          << a.ShortDebugString() << " / " << b.ShortDebugString();
}
