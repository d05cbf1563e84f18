// Unit tests of two pieces of the core that tests of whole runs exercise only through
// their outputs: keep_nodes (src/transform/fold_body.h), which compacts a node list by
// moving pointers, and OpMemo (src/infer/op_memo.h), the per-analysis memo of op nodes'
// outcomes.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "infer/op_memo.h"  // internal to the library: the test target sees include/ only
#include "shapeprop/fact.h"
#include "test_util.h"
#include "transform/fold_body.h"

namespace shapeprop {
namespace {

using shapeprop::testing::int_attribute;

transform::NodeList nodes_named(const std::vector<std::string>& outputs) {
  transform::NodeList nodes;
  for (const auto& o : outputs) {
    onnx::NodeProto* n = nodes.Add();
    n->set_op_type("Relu");
    n->add_output(o);
  }
  return nodes;
}

std::vector<std::string> outputs_of(const transform::NodeList& nodes) {
  std::vector<std::string> out;
  for (const auto& n : nodes) out.push_back(n.output(0));
  return out;
}

TEST(KeepNodes, KeepsOrderAndTheNodesThemselves) {
  auto nodes = nodes_named({"a", "b", "c", "d", "e"});
  const onnx::NodeProto* b = &nodes.Get(1);
  const onnx::NodeProto* e = &nodes.Get(4);
  transform::keep_nodes(nodes, {false, true, false, false, true});
  EXPECT_EQ(outputs_of(nodes), (std::vector<std::string>{"b", "e"}));
  // Moved by pointer: the kept nodes are the same objects.
  EXPECT_EQ(&nodes.Get(0), b);
  EXPECT_EQ(&nodes.Get(1), e);
}

TEST(KeepNodes, AllOrNone) {
  auto nodes = nodes_named({"a", "b", "c"});
  transform::keep_nodes(nodes, {true, true, true});
  EXPECT_EQ(outputs_of(nodes), (std::vector<std::string>{"a", "b", "c"}));
  transform::keep_nodes(nodes, {false, false, false});
  EXPECT_EQ(nodes.size(), 0);
  transform::keep_nodes(nodes, {});
  EXPECT_EQ(nodes.size(), 0);
}

const onnx::OpSchema& schema_of(const char* op) {
  const onnx::OpSchema* s = onnx::OpSchemaRegistry::Schema(op, 18, "");
  EXPECT_NE(s, nullptr);
  return *s;
}

TEST(OpMemo, FindsOnlyWhatMatchesInEveryPart) {
  const Fact x = Fact::tensor(onnx::TensorProto::FLOAT, {Dim::symbol("N"), Dim::constant(3)});
  const Fact y = Fact::tensor(onnx::TensorProto::FLOAT, {Dim::symbol("N"), Dim::constant(4)});
  const auto axis0 = int_attribute("axis", 0), axis1 = int_attribute("axis", 1);
  const onnx::OpSchema& softmax = schema_of("Softmax");
  infer::OpMemo memo;
  // Keys view the lists of input facts they are made from.
  const std::vector<const Fact*> of_x{&x}, of_y{&y}, omitted{nullptr};
  auto key = infer::OpMemo::key(softmax, 18, 1, of_x, {&axis1});
  ASSERT_TRUE(key);
  EXPECT_EQ(memo.find(*key), nullptr);
  infer::OpMemo::Outcome outcome;
  outcome.outputs = {x};
  outcome.reports = {"a report"};
  memo.keep(*key, outcome);

  // The same parts, from another node with equal facts: found, reports and all.
  const Fact x_again = x;
  const std::vector<const Fact*> equal{&x_again};
  const auto same = memo.find(*infer::OpMemo::key(softmax, 18, 1, equal, {&axis1}));
  ASSERT_NE(same, nullptr);
  EXPECT_EQ(same->outputs[0].str(), x.str());
  EXPECT_EQ(same->reports, std::vector<std::string>{"a report"});

  // Any part different: not found.
  EXPECT_EQ(memo.find(*infer::OpMemo::key(softmax, 18, 1, of_y, {&axis1})), nullptr);
  EXPECT_EQ(memo.find(*infer::OpMemo::key(softmax, 18, 1, of_x, {&axis0})), nullptr);
  EXPECT_EQ(memo.find(*infer::OpMemo::key(softmax, 19, 1, of_x, {&axis1})), nullptr);
  EXPECT_EQ(memo.find(*infer::OpMemo::key(softmax, 18, 2, of_x, {&axis1})), nullptr);
  EXPECT_EQ(memo.find(*infer::OpMemo::key(softmax, 18, 1, omitted, {&axis1})), nullptr);
  EXPECT_EQ(memo.find(*infer::OpMemo::key(schema_of("LogSoftmax"), 18, 1, of_x, {&axis1})), nullptr);
}

// Attributes that differ in any way that a schema's inference could read give different
// keys, an equal copy the same key: every type an op's attributes take, a value given and
// left out, lists whose items split the same characters differently, and two attributes
// in either order (a key that ran their bytes together would match the wrong node).
TEST(OpMemo, AttributesFindOnlyTheirEquals) {
  using A = onnx::AttributeProto;
  auto make = [](const std::string& name, A::AttributeType type, const std::function<void(A&)>& set) {
    A a;
    a.set_name(name);
    a.set_type(type);
    set(a);
    return a;
  };
  std::vector<A> attributes = {
      make("axis", A::INT, [](A& a) { a.set_i(1); }),
      make("axis", A::INT, [](A& a) { a.set_i(2); }),
      make("axis", A::INT, [](A&) {}),  // no value: not the same as 0
      make("axis", A::INT, [](A& a) { a.set_i(0); }),
      make("axes", A::INT, [](A& a) { a.set_i(1); }),
      make("axis", A::INTS, [](A& a) { a.add_ints(1); }),
      make("axis", A::INTS, [](A& a) { a.add_ints(1); a.add_ints(1); }),
      make("axis", A::INTS, [](A&) {}),
      make("axis", A::FLOAT, [](A& a) { a.set_f(1.0f); }),
      make("axis", A::FLOAT, [](A& a) { a.set_f(0.0f); }),
      make("axis", A::FLOAT, [](A& a) { a.set_f(-0.0f); }),
      make("axis", A::FLOATS, [](A& a) { a.add_floats(1.0f); }),
      make("mode", A::STRING, [](A& a) { a.set_s("ab"); }),
      make("mode", A::STRING, [](A& a) { a.set_s("a"); }),
      make("mode", A::STRING, [](A& a) { a.set_s(std::string("a\0", 2)); }),
      make("mode", A::STRINGS, [](A& a) { a.add_strings("ab"); a.add_strings("c"); }),
      make("mode", A::STRINGS, [](A& a) { a.add_strings("a"); a.add_strings("bc"); }),
      make("mode", A::STRINGS, [](A& a) { a.add_strings("abc"); }),
      make("axis", A::INT, [](A& a) { a.set_i(1); a.set_f(2.0f); }),       // a field beside its type's
      make("axis", A::INT, [](A& a) { a.set_i(1); a.set_doc_string("d"); }),  // a doc string
      make("value", A::TENSOR, [](A& a) { a.mutable_t()->add_int64_data(1); a.mutable_t()->set_data_type(7); }),
      make("value", A::TENSOR, [](A& a) { a.mutable_t()->add_int64_data(2); a.mutable_t()->set_data_type(7); }),
      // Kinds spelled field by field next to those serialized whole, and presence apart from value.
      make("axis", A::INT, [](A& a) { a.set_i(1); a.set_ref_attr_name("r"); }),
      make("axis", A::INT, [](A& a) { a.set_i(1); a.mutable_tp(); }),
      make("axis", A::INT, [](A& a) { a.set_i(1); a.clear_type(); }),  // no type
      make("", A::INT, [](A& a) { a.set_i(1); }),
      make("axis", A::INT, [](A& a) { a.set_i(1); a.clear_name(); }),  // no name: not the same as ""
      make("mode", A::STRINGS, [](A& a) { a.add_strings(""); a.add_strings("a"); }),
      make("mode", A::STRINGS, [](A& a) { a.add_strings("a"); a.add_strings(""); }),
      make("mode", A::STRING, [](A& a) { a.set_s(""); }),
      make("mode", A::STRING, [](A&) {}),
      make("axis", A::FLOATS, [](A& a) { a.add_floats(1.0f); a.add_ints(1); }),
  };
  const Fact x = Fact::tensor(onnx::TensorProto::FLOAT, {Dim::constant(3)});
  const std::vector<const Fact*> of_x{&x};
  const onnx::OpSchema& softmax = schema_of("Softmax");
  for (size_t i = 0; i < attributes.size(); ++i) {
    infer::OpMemo memo;
    memo.keep(*infer::OpMemo::key(softmax, 18, 1, of_x, {&attributes[i]}), {});
    const A copy = attributes[i];
    EXPECT_NE(memo.find(*infer::OpMemo::key(softmax, 18, 1, of_x, {&copy})), nullptr) << i;
    for (size_t j = 0; j < attributes.size(); ++j) {
      if (j == i) continue;
      EXPECT_EQ(memo.find(*infer::OpMemo::key(softmax, 18, 1, of_x, {&attributes[j]})), nullptr) << i << " " << j;
    }
    memo.keep(*infer::OpMemo::key(softmax, 18, 1, of_x, {&attributes[i], &attributes[(i + 1) % attributes.size()]}), {});
    EXPECT_EQ(memo.find(*infer::OpMemo::key(softmax, 18, 1, of_x, {&attributes[(i + 1) % attributes.size()], &attributes[i]})),
              nullptr) << i;
  }
}

TEST(OpMemo, KeepsNoNodeWithAGraphAttributeOrANonTensorInput) {
  const Fact cond = Fact::tensor(onnx::TensorProto::BOOL, {});
  onnx::AttributeProto branch;
  branch.set_name("then_branch");
  branch.set_type(onnx::AttributeProto::GRAPH);
  branch.mutable_g()->set_name("g");
  const std::vector<const Fact*> of_cond{&cond};
  EXPECT_FALSE(infer::OpMemo::key(schema_of("If"), 18, 1, of_cond, {&branch}));

  onnx::TypeProto sequence_type;
  sequence_type.mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(1);
  const Fact sequence = Fact::of_type(sequence_type);
  const std::vector<const Fact*> of_sequence{&sequence};
  EXPECT_FALSE(infer::OpMemo::key(schema_of("SequenceLength"), 18, 1, of_sequence, {}));
}

}  // namespace
}  // namespace shapeprop
