// Unit tests of the symbolic evaluator's folding rules (src/eval/fold*.cc).
//
// Facts are compared through Fact::str(): "int64[2] {M,3}" is a 1-D int64 tensor of two
// elements M and 3; "float[N,3]" a tensor without known elements; "bool {1}" a scalar.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "eval/fold.h"  // internal to the library: the test target sees include/ only
#include "shapeprop/fact.h"

namespace shapeprop {
namespace {

using eval::FoldInput;
using onnx::AttributeProto;
using onnx::TensorProto;

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

Dim C(int64_t v) { return Dim::constant(v); }
const Dim N = Dim::symbol("N");
const Dim M = Dim::symbol("M");
const Dim B = Dim::symbol("B");
Dim S(const std::string& name) { return Dim::symbol(name); }

// ---- facts -----------------------------------------------------------------------------

Fact tensor(int32_t type, std::vector<Dim> shape) { return Fact::tensor(type, std::move(shape)); }
Fact floats(std::vector<Dim> shape) { return tensor(TensorProto::FLOAT, std::move(shape)); }
Fact unknown_rank(int32_t type) {
  Fact f;
  f.elem_type = type;
  return f;
}
// A 1-D int64 tensor holding `values` (a shape value when symbolic).
Fact i64s(std::vector<Dim> values) {
  const auto n = static_cast<int64_t>(values.size());
  return Fact::int_tensor(TensorProto::INT64, {C(n)}, std::move(values));
}
Fact i64(Dim value) { return Fact::int_tensor(TensorProto::INT64, {}, {std::move(value)}); }
Fact ints_of(int32_t type, std::vector<Dim> shape, std::vector<Dim> values) {
  return Fact::int_tensor(type, std::move(shape), std::move(values));
}
Fact bools(std::vector<Dim> shape, std::vector<Dim> values) { return ints_of(TensorProto::BOOL, std::move(shape), std::move(values)); }
Fact reals(int32_t type, std::vector<Dim> shape, std::vector<double> values) {
  return Fact::real_tensor(type, std::move(shape), std::move(values));
}
Fact f32(std::vector<double> values) {
  const auto n = static_cast<int64_t>(values.size());
  return reals(TensorProto::FLOAT, {C(n)}, std::move(values));
}
Fact f32(double value) { return reals(TensorProto::FLOAT, {}, {value}); }

// ---- attributes ------------------------------------------------------------------------

AttributeProto attr_i(const std::string& name, int64_t v) {
  AttributeProto a;
  a.set_name(name);
  a.set_type(AttributeProto::INT);
  a.set_i(v);
  return a;
}
AttributeProto attr_s(const std::string& name, const std::string& v) {
  AttributeProto a;
  a.set_name(name);
  a.set_type(AttributeProto::STRING);
  a.set_s(v);
  return a;
}
AttributeProto attr_is(const std::string& name, std::vector<int64_t> v) {
  AttributeProto a;
  a.set_name(name);
  a.set_type(AttributeProto::INTS);
  for (int64_t x : v) a.add_ints(x);
  return a;
}
AttributeProto attr_f(const std::string& name, float v) {
  AttributeProto a;
  a.set_name(name);
  a.set_type(AttributeProto::FLOAT);
  a.set_f(v);
  return a;
}
AttributeProto attr_fs(const std::string& name, std::vector<float> v) {
  AttributeProto a;
  a.set_name(name);
  a.set_type(AttributeProto::FLOATS);
  for (float x : v) a.add_floats(x);
  return a;
}
AttributeProto attr_t(const std::string& name, const TensorProto& t) {
  AttributeProto a;
  a.set_name(name);
  a.set_type(AttributeProto::TENSOR);
  *a.mutable_t() = t;
  return a;
}
TensorProto int64_tensor(std::vector<int64_t> dims, std::vector<int64_t> values) {
  TensorProto t;
  t.set_data_type(TensorProto::INT64);
  for (int64_t d : dims) t.add_dims(d);
  for (int64_t v : values) t.add_int64_data(v);
  return t;
}

// ---- running a rule --------------------------------------------------------------------

// One node: op type, opset, inputs (nullopt for an omitted optional one), attributes.
class Node {
 public:
  explicit Node(std::string op, std::vector<Fact> inputs = {}) : op_(std::move(op)) {
    for (auto& f : inputs) inputs_.emplace_back(std::move(f));
  }
  Node& opset(int v) { return opset_ = v, *this; }
  Node& input(Fact f) { return inputs_.emplace_back(std::move(f)), *this; }
  Node& omitted() { return inputs_.emplace_back(std::nullopt), *this; }
  Node& attr(AttributeProto a) { return attrs_.push_back(std::move(a)), *this; }
  Node& outputs(size_t n) { return outputs_ = n, *this; }
  // Symbolic dims are at least 1 (InferOptions::assume_positive_dims).
  Node& positive_dims() { return symbol_min_ = 1, *this; }
  // Whether the last run's result relied on positive_dims().
  bool relied() const { return relied_; }
  // Collects the conditions the rule states its result under (FoldInput::conditions).
  Node& conditions(std::vector<std::string>* sink) { return conditions_ = sink, *this; }

  std::vector<Fact> all() const {
    FoldInput in;
    in.op = op_;
    in.opset = opset_;
    for (const auto& f : inputs_) in.inputs.push_back(f ? &*f : nullptr);
    for (const auto& a : attrs_) in.attributes.push_back(&a);
    in.num_outputs = outputs_;
    in.symbol_min = symbol_min_;
    relied_ = false;
    in.relied_on_symbol_min = &relied_;
    in.conditions = conditions_;
    return eval::fold(in);
  }
  Fact out() const {
    auto all_out = all();
    EXPECT_EQ(all_out.size(), outputs_);
    return all_out.empty() ? Fact() : all_out[0];
  }
  std::string str() const { return out().str(); }

 private:
  std::string op_;
  int opset_ = 18;
  std::vector<std::optional<Fact>> inputs_;
  std::vector<AttributeProto> attrs_;
  size_t outputs_ = 1;
  int64_t symbol_min_ = 0;
  std::vector<std::string>* conditions_ = nullptr;
  mutable bool relied_ = false;
};

const Fact kX = floats({N, M, C(3)});  // x: float[N,M,3]

Fact shape_of(const Fact& x) { return Node("Shape", {x}).out(); }

// ---- the table -------------------------------------------------------------------------

TEST(Fold, TableCoversTheIssueOps) {
  for (const char* op : {"Shape", "Size", "Constant", "ConstantOfShape", "Cast", "CastLike", "Identity", "Equal", "Less",
                         "LessOrEqual", "Greater", "GreaterOrEqual", "Not", "And", "Or", "Where", "Add", "Sub", "Mul", "Div",
                         "Mod", "Neg", "Abs", "Min", "Max", "Concat", "Gather", "ScatterND", "Slice", "Squeeze", "Unsqueeze", "Reshape",
                         "Expand", "Range", "ReduceProd", "ReduceSum", "Split", "Conv", "ConvTranspose", "MaxPool",
                         "AveragePool", "LpPool", "Resize", "Upsample"})
    EXPECT_TRUE(eval::has_rule(op)) << op;
  EXPECT_FALSE(eval::has_rule("Softmax"));
  EXPECT_TRUE(Node("Softmax", {kX}).all().empty());
}

TEST(Fold, OneFactPerOutput) {
  auto out = Node("Identity", {kX}).outputs(2).all();
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0], kX);
  EXPECT_EQ(out[1], Fact());
}

TEST(Fold, MissingInputsGiveNothingWrong) {
  // Every rule copes with absent facts: nothing known comes out, and nothing crashes.
  for (const char* op : {"Shape", "Size", "ConstantOfShape", "Cast", "CastLike", "Equal", "Not", "Where", "Add", "Min",
                         "Concat", "Gather", "Slice", "Squeeze", "Unsqueeze", "Reshape", "Expand", "Range", "ReduceSum",
                         "Split"}) {
    auto out = Node(op).all();
    ASSERT_EQ(out.size(), 1u) << op;
    EXPECT_FALSE(out[0].has_elements()) << op;
    auto with_unknown = Node(op, {Fact(), Fact(), Fact()}).all();
    EXPECT_FALSE(with_unknown[0].has_elements()) << op;
  }
}

TEST(Fold, OddInputsNeverCrash) {
  // Every rule over combinations of odd facts (unknown, scalar, empty, symbolic, negative
  // dims, element counts that disagree with the shape) and attributes: whatever comes
  // out, nothing crashes (the sanitizer build checks memory and overflow too).
  Fact mismatched = tensor(TensorProto::INT64, {C(3)});
  mismatched.ints = std::vector<Dim>{C(1), C(2)};
  Fact scalar_with_three = tensor(TensorProto::INT64, {});
  scalar_with_three.ints = std::vector<Dim>{C(1), C(2), C(3)};
  const std::vector<Fact> pool = {Fact(), i64(C(0)), i64s({}), i64s({C(-1), C(kMin)}), i64s({C(kMax), N}), f32({1.5, -2}),
                                  floats({N, C(0), Dim()}), tensor(TensorProto::INT64, {C(-2)}), mismatched,
                                  bools({C(2)}, {C(1), C(0)}), f32({std::nan(""), 1e300}), scalar_with_three,
                                  floats({C(kMax), C(kMax)}), floats({C(1000000)}), i64s({C(1000000), C(1000000)})};
  const std::vector<std::vector<AttributeProto>> attr_sets = {
      {}, {attr_i("axis", -1), attr_i("keepdims", 0)}, {attr_is("axes", {0, -1}), attr_i("to", TensorProto::INT8)},
      {attr_i("axis", 5), attr_i("fmod", 1), attr_i("allowzero", 1), attr_i("start", kMin), attr_i("end", kMax)},
      {attr_is("split", {1, -1}), attr_i("num_outputs", 2), attr_is("shape", {-1, 0}), attr_is("starts", {kMin}),
       attr_is("ends", {kMax}), attr_i("noop_with_empty_axes", 1), attr_t("value", int64_tensor({2}, {1, 2}))}};
  for (const char* op : {"Shape", "Size", "Constant", "ConstantOfShape", "Cast", "CastLike", "Identity", "Equal", "Less",
                         "Not", "And", "Where", "Add", "Sub", "Mul", "Div", "Mod", "Neg", "Abs", "Min", "Concat", "Gather",
                         "Slice", "Squeeze", "Unsqueeze", "Reshape", "Expand", "Range", "ReduceProd", "ReduceSum", "Split"})
    for (int opset : {9, 13, 18})
      for (const auto& attrs : attr_sets)
        for (const Fact& a : pool)
          for (const Fact& b : pool)
            for (size_t third : {size_t{0}, size_t{3}, size_t{4}, size_t{11}}) {
              Node node(op, {a, b});
              node.opset(opset).outputs(2);
              if (third) node.input(pool[third]).input(pool[third]);
              for (const auto& attr : attrs) node.attr(attr);
              EXPECT_EQ(node.all().size(), 2u) << op;
            }
}

// ---- Shape, Size -----------------------------------------------------------------------

TEST(FoldShape, DimsAsElements) {
  EXPECT_EQ(Node("Shape", {kX}).str(), "int64[3] {N,M,3}");
  EXPECT_EQ(Node("Shape", {floats({})}).str(), "int64[0] {}");
  // Unknown dims stay unknown elements; nothing known at all gives no elements.
  EXPECT_EQ(Node("Shape", {floats({N, Dim()})}).str(), "int64[2] {N,?}");
  EXPECT_EQ(Node("Shape", {floats({Dim(), Dim()})}).str(), "int64[2]");
  EXPECT_EQ(Node("Shape", {unknown_rank(TensorProto::FLOAT)}).str(), "int64[?]");
}

TEST(FoldShape, StartAndEnd) {
  EXPECT_EQ(Node("Shape", {kX}).attr(attr_i("start", -2)).str(), "int64[2] {M,3}");
  EXPECT_EQ(Node("Shape", {kX}).attr(attr_i("start", 1)).attr(attr_i("end", 2)).str(), "int64[1] {M}");
  EXPECT_EQ(Node("Shape", {kX}).attr(attr_i("end", -1)).str(), "int64[2] {N,M}");
  // Clamped into [0, rank]; an empty range is an empty shape.
  EXPECT_EQ(Node("Shape", {kX}).attr(attr_i("start", -10)).attr(attr_i("end", 10)).str(), "int64[3] {N,M,3}");
  EXPECT_EQ(Node("Shape", {kX}).attr(attr_i("start", 2)).attr(attr_i("end", 1)).str(), "int64[0] {}");
}

TEST(FoldSize, RankOfAShapeValue) {
  // torchlib's IsScalar: Size(Shape(x)) is x's rank, however symbolic x's dims are.
  EXPECT_EQ(Node("Size", {shape_of(kX)}).str(), "int64 {3}");
  EXPECT_EQ(Node("Size", {shape_of(floats({Dim(), Dim()}))}).str(), "int64 {2}");
}

TEST(FoldSize, ProductOfDims) {
  Fact size = Node("Size", {kX}).out();
  ASSERT_TRUE(size.ints);
  EXPECT_EQ((*size.ints)[0], C(3) * N * M);
  EXPECT_EQ((*size.ints)[0], Dim::parse("3*M*N"));
  EXPECT_EQ(size.shape, std::vector<Dim>{});
  EXPECT_EQ(Node("Size", {floats({C(2), C(0)})}).str(), "int64 {0}");
  EXPECT_EQ(Node("Size", {floats({N, Dim()})}).str(), "int64");
  EXPECT_EQ(Node("Size", {unknown_rank(TensorProto::FLOAT)}).str(), "int64");
}

// ---- Constant, ConstantOfShape ---------------------------------------------------------

TEST(FoldConstant, EveryValueAttribute) {
  EXPECT_EQ(Node("Constant").attr(attr_i("value_int", 0)).str(), "int64 {0}");
  EXPECT_EQ(Node("Constant").attr(attr_is("value_ints", {1, -1})).str(), "int64[2] {1,-1}");
  EXPECT_EQ(Node("Constant").attr(attr_f("value_float", 1.5f)).str(), "float {1.5}");
  EXPECT_EQ(Node("Constant").attr(attr_fs("value_floats", {0.5f, 2})).str(), "float[2] {0.5,2}");
  EXPECT_EQ(Node("Constant").attr(attr_t("value", int64_tensor({2, 1}, {7, 8}))).str(), "int64[2,1] {7,8}");

  AttributeProto s;
  s.set_name("value_string");
  s.set_type(AttributeProto::STRING);
  s.set_s("hello");
  EXPECT_EQ(Node("Constant").attr(s).str(), "string");
  AttributeProto ss;
  ss.set_name("value_strings");
  ss.set_type(AttributeProto::STRINGS);
  ss.add_strings("a");
  ss.add_strings("b");
  EXPECT_EQ(Node("Constant").attr(ss).str(), "string[2]");
  AttributeProto sparse;
  sparse.set_name("sparse_value");
  sparse.set_type(AttributeProto::SPARSE_TENSOR);
  sparse.mutable_sparse_tensor()->add_dims(4);
  sparse.mutable_sparse_tensor()->add_dims(5);
  sparse.mutable_sparse_tensor()->mutable_values()->set_data_type(TensorProto::FLOAT);
  EXPECT_EQ(Node("Constant").attr(sparse).str(), "float[4,5]");
}

TEST(FoldConstantOfShape, ShapeFromElements) {
  // Default value: float 0.
  EXPECT_EQ(Node("ConstantOfShape", {i64s({C(2), C(1)})}).str(), "float[2,1] {0,0}");
  EXPECT_EQ(Node("ConstantOfShape", {i64s({C(3)})}).attr(attr_t("value", int64_tensor({1}, {7}))).str(),
            "int64[3] {7,7,7}");
  // Empty shape: a scalar.
  EXPECT_EQ(Node("ConstantOfShape", {i64s({})}).attr(attr_t("value", int64_tensor({1}, {1}))).str(), "int64 {1}");
  // Symbolic dims: the shape, no elements.
  EXPECT_EQ(Node("ConstantOfShape", {Node("Shape", {kX}).out()}).str(), "float[N,M,3]");
  // Only the length of the shape known: the rank.
  EXPECT_EQ(Node("ConstantOfShape", {tensor(TensorProto::INT64, {C(2)})}).str(), "float[?,?]");
  // Too many elements to keep: the shape only.
  EXPECT_EQ(Node("ConstantOfShape", {i64s({C(100), C(100)})}).str(), "float[100,100]");
  // A negative dim is invalid: nothing about the shape.
  EXPECT_EQ(Node("ConstantOfShape", {i64s({C(-1)})}).str(), "float[]");
}

// ---- Identity, Cast, CastLike ----------------------------------------------------------

TEST(FoldCast, IntegralToIntegral) {
  Fact shape = shape_of(kX);
  EXPECT_EQ(Node("Identity", {shape}).out(), shape);
  // int64 -> int64 is a no-op; to int32 a lone symbol stays (one dimension fits).
  EXPECT_EQ(Node("Cast", {shape}).attr(attr_i("to", TensorProto::INT64)).out(), shape);
  EXPECT_EQ(Node("Cast", {shape}).attr(attr_i("to", TensorProto::INT32)).str(), "int32[3] {N,M,3}");
  EXPECT_EQ(Node("Cast", {i64s({N * M, C(2)})}).attr(attr_i("to", TensorProto::INT32)).str(), "int32[2] {?,2}");
  // Narrow types wrap like C++ conversions; unsigned drops symbols.
  EXPECT_EQ(Node("Cast", {i64s({C(300), C(-1)})}).attr(attr_i("to", TensorProto::INT8)).str(), "int8[2] {44,-1}");
  EXPECT_EQ(Node("Cast", {i64s({C(-1), N})}).attr(attr_i("to", TensorProto::UINT8)).str(), "uint8[2] {255,?}");
  // To bool: non-zero is true; a symbol may be 0, so its truth is unknown and a bool
  // tensor with an unknown element has no elements.
  EXPECT_EQ(Node("Cast", {i64s({C(0), C(5)})}).attr(attr_i("to", TensorProto::BOOL)).str(), "bool[2] {0,1}");
  EXPECT_EQ(Node("Cast", {i64s({C(0), N})}).attr(attr_i("to", TensorProto::BOOL)).str(), "bool[2]");
}

TEST(FoldCast, FloatingAndIntegral) {
  // float -> int truncates toward zero.
  EXPECT_EQ(Node("Cast", {f32({2.7, -2.7, 0.5})}).attr(attr_i("to", TensorProto::INT64)).str(), "int64[3] {2,-2,0}");
  EXPECT_EQ(Node("Cast", {f32({0.0, -0.5})}).attr(attr_i("to", TensorProto::BOOL)).str(), "bool[2] {0,1}");
  // Out of range is undefined: unknown.
  EXPECT_EQ(Node("Cast", {f32({1e10, 1})}).attr(attr_i("to", TensorProto::INT32)).str(), "int32[2] {?,1}");
  // int -> float rounds to the type; a symbol has no floating value.
  EXPECT_EQ(Node("Cast", {i64s({C(3), C(16777217)})}).attr(attr_i("to", TensorProto::FLOAT)).str(),
            "float[2] {3,1.67772e+07}");
  Fact rounded = Node("Cast", {i64s({C(16777217)})}).attr(attr_i("to", TensorProto::FLOAT)).out();
  ASSERT_TRUE(rounded.reals);
  EXPECT_EQ((*rounded.reals)[0], 16777216.0);
  EXPECT_EQ(Node("Cast", {i64s({N, C(3)})}).attr(attr_i("to", TensorProto::FLOAT)).str(), "float[2]");
  // double -> float rounds.
  Fact narrowed = Node("Cast", {reals(TensorProto::DOUBLE, {}, {0.1})}).attr(attr_i("to", TensorProto::FLOAT)).out();
  ASSERT_TRUE(narrowed.reals);
  EXPECT_EQ((*narrowed.reals)[0], double{0.1f});
  // bool -> float.
  EXPECT_EQ(Node("Cast", {bools({C(2)}, {C(1), C(0)})}).attr(attr_i("to", TensorProto::FLOAT)).str(), "float[2] {1,0}");
  // Strings: type and shape only.
  EXPECT_EQ(Node("Cast", {i64s({C(1)})}).attr(attr_i("to", TensorProto::STRING)).str(), "string[1]");
  EXPECT_EQ(Node("Cast", {kX}).attr(attr_i("to", TensorProto::FLOAT16)).str(), "float16[N,M,3]");
}

TEST(FoldCastLike, TakesTheOtherInputsType) {
  // CastLike of an int64 constant to the type of an int64 scalar: unchanged.
  EXPECT_EQ(Node("CastLike", {i64(C(0)), tensor(TensorProto::INT64, {})}).str(), "int64 {0}");
  EXPECT_EQ(Node("CastLike", {i64(N), i64(C(1))}).str(), "int64 {N}");
  EXPECT_EQ(Node("CastLike", {f32(-3.5), tensor(TensorProto::INT32, {})}).str(), "int32 {-3}");
  EXPECT_EQ(Node("CastLike", {i64(C(2)), floats({N})}).str(), "float {2}");
  // The target type unknown: the shape only.
  EXPECT_EQ(Node("CastLike", {i64s({C(2)}), Fact()}).str(), "?[1]");
}

// ---- comparisons and logic -------------------------------------------------------------

TEST(FoldCompare, RankConditions) {
  Fact rank = Node("Size", {shape_of(kX)}).out();
  EXPECT_EQ(Node("Equal", {rank, i64(C(2))}).str(), "bool {0}");
  EXPECT_EQ(Node("Equal", {rank, i64(C(3))}).str(), "bool {1}");
  // torchlib's clamp: Equal(Size(self), 0) stays open, since N may be 0.
  EXPECT_EQ(Node("Equal", {Node("Size", {kX}).out(), i64(C(0))}).str(), "bool");
  EXPECT_EQ(Node("Equal", {i64(N), i64(N)}).str(), "bool {1}");
  EXPECT_EQ(Node("Equal", {i64(N + C(1)), i64(N)}).str(), "bool {0}");
}

// With symbols at least 1, a comparison the least value 0 would leave open (or decide
// otherwise) is decided, and the rule says that it relied on the assumption; one decided
// either way, or open either way, relied on nothing.
TEST(FoldCompare, PositiveDimsReportWhenTheyDecide) {
  const Fact size = Node("Size", {kX}).out();  // 3*N*M
  Node empty("Equal", {size, i64(C(0))});
  EXPECT_EQ(empty.str(), "bool");
  EXPECT_FALSE(empty.relied());
  EXPECT_EQ(empty.positive_dims().str(), "bool {0}");
  EXPECT_TRUE(empty.relied());
  Node at_least_one("Less", {i64(N), i64(C(1))});
  EXPECT_EQ(at_least_one.positive_dims().str(), "bool {0}");
  EXPECT_TRUE(at_least_one.relied());
  Node rank("Equal", {Node("Size", {shape_of(kX)}).out(), i64(C(3))});
  EXPECT_EQ(rank.positive_dims().str(), "bool {1}");
  EXPECT_FALSE(rank.relied());
  Node shifted("Equal", {i64(N + C(1)), i64(N)});
  EXPECT_EQ(shifted.positive_dims().str(), "bool {0}");
  EXPECT_FALSE(shifted.relied());
  Node open("Less", {i64(N), i64(C(2))});
  EXPECT_EQ(open.positive_dims().str(), "bool");
  EXPECT_FALSE(open.relied());
}

TEST(FoldCompare, Ordering) {
  EXPECT_EQ(Node("Less", {i64s({C(1), C(3)}), i64(C(2))}).str(), "bool[2] {1,0}");
  EXPECT_EQ(Node("LessOrEqual", {i64s({C(2), C(3)}), i64(C(2))}).str(), "bool[2] {1,0}");
  EXPECT_EQ(Node("Greater", {i64s({C(1), C(3)}), i64(C(2))}).str(), "bool[2] {0,1}");
  EXPECT_EQ(Node("GreaterOrEqual", {i64s({C(1), C(2)}), i64(C(2))}).str(), "bool[2] {0,1}");
  // Symbols are dimensions: N < N+1, N >= 0, N > -1; N vs 1 is open.
  EXPECT_EQ(Node("Less", {i64(N), i64(N + C(1))}).str(), "bool {1}");
  EXPECT_EQ(Node("GreaterOrEqual", {i64(N), i64(C(0))}).str(), "bool {1}");
  EXPECT_EQ(Node("Greater", {i64(N), i64(C(-1))}).str(), "bool {1}");
  EXPECT_EQ(Node("LessOrEqual", {i64(N), i64(C(-1))}).str(), "bool {0}");
  EXPECT_EQ(Node("Less", {i64(N), i64(C(1))}).str(), "bool");
  // Floating: IEEE, NaN compares false.
  EXPECT_EQ(Node("Less", {f32({1.0, std::nan("")}), f32(2.0)}).str(), "bool[2] {1,0}");
  EXPECT_EQ(Node("Equal", {f32({1.0, 2.0}), f32({1.0, 3.0})}).str(), "bool[2] {1,0}");
}

TEST(FoldLogic, NotAndOr) {
  Fact tf = bools({C(2)}, {C(1), C(0)});
  EXPECT_EQ(Node("Not", {tf}).str(), "bool[2] {0,1}");
  EXPECT_EQ(Node("And", {tf, bools({}, {C(1)})}).str(), "bool[2] {1,0}");
  EXPECT_EQ(Node("Or", {tf, bools({}, {C(0)})}).str(), "bool[2] {1,0}");
  // One known absorbing operand decides.
  Fact open = tensor(TensorProto::BOOL, {});
  EXPECT_EQ(Node("And", {open, bools({}, {C(0)})}).str(), "bool {0}");
  EXPECT_EQ(Node("Or", {bools({}, {C(1)}), open}).str(), "bool {1}");
  EXPECT_EQ(Node("And", {open, bools({}, {C(1)})}).str(), "bool");
}

TEST(FoldWhere, PicksByCondition) {
  Fact cond = bools({C(3)}, {C(1), C(0), C(1)});
  EXPECT_EQ(Node("Where", {cond, i64s({C(1), C(2), C(3)}), i64(C(0))}).str(), "int64[3] {1,0,3}");
  EXPECT_EQ(Node("Where", {bools({}, {C(0)}), f32(1.5), f32({2, 3})}).str(), "float[2] {2,3}");
  EXPECT_EQ(Node("Where", {cond, i64(N), i64(M)}).str(), "int64[3] {N,M,N}");
  // An open condition: known only where both sides agree.
  Fact open = tensor(TensorProto::BOOL, {C(2)});
  EXPECT_EQ(Node("Where", {open, i64s({N, C(1)}), i64s({N, C(2)})}).str(), "int64[2] {N,?}");
  // Shapes broadcast over all three inputs.
  EXPECT_EQ(Node("Where", {tensor(TensorProto::BOOL, {N, C(1)}), floats({C(3)}), floats({C(1), C(1)})}).str(),
            "float[N,3]");
}

// ---- arithmetic ------------------------------------------------------------------------

TEST(FoldArithmetic, SymbolicShapeArithmetic) {
  Fact dims = shape_of(kX);
  EXPECT_EQ(Node("Add", {dims, i64(C(1))}).str(), "int64[3] {N+1,M+1,4}");
  EXPECT_EQ(Node("Sub", {dims, i64(C(3))}).str(), "int64[3] {N-3,M-3,0}");
  EXPECT_EQ(Node("Mul", {i64(N), i64(M)}).str(), "int64 {M*N}");
  EXPECT_EQ(Node("Mul", {i64(C(2)), i64(M)}).str(), "int64 {2*M}");
  EXPECT_EQ(Node("Div", {i64(C(2) * M), i64(C(2))}).str(), "int64 {M}");
  // A size divided by a positive constant: truncation is floor division.
  EXPECT_EQ(Node("Div", {i64(M), i64(C(2))}).str(), "int64 {floor(M/2)}");
  // A dividend that may be negative (M - N): exact division only; one above -c: a max
  // (truncation gives 0 where floor division gives -1). A negative divisor negates.
  EXPECT_EQ(Node("Div", {i64(M - N), i64(C(2))}).str(), "int64");
  EXPECT_EQ(Node("Div", {i64(M - C(1)), i64(C(8))}).str(), "int64 {max(floor((M+7)/8),1)-1}");
  Node assumed("Div", {i64(M - C(1)), i64(C(8))});
  assumed.positive_dims();
  EXPECT_EQ(assumed.str(), "int64 {floor((M+7)/8)-1}");
  EXPECT_TRUE(assumed.relied());
  EXPECT_EQ(Node("Div", {i64(M - C(8)), i64(C(8))}).str(), "int64");
  EXPECT_EQ(Node("Div", {i64(M), i64(C(-2))}).str(), "int64 {-floor(M/2)}");
}

TEST(FoldArithmetic, DivTruncatesTowardZero) {
  EXPECT_EQ(Node("Div", {i64s({C(-7), C(7), C(-8)}), i64(C(2))}).str(), "int64[3] {-3,3,-4}");
  EXPECT_EQ(Node("Div", {i64s({C(7)}), i64s({C(-2)})}).str(), "int64[1] {-3}");
  EXPECT_EQ(Node("Div", {i64(C(1)), i64(C(0))}).str(), "int64");  // undefined
  EXPECT_EQ(Node("Div", {f32(-7), f32(2)}).str(), "float {-3.5}");
  EXPECT_EQ(Node("Div", {f32(1), f32(0)}).str(), "float {inf}");
}

TEST(FoldArithmetic, Mod) {
  // fmod=0: the divisor's sign (Python); fmod=1: the dividend's (C).
  EXPECT_EQ(Node("Mod", {i64s({C(-7), C(7)}), i64(C(2))}).str(), "int64[2] {1,1}");
  EXPECT_EQ(Node("Mod", {i64s({C(7), C(-7)}), i64(C(-3))}).str(), "int64[2] {-2,-1}");
  EXPECT_EQ(Node("Mod", {i64s({C(-7), C(7)}), i64(C(2))}).attr(attr_i("fmod", 1)).str(), "int64[2] {-1,1}");
  EXPECT_EQ(Node("Mod", {i64s({C(7), C(-7)}), i64(C(-3))}).attr(attr_i("fmod", 1)).str(), "int64[2] {1,-1}");
  EXPECT_EQ(Node("Mod", {i64(C(2) * N), i64(C(2))}).attr(attr_i("fmod", 1)).str(), "int64 {0}");
  EXPECT_EQ(Node("Mod", {f32(-7.5), f32(2)}).attr(attr_i("fmod", 1)).str(), "float {-1.5}");
  // Floating Mod needs fmod=1.
  EXPECT_EQ(Node("Mod", {f32(-7.5), f32(2)}).str(), "float");
}

TEST(FoldArithmetic, RangeOfTheType) {
  // int32 overflow is left unknown rather than wrapped.
  Fact big = ints_of(TensorProto::INT32, {}, {C(2147483647)});
  EXPECT_EQ(Node("Add", {big, ints_of(TensorProto::INT32, {}, {C(1)})}).str(), "int32");
  // Floating results are rounded to the element type.
  Fact third = Node("Div", {f32(1), f32(3)}).out();
  ASSERT_TRUE(third.reals);
  EXPECT_EQ((*third.reals)[0], double{1.0f / 3.0f});
}

TEST(FoldArithmetic, NegAbs) {
  EXPECT_EQ(Node("Neg", {i64s({N, C(-2)})}).str(), "int64[2] {-N,2}");
  EXPECT_EQ(Node("Abs", {i64s({N, C(-2), -N, N - C(1)})}).str(), "int64[4] {N,2,N,?}");
  EXPECT_EQ(Node("Abs", {f32({-1.5, 2})}).str(), "float[2] {1.5,2}");
  EXPECT_EQ(Node("Neg", {f32(1.5)}).str(), "float {-1.5}");
}

TEST(FoldArithmetic, MinMaxVariadic) {
  EXPECT_EQ(Node("Min", {i64s({C(1), C(5)}), i64(C(3)), i64s({C(0), C(4)})}).str(), "int64[2] {0,3}");
  EXPECT_EQ(Node("Max", {i64s({C(1), C(5)}), i64(C(3))}).str(), "int64[2] {3,5}");
  EXPECT_EQ(Node("Max", {i64s({N, N}), i64s({N + C(1), C(0)})}).str(), "int64[2] {N+1,N}");
  EXPECT_EQ(Node("Min", {i64(N), i64(M)}).str(), "int64 {min(M,N)}");  // undecided: a min term
  EXPECT_EQ(Node("Min", {f32({1, 5}), f32(2)}).str(), "float[2] {1,2}");
  EXPECT_EQ(Node("Max", {i64(C(7))}).str(), "int64 {7}");
}

TEST(FoldBroadcast, SymbolicShapes) {
  EXPECT_EQ(Node("Add", {floats({N, C(1)}), floats({C(3)})}).str(), "float[N,3]");
  EXPECT_EQ(Node("Add", {floats({N, M}), floats({N, M})}).str(), "float[N,M]");
  // Different symbols: unknown. A constant other than 1 wins (the other must be 1 or it).
  EXPECT_EQ(Node("Add", {floats({N}), floats({M})}).str(), "float[?]");
  EXPECT_EQ(Node("Mul", {floats({N}), floats({C(4)})}).str(), "float[4]");
  EXPECT_EQ(Node("Mul", {floats({C(1)}), floats({Dim()})}).str(), "float[?]");
  EXPECT_EQ(Node("Sub", {floats({C(2), C(1)}), floats({C(5)})}).str(), "float[2,5]");
  EXPECT_EQ(Node("Equal", {floats({N}), unknown_rank(TensorProto::FLOAT)}).str(), "bool[]");
  // Elements broadcast too.
  EXPECT_EQ(Node("Add", {i64s({C(10), C(20)}), ints_of(TensorProto::INT64, {C(2), C(1)}, {C(1), C(2)})}).str(),
            "int64[2,2] {11,21,12,22}");
  // A dim that covers the other: S with min(S,128) can only be S (equal, or min(S,128)
  // is 1, which needs S = 1), whatever the assumptions; S with S-1 needs S-1 >= 1.
  const Dim s = S("S"), table = Dim::min(s, C(128));
  EXPECT_EQ(Node("Add", {floats({B, s, C(4)}), floats({C(1), table, C(4)})}).str(), "float[B,S,4]");
  EXPECT_EQ(Node("Add", {floats({C(1), table, C(4)}), floats({B, s, C(4)})}).str(), "float[B,S,4]");
  EXPECT_FALSE(Node("Add", {floats({s}), floats({table})}).positive_dims().relied());
  EXPECT_EQ(Node("Add", {floats({s}), floats({s - C(1)})}).str(), "float[?]");
  EXPECT_EQ(Node("Add", {floats({s}), floats({Dim::floor_div(s, C(2))})}).str(), "float[?]");
}

// ---- Flatten, Pad, Tile, DepthToSpace ----------------------------------------------------

TEST(FoldLayout, FlattenPadTileDepthToSpace) {
  const Dim s = S("S");
  EXPECT_EQ(Node("Flatten", {floats({B, s, C(4)})}).str(), "float[B,4*S]");
  EXPECT_EQ(Node("Flatten", {floats({B, s, C(4)})}).attr(attr_i("axis", 2)).str(), "float[B*S,4]");
  EXPECT_EQ(Node("Flatten", {floats({B, s, C(4)})}).attr(attr_i("axis", -1)).str(), "float[B*S,4]");
  EXPECT_EQ(Node("Flatten", {floats({B, s})}).attr(attr_i("axis", 0)).str(), "float[1,B*S]");
  EXPECT_EQ(Node("Flatten", {floats({B, s})}).attr(attr_i("axis", 3)).str(), "float[]");  // invalid: rank unknown
  EXPECT_EQ(Node("Flatten", {i64s({C(3), C(4)})}).str(), "int64[2,1] {3,4}");
  // Pad: begin and end pads per axis (symbolic ones too), the axes input from opset 18.
  EXPECT_EQ(Node("Pad", {floats({B, s, C(8)}), i64s({C(0), C(1), C(0), C(0), C(2), C(0)})}).str(), "float[B,S+3,8]");
  EXPECT_EQ(Node("Pad", {floats({B, s}), i64s({C(0), C(-1), C(0), s})}).str(), "float[B,2*S-1]");
  EXPECT_EQ(Node("Pad", {floats({B, s, C(8)}), i64s({C(1), C(2)}), f32(0), i64s({C(-1)})}).str(), "float[B,S,11]");
  EXPECT_EQ(Node("Pad", {floats({B, s, C(8)}), i64s({C(1), C(2)}), f32(0), tensor(TensorProto::INT64, {C(1)})}).str(),
            "float[?,?,?]");
  EXPECT_EQ(Node("Pad", {floats({B, s}), tensor(TensorProto::INT64, {C(4)})}).str(), "float[?,?]");
  EXPECT_EQ(Node("Pad", {floats({B, C(2)})}).opset(2).attr(attr_is("pads", {1, 0, 1, -1})).str(), "float[B+2,1]");
  // Tile: dims times repeats; elements repeated.
  EXPECT_EQ(Node("Tile", {floats({B, s, C(8)}), i64s({C(1), C(2), C(1)})}).str(), "float[B,2*S,8]");
  EXPECT_EQ(Node("Tile", {floats({C(4) * B, C(32)}), i64s({B, C(1)})}).str(), "float[4*B*B,32]");
  EXPECT_EQ(Node("Tile", {i64s({C(1), C(2)}), i64s({C(2)})}).str(), "int64[4] {1,2,1,2}");
  EXPECT_EQ(Node("Tile", {floats({B}), tensor(TensorProto::INT64, {C(1)})}).str(), "float[?]");
  // Transpose: dims permuted (reversed without perm); elements moved as the runtimes do.
  const Fact table = ints_of(TensorProto::INT64, {C(3), C(2)}, {C(0), C(0), C(0), C(1), C(2), C(3)});
  EXPECT_EQ(Node("Transpose", {table}).attr(attr_is("perm", {1, 0})).str(), "int64[2,3] {0,0,2,0,1,3}");
  EXPECT_EQ(Node("Transpose", {table}).str(), "int64[2,3] {0,0,2,0,1,3}");
  const Fact cube = ints_of(TensorProto::INT64, {C(2), C(3), C(1)}, {C(1), C(2), C(3), s, C(5), C(6)});
  EXPECT_EQ(Node("Transpose", {cube}).attr(attr_is("perm", {1, 2, 0})).str(), "int64[3,1,2] {1,S,2,5,3,6}");
  EXPECT_EQ(Node("Transpose", {floats({B, s, C(8)})}).attr(attr_is("perm", {2, 0, 1})).str(), "float[8,B,S]");
  EXPECT_EQ(Node("Transpose", {floats({B, s})}).attr(attr_is("perm", {0, 0})).str(), "float[]");  // not a permutation: rank unknown
  // DepthToSpace and SpaceToDepth: the runtimes refuse a dim the block does not divide.
  EXPECT_EQ(Node("DepthToSpace", {floats({B, C(16), s, M})}).attr(attr_i("blocksize", 2)).str(), "float[B,4,2*S,2*M]");
  EXPECT_EQ(Node("DepthToSpace", {floats({B, N, s, M})}).attr(attr_i("blocksize", 2)).str(),
            "float[B,floor(N/4),2*S,2*M]");
  EXPECT_EQ(Node("SpaceToDepth", {floats({B, C(3), s, M})}).attr(attr_i("blocksize", 2)).str(),
            "float[B,12,floor(S/2),floor(M/2)]");
}

// ---- Concat, Gather, Slice, Split ------------------------------------------------------

TEST(FoldConcat, ShapeValues) {
  Fact dims = shape_of(kX);
  EXPECT_EQ(Node("Concat", {dims, i64s({C(-1)})}).attr(attr_i("axis", 0)).str(), "int64[4] {N,M,3,-1}");
  EXPECT_EQ(Node("Concat", {i64s({}), i64s({N})}).attr(attr_i("axis", -1)).str(), "int64[1] {N}");
  // Without elements the dims still add up.
  EXPECT_EQ(Node("Concat", {floats({N, C(2)}), floats({M, C(2)})}).attr(attr_i("axis", 0)).str(), "float[M+N,2]");
  EXPECT_EQ(Node("Concat", {floats({N, C(2)}), floats({C(4), C(3)})}).attr(attr_i("axis", 1)).str(), "float[4,5]");
  EXPECT_EQ(Node("Concat", {floats({N, C(2)}), Fact()}).attr(attr_i("axis", 1)).str(), "float[N,?]");
  EXPECT_EQ(Node("Concat", {ints_of(TensorProto::INT64, {C(2), C(1)}, {C(1), C(2)}),
                            ints_of(TensorProto::INT64, {C(2), C(2)}, {C(3), C(4), C(5), C(6)})})
                .attr(attr_i("axis", 1))
                .str(),
            "int64[2,3] {1,3,4,2,5,6}");
  // A part whose elements are not known leaves only its places unknown: the shape value
  // of a Reshape to [batch, ?, 4, 16] keeps batch, 4 and 16.
  EXPECT_EQ(Node("Concat", {i64s({N}), tensor(TensorProto::INT64, {C(1)}), i64s({C(4), C(16)})}).attr(attr_i("axis", 0)).str(),
            "int64[4] {N,?,4,16}");
  EXPECT_EQ(Node("Reshape", {floats({N, M, C(64)}), Node("Concat", {i64s({N}), tensor(TensorProto::INT64, {C(1)}),
                                                                    i64s({C(4), C(16)})})
                                                         .attr(attr_i("axis", 0))
                                                         .out()})
                .str(),
            "float[N,?,4,16]");
  // Nothing is kept of floating parts, nor of a bool one with a place unknown.
  EXPECT_EQ(Node("Concat", {f32(std::vector<double>{1}), floats({C(1)})}).attr(attr_i("axis", 0)).str(), "float[2]");
  EXPECT_EQ(Node("Concat", {bools({C(1)}, {C(1)}), tensor(TensorProto::BOOL, {C(1)})}).attr(attr_i("axis", 0)).str(),
            "bool[2]");
}

TEST(FoldGather, ShapeValueWithNegativeIndex) {
  Fact dims = shape_of(kX);
  EXPECT_EQ(Node("Gather", {dims, i64(C(-1))}).str(), "int64 {3}");
  EXPECT_EQ(Node("Gather", {dims, i64(C(0))}).attr(attr_i("axis", 0)).str(), "int64 {N}");
  EXPECT_EQ(Node("Gather", {dims, i64s({C(1), C(-3)})}).str(), "int64[2] {M,N}");
  // Out of range: invalid, no elements.
  EXPECT_EQ(Node("Gather", {dims, i64(C(3))}).str(), "int64");
  // Shapes: data[:axis] + indices + data[axis+1:].
  EXPECT_EQ(Node("Gather", {kX, tensor(TensorProto::INT64, {C(2), C(5)})}).attr(attr_i("axis", 1)).str(),
            "float[N,2,5,3]");
  EXPECT_EQ(Node("Gather", {ints_of(TensorProto::INT64, {C(2), C(2)}, {C(1), C(2), C(3), C(4)}), i64(C(-1))})
                .attr(attr_i("axis", 1))
                .str(),
            "int64[2] {2,4}");
}

TEST(FoldScatterND, WritesUpdatesIntoKnownData) {
  Fact dims = shape_of(kX);  // {N,M,3}
  auto idx = [](std::vector<Dim> v) {
    const Dim n = C(static_cast<int64_t>(v.size()));
    return ints_of(TensorProto::INT64, {n, C(1)}, std::move(v));
  };
  EXPECT_EQ(Node("ScatterND", {dims, idx({C(1)}), i64s({C(4)})}).str(), "int64[3] {N,4,3}");
  EXPECT_EQ(Node("ScatterND", {dims, idx({C(-1), C(0)}), i64s({C(7), C(2)})}).str(), "int64[3] {2,M,7}");
  EXPECT_EQ(Node("ScatterND", {reals(TensorProto::FLOAT, {C(2), C(2)}, {0, 0, 0, 0}), idx({C(1)}),
                               reals(TensorProto::FLOAT, {C(1), C(2)}, {5, 6})})
                .str(),
            "float[2,2] {0,0,5,6}");
  // Not one answer, or ScatterND would fail: the data's shape only.
  EXPECT_EQ(Node("ScatterND", {dims, idx({C(1), C(1)}), i64s({C(4), C(5)})}).str(), "int64[3]");  // twice
  EXPECT_EQ(Node("ScatterND", {dims, idx({C(3)}), i64s({C(4)})}).str(), "int64[3]");                // out of range
  EXPECT_EQ(Node("ScatterND", {dims, idx({C(1)}), i64s({C(4), C(5)})}).str(), "int64[3]");          // updates' shape
  EXPECT_EQ(Node("ScatterND", {dims, idx({C(1)}), i64s({C(4)})}).attr(attr_s("reduction", "add")).str(), "int64[3]");
  EXPECT_EQ(Node("ScatterND", {dims, idx({N}), i64s({C(4)})}).str(), "int64[3]");  // index not known
}

TEST(FoldSlice, ShapeValueSlices) {
  Fact dims = shape_of(kX);
  auto slice = [&](Dim start, Dim end) { return Node("Slice", {dims, i64s({start}), i64s({end})}); };
  EXPECT_EQ(slice(C(0), C(1)).str(), "int64[1] {N}");
  EXPECT_EQ(slice(C(1), C(kMax)).str(), "int64[2] {M,3}");
  EXPECT_EQ(slice(C(-2), C(kMax)).str(), "int64[2] {M,3}");
  EXPECT_EQ(slice(C(-100), C(-1)).str(), "int64[2] {N,M}");
  EXPECT_EQ(slice(C(2), C(1)).str(), "int64[0] {}");
  // Negative steps: reversed, start clamped to d-1, end to -1.
  EXPECT_EQ(Node("Slice", {dims, i64s({C(-1)}), i64s({C(kMin)}), i64s({C(0)}), i64s({C(-1)})}).str(),
            "int64[3] {3,M,N}");
  EXPECT_EQ(Node("Slice", {dims, i64s({C(kMax)}), i64s({C(0)}), i64s({C(0)}), i64s({C(-2)})}).str(),
            "int64[1] {3}");
  EXPECT_EQ(Node("Slice", {i64s({C(0), C(1), C(2), C(3), C(4)}), i64s({C(0)}), i64s({C(5)})}).omitted().input(i64s({C(2)}))
                .str(),
            "int64[3] {0,2,4}");
}

TEST(FoldSlice, Tensors) {
  Fact x = floats({N, C(10), C(4)});
  auto starts = i64s({C(2), C(1)}), ends = i64s({C(kMax), C(-1)}), axes = i64s({C(1), C(-1)});
  EXPECT_EQ(Node("Slice", {x, starts, ends, axes}).str(), "float[N,8,2]");
  // A whole symbolic axis, as torch exports x[:]; other bounds clamp by min and max.
  EXPECT_EQ(Node("Slice", {x, i64s({C(0)}), i64s({C(kMax)})}).str(), "float[N,10,4]");
  EXPECT_EQ(Node("Slice", {x, i64s({C(0)}), i64s({N})}).str(), "float[N,10,4]");
  EXPECT_EQ(Node("Slice", {x, i64s({C(-1)}), i64s({C(kMin)}), i64s({C(0)}), i64s({C(-1)})}).str(), "float[N,10,4]");
  EXPECT_EQ(Node("Slice", {x, i64s({C(1)}), i64s({C(kMax)})}).str(), "float[max(N,1)-1,10,4]");
  // Bounds not known: the rank, with the sliced axes unknown.
  EXPECT_EQ(Node("Slice", {x, tensor(TensorProto::INT64, {C(1)}), i64s({C(1)}), i64s({C(2)})}).str(), "float[N,10,?]");
  EXPECT_EQ(Node("Slice", {x, i64s({C(0)}), i64s({C(1)}), tensor(TensorProto::INT64, {C(1)})}).str(), "float[?,?,?]");
  // An empty axis stays empty, backward too.
  EXPECT_EQ(Node("Slice", {floats({C(0)}), i64s({C(-1)}), i64s({C(kMin)}), i64s({C(0)}), i64s({C(-1)})}).str(),
            "float[0]");
  // Floating elements are sliced too.
  EXPECT_EQ(Node("Slice", {f32({1, 2, 3}), i64s({C(1)}), i64s({C(3)})}).str(), "float[2] {2,3}");
}

TEST(FoldSlice, SymbolicBounds) {
  Fact x = floats({N, C(4)});
  const Dim half = Dim::floor_div(N, C(2));
  // Halves, as torch slices x[:N//2] and x[N//2:], and their lengths add up to N.
  EXPECT_EQ(Node("Slice", {x, i64s({C(0)}), i64s({half})}).str(), "float[floor(N/2),4]");
  EXPECT_EQ(Node("Slice", {x, i64s({half}), i64s({C(kMax)})}).str(), "float[-floor(N/2)+N,4]");
  const Fact second = Node("Slice", {x, i64s({half}), i64s({C(kMax)})}).out();
  ASSERT_TRUE(second.shape);
  EXPECT_EQ((*second.shape)[0] + half, N);
  // A step: ceil of the span.
  EXPECT_EQ(Node("Slice", {x, i64s({C(0)}), i64s({C(kMax)}), i64s({C(0)}), i64s({C(2)})}).str(), "float[floor((N+1)/2),4]");
  // x[1:] and x[:-1] are N-1 long only when N is at least 1 (else empty: max(N,1)-1),
  // x[-1:] is 1 long.
  EXPECT_EQ(Node("Slice", {x, i64s({C(1)}), i64s({C(kMax)})}).str(), "float[max(N,1)-1,4]");
  EXPECT_FALSE(Node("Slice", {x, i64s({C(1)}), i64s({C(kMax)})}).relied());
  Node tail("Slice", {x, i64s({C(1)}), i64s({C(kMax)})});
  tail.positive_dims();
  EXPECT_EQ(tail.str(), "float[N-1,4]");
  EXPECT_TRUE(tail.relied());
  Node last("Slice", {x, i64s({C(-1)}), i64s({C(kMax)})});
  last.positive_dims();
  EXPECT_EQ(last.str(), "float[1,4]");
  Node front("Slice", {x, i64s({C(0)}), i64s({C(-1)})});
  front.positive_dims();
  EXPECT_EQ(front.str(), "float[N-1,4]");
  // A bound whose place is not decided: a min (N - M may be either sign), x[:S] of a
  // 128-long table min(S,128); a start of unknown sign: unknown.
  EXPECT_EQ(Node("Slice", {x, i64s({C(0)}), i64s({M})}).str(), "float[min(M,N),4]");
  EXPECT_EQ(Node("Slice", {floats({C(1), C(128)}), i64s({C(0)}), i64s({S("S")}), i64s({C(1)})}).str(), "float[1,min(S,128)]");
  EXPECT_EQ(Node("Slice", {x, i64s({M - N}), i64s({C(kMax)})}).str(), "float[?,4]");
  // From a symbol to the end, and from the back by a symbol (S >= 1 needed: -S < 0).
  EXPECT_EQ(Node("Slice", {x, i64s({M}), i64s({C(kMax)})}).str(), "float[max(-M+N,0),4]");
  EXPECT_EQ(Node("Slice", {x, i64s({-M}), i64s({C(kMax)})}).str(), "float[?,4]");
  Node back("Slice", {x, i64s({-M}), i64s({C(kMax)})});
  back.positive_dims();
  EXPECT_EQ(back.str(), "float[min(M,N),4]");
  EXPECT_TRUE(back.relied());
  // Backward steps: from the end down with step -2, and a reversed middle part.
  Node down("Slice", {x, i64s({C(-1)}), i64s({C(kMin)}), i64s({C(0)}), i64s({C(-2)})});
  down.positive_dims();
  EXPECT_EQ(down.str(), "float[floor((N+1)/2),4]");
  EXPECT_EQ(Node("Slice", {x, i64s({C(-1)}), i64s({C(kMin)}), i64s({C(0)}), i64s({C(-2)})}).str(),
            "float[floor((N+1)/2),4]");  // for N = 0 too
  EXPECT_EQ(Node("Slice", {x, i64s({C(2)}), i64s({C(kMin)}), i64s({C(0)}), i64s({C(-1)})}).str(),
            "float[min(N,3),4]");
  Node middle("Slice", {floats({C(10)}), i64s({N}), i64s({C(2)}), i64s({C(0)}), i64s({C(-1)})});
  EXPECT_EQ(middle.str(), "float[max(min(N,9),2)-2]");
  // Past the end: clamped.
  EXPECT_EQ(Node("Slice", {x, i64s({C(0)}), i64s({N + C(3)})}).str(), "float[N,4]");
}

TEST(FoldSlice, AttributesBeforeOpset10) {
  Fact dims = shape_of(kX);
  EXPECT_EQ(Node("Slice", {dims}).opset(9).attr(attr_is("starts", {1})).attr(attr_is("ends", {kMax})).str(),
            "int64[2] {M,3}");
  EXPECT_EQ(Node("Slice", {floats({C(5), C(6)})})
                .opset(1)
                .attr(attr_is("starts", {1}))
                .attr(attr_is("ends", {-1}))
                .attr(attr_is("axes", {1}))
                .str(),
            "float[5,4]");
}

TEST(FoldSplit, PartsAndOpsets) {
  Fact x = ints_of(TensorProto::INT64, {C(5)}, {C(0), C(1), C(2), C(3), C(4)});
  auto out = Node("Split", {x, i64s({C(2), C(3)})}).outputs(2).all();
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].str(), "int64[2] {0,1}");
  EXPECT_EQ(out[1].str(), "int64[3] {2,3,4}");
  // Opset 11: the split attribute.
  out = Node("Split", {x}).opset(11).attr(attr_is("split", {4, 1})).outputs(2).all();
  EXPECT_EQ(out[1].str(), "int64[1] {4}");
  // Equal parts; uneven with num_outputs (opset 18): ceil-sized, the last smaller.
  out = Node("Split", {floats({C(2) * N, C(6)})}).attr(attr_i("axis", 1)).outputs(3).all();
  EXPECT_EQ(out[2].str(), "float[2*N,2]");
  out = Node("Split", {floats({C(2) * N, C(6)})}).outputs(2).all();
  EXPECT_EQ(out[1].str(), "float[N,6]");
  out = Node("Split", {x}).attr(attr_i("num_outputs", 2)).outputs(2).all();
  EXPECT_EQ(out[0].str(), "int64[3] {0,1,2}");
  EXPECT_EQ(out[1].str(), "int64[2] {3,4}");
  // Uneven without num_outputs (opset 13): invalid, the axis unknown.
  out = Node("Split", {x}).opset(13).outputs(2).all();
  EXPECT_EQ(out[0].str(), "int64[?]");
  // A symbolic dim in halves (num_outputs): ceil(N/2) and the rest, adding up to N; in
  // three parts the last one could be negative (N = 1), so nothing; equal parts before
  // opset 18 only where they come out even.
  out = Node("Split", {floats({N})}).attr(attr_i("num_outputs", 2)).outputs(2).all();
  EXPECT_EQ(out[0].str(), "float[floor((N+1)/2)]");
  ASSERT_TRUE(out[0].shape && out[1].shape);
  EXPECT_EQ((*out[0].shape)[0] + (*out[1].shape)[0], N);
  out = Node("Split", {floats({N})}).attr(attr_i("num_outputs", 3)).outputs(3).all();
  EXPECT_EQ(out[2].str(), "float[?]");
  // Equal parts without num_outputs: a runtime refuses an N that 2 does not divide, so
  // floor(N/2) is exact wherever it runs.
  out = Node("Split", {floats({N})}).opset(13).outputs(2).all();
  EXPECT_EQ(out[0].str(), "float[floor(N/2)]");
}

// ---- Conv, pools, Resize ------------------------------------------------------------------

// A window wider than its padded input: the runtimes truncate toward zero where ONNX's
// definition floors (fold_spatial.cc, window_count).
TEST(FoldSpatial, WindowWiderThanInput) {
  const Dim H = Dim::symbol("H");
  const Fact x = floats({N, C(1), H});
  auto pool = [&](int64_t kernel, int64_t stride) {
    return Node("MaxPool", {x}).attr(attr_is("kernel_shape", {kernel})).attr(attr_is("strides", {stride}));
  };
  // A 2-wide pool of stride 2: 1 at H = 1 (the finding), exact, under H >= 1 only.
  Node two = pool(2, 2).positive_dims();
  EXPECT_EQ(two.str(), "float[N,1,floor(max(H,2)/2)]");
  EXPECT_TRUE(two.relied());
  // Stride 1 needs no division.
  EXPECT_EQ(pool(3, 1).str(), "float[N,1,H-2]");
  // Kernel 3, stride 2: the whole truncation where nobody records a condition, or where
  // symbols may be 0 (then the pad-1 stride-2 convolution's span H - 1 may be -1 too).
  EXPECT_EQ(pool(3, 2).positive_dims().str(), "float[N,1,-floor((max(-H,-3)+1)/2)+floor((max(H,3)+1)/2)-2]");
  std::vector<std::string> conditions;
  EXPECT_EQ(pool(3, 2).conditions(&conditions).str(), "float[N,1,-floor((max(-H,-3)+1)/2)+floor((max(H,3)+1)/2)-2]");
  EXPECT_TRUE(conditions.empty());
  // The definition's floor, with the condition that makes it true, where one is recorded.
  EXPECT_EQ(pool(3, 2).positive_dims().conditions(&conditions).str(), "float[N,1,floor((H+1)/2)-1]");
  EXPECT_EQ(conditions, std::vector<std::string>{"H >= 3"});
  // Padded to fit: no condition.
  conditions.clear();
  EXPECT_EQ(pool(3, 2).attr(attr_is("pads", {1, 1})).positive_dims().conditions(&conditions).str(), "float[N,1,floor((H+1)/2)]");
  EXPECT_TRUE(conditions.empty());
  // Constants: ONNX's own arithmetic, 1 window of 2 over 1, 0 windows of 4 over 1 (and no
  // condition recorded of a constant).
  EXPECT_EQ(Node("MaxPool", {floats({C(1), C(1), C(1)})}).attr(attr_is("kernel_shape", {2})).attr(attr_is("strides", {2})).str(),
            "float[1,1,1]");
  EXPECT_EQ(Node("MaxPool", {floats({C(1), C(1), C(1)})})
                .attr(attr_is("kernel_shape", {4}))
                .attr(attr_is("strides", {2}))
                .positive_dims()
                .conditions(&conditions)
                .str(),
            "float[1,1,0]");
  // A dim that never reaches the window: no condition, the whole truncation.
  const Fact small = floats({N, C(1), Dim::min(H, Dim::constant(2))});
  EXPECT_EQ(Node("MaxPool", {small}).attr(attr_is("kernel_shape", {5})).attr(attr_is("strides", {2})).positive_dims().conditions(&conditions).str(),
            Node("MaxPool", {small}).attr(attr_is("kernel_shape", {5})).attr(attr_is("strides", {2})).positive_dims().str());
  EXPECT_TRUE(conditions.empty());
}

TEST(FoldSpatial, ConvolutionsOverSymbolicDims) {
  const Dim H = Dim::symbol("H"), W = Dim::symbol("W");
  Fact x = floats({N, C(3), H, W});
  Fact w = floats({C(16), C(3), C(3), C(3)});
  // A stride-1 "same" convolution keeps the dims; stride 2 halves them, rounding up
  // (where H >= 1: at H = 0 the runtimes' truncation gives 1, WindowWiderThanInput).
  EXPECT_EQ(Node("Conv", {x, w}).attr(attr_is("pads", {1, 1, 1, 1})).str(), "float[N,16,H,W]");
  EXPECT_EQ(Node("Conv", {x, w}).attr(attr_is("pads", {1, 1, 1, 1})).attr(attr_is("strides", {2, 2})).positive_dims().str(),
            "float[N,16,floor((H+1)/2),floor((W+1)/2)]");
  EXPECT_EQ(Node("Conv", {x, w}).str(), "float[N,16,H-2,W-2]");
  EXPECT_EQ(Node("Conv", {x, w}).attr(attr_is("dilations", {2, 1})).str(), "float[N,16,H-4,W-2]");
  // auto_pad: SAME is ceil(D / stride), VALID no pads.
  AttributeProto same;
  same.set_name("auto_pad");
  same.set_type(AttributeProto::STRING);
  same.set_s("SAME_UPPER");
  EXPECT_EQ(Node("Conv", {x, w}).attr(same).attr(attr_is("strides", {2, 2})).str(),
            "float[N,16,floor((H+1)/2),floor((W+1)/2)]");
  // ResNet's stem: conv 7x7 stride 2 pad 3, then a 3x3 stride-2 pool: one floor.
  Fact stem = Node("Conv", {floats({N, C(3), H, H}), floats({C(64), C(3), C(7), C(7)})})
                  .attr(attr_is("pads", {3, 3, 3, 3}))
                  .attr(attr_is("strides", {2, 2}))
                  .positive_dims()
                  .out();
  EXPECT_EQ(stem.str(), "float[N,64,floor((H+1)/2),floor((H+1)/2)]");
  auto pooled = Node("MaxPool", {stem})
                    .attr(attr_is("kernel_shape", {3, 3}))
                    .attr(attr_is("strides", {2, 2}))
                    .attr(attr_is("pads", {1, 1, 1, 1}))
                    .outputs(2)
                    .positive_dims()
                    .all();
  EXPECT_EQ(pooled[0].str(), "float[N,64,floor((H+3)/4),floor((H+3)/4)]");
  EXPECT_EQ(pooled[1].str(), "int64[N,64,floor((H+3)/4),floor((H+3)/4)]");
  // Constant dims agree with ONNX's own arithmetic.
  EXPECT_EQ(Node("AveragePool", {floats({C(1), C(2), C(7)})}).attr(attr_is("kernel_shape", {2})).attr(attr_is("strides", {2})).str(),
            "float[1,2,3]");
  // ceil_mode: windows rounded up, less one that would start in the right padding.
  EXPECT_EQ(Node("MaxPool", {floats({N, C(2), H})}).attr(attr_is("kernel_shape", {2})).attr(attr_i("ceil_mode", 1)).str(),
            "float[N,2,H-1]");
  EXPECT_EQ(Node("MaxPool", {floats({N, C(2), H})})
                .attr(attr_is("kernel_shape", {3}))
                .attr(attr_is("strides", {2}))
                .attr(attr_i("ceil_mode", 1))
                .str(),
            "float[N,2,floor(H/2)]");
  EXPECT_EQ(Node("AveragePool", {floats({N, C(2), H})})
                .attr(attr_is("kernel_shape", {3}))
                .attr(attr_is("strides", {2}))
                .attr(attr_is("pads", {1, 1}))
                .attr(attr_i("ceil_mode", 1))
                .str(),
            "float[N,2,floor(H/2)+1]");
  // The same arithmetic as ONNX's on constants (7: ceil(4/2)+1 = 3; 6 with pads 1: the
  // last window would start in the padding).
  EXPECT_EQ(Node("MaxPool", {floats({C(1), C(2), C(7)})})
                .attr(attr_is("kernel_shape", {3}))
                .attr(attr_is("strides", {2}))
                .attr(attr_i("ceil_mode", 1))
                .str(),
            "float[1,2,3]");
  EXPECT_EQ(Node("MaxPool", {floats({C(1), C(2), C(6)})})
                .attr(attr_is("kernel_shape", {2}))
                .attr(attr_is("strides", {2}))
                .attr(attr_is("pads", {1, 1}))
                .attr(attr_i("ceil_mode", 1))
                .str(),
            "float[1,2,4]");
  EXPECT_EQ(Node("MaxPool", {floats({N, C(2), H})})
                .attr(attr_is("kernel_shape", {2}))
                .attr(attr_s("auto_pad", "SAME_UPPER"))
                .attr(attr_i("ceil_mode", 1))
                .str(),
            "float[N,2,?]");
  // A kernel that is not known: nothing.
  EXPECT_EQ(Node("Conv", {x, floats({C(16), C(3), N, C(3)})}).str(), "?");
  // ConvTranspose: stride*(D-1) + dilation*(k-1) + 1 - pads (+ output_padding).
  EXPECT_EQ(Node("ConvTranspose", {floats({N, C(16), H}), floats({C(16), C(8), C(4)})})
                .attr(attr_is("strides", {2}))
                .attr(attr_is("pads", {1, 1}))
                .str(),
            "float[N,8,2*H]");
}

TEST(FoldSpatial, ResizeByScalesAndSizes) {
  const Dim H = Dim::symbol("H");
  Fact x = floats({N, C(3), H, H});
  Fact roi = floats({C(0)});
  // Scales: floor(D * scale) for dyadic scales; 1/3 is not exact in floating point.
  EXPECT_EQ(Node("Resize", {x, roi, f32({1, 1, 2, 0.5})}).str(), "float[N,3,2*H,floor(H/2)]");
  EXPECT_EQ(Node("Resize", {x, roi, f32({1, 1, 1.5, 1.0 / 3})}).str(), "float[N,3,floor(H/2)+H,?]");
  // Sizes, symbolic ones included.
  EXPECT_EQ(Node("Resize", {x, roi}).omitted().input(i64s({N, C(3), M, C(8)})).str(), "float[N,3,M,8]");
  // Upsample-9: scales as the second input.
  EXPECT_EQ(Node("Upsample", {x, f32({1, 1, 2, 2})}).opset(9).str(), "float[N,3,2*H,2*H]");
}

// ---- Squeeze, Unsqueeze ----------------------------------------------------------------

TEST(FoldSqueeze, AxesAttributeAtOpset11) {
  Fact x = floats({N, C(1), C(3), C(1)});
  EXPECT_EQ(Node("Squeeze", {x}).opset(11).attr(attr_is("axes", {1, -1})).str(), "float[N,3]");
  // Opset 11 reads no axes input.
  EXPECT_EQ(Node("Squeeze", {x, i64s({C(1)})}).opset(11).attr(attr_is("axes", {3})).str(), "float[N,1,3]");
  // No axes: every 1 goes, which needs every dim known.
  EXPECT_EQ(Node("Squeeze", {floats({C(1), C(3), C(1)})}).opset(11).str(), "float[3]");
  EXPECT_EQ(Node("Squeeze", {x}).opset(11).str(), "float[]");
  // Squeezing a dim that is not 1 is invalid.
  EXPECT_EQ(Node("Squeeze", {x}).opset(11).attr(attr_is("axes", {2})).str(), "float[]");
  EXPECT_EQ(Node("Unsqueeze", {i64(N)}).opset(11).attr(attr_is("axes", {0})).str(), "int64[1] {N}");
  EXPECT_EQ(Node("Unsqueeze", {x}).opset(11).attr(attr_is("axes", {0, -1})).str(), "float[1,N,1,3,1,1]");
}

TEST(FoldSqueeze, AxesInputAtOpset13) {
  Fact x = floats({N, C(1), C(3), C(1)});
  EXPECT_EQ(Node("Squeeze", {x, i64s({C(1), C(-1)})}).opset(13).str(), "float[N,3]");
  EXPECT_EQ(Node("Squeeze", {i64s({N})}).opset(13).input(i64s({C(0)})).str(), "int64 {N}");
  // The attribute means nothing from opset 13; an omitted input squeezes every 1.
  EXPECT_EQ(Node("Squeeze", {floats({C(1), C(3)})}).opset(13).attr(attr_is("axes", {5})).str(), "float[3]");
  // Axes not known: nothing about the shape.
  EXPECT_EQ(Node("Squeeze", {x, tensor(TensorProto::INT64, {C(1)})}).opset(13).str(), "float[]");
  EXPECT_EQ(Node("Unsqueeze", {i64(N), i64s({C(0)})}).opset(13).str(), "int64[1] {N}");
  EXPECT_EQ(Node("Unsqueeze", {x, i64s({C(-1), C(1)})}).opset(13).str(), "float[N,1,1,3,1,1]");
  EXPECT_EQ(Node("Unsqueeze", {x, i64s({C(1), C(1)})}).opset(13).str(), "float[]");  // duplicate axes
  EXPECT_EQ(Node("Unsqueeze", {x}).opset(13).attr(attr_is("axes", {0})).str(), "float[]");
}

// ---- Reshape, Expand -------------------------------------------------------------------

TEST(FoldReshape, ZeroAndMinusOne) {
  EXPECT_EQ(Node("Reshape", {floats({N, C(3), C(4)}), i64s({C(-1), C(12)})}).str(), "float[N,12]");
  EXPECT_EQ(Node("Reshape", {floats({N, C(3), C(4)}), i64s({C(0), C(-1)})}).str(), "float[N,12]");
  EXPECT_EQ(Node("Reshape", {floats({N, M, C(2)}), i64s({N, C(-1)})}).str(), "float[N,2*M]");
  EXPECT_EQ(Node("Reshape", {floats({C(2), C(3), C(4)}), i64s({C(0), C(0), C(-1), C(1)})}).str(), "float[2,3,4,1]");
  // 6N/4 is exact wherever the node runs (N even): floor(3N/2).
  EXPECT_EQ(Node("Reshape", {floats({N, C(6)}), i64s({C(-1), C(4)})}).str(), "float[floor(N/2)+N,4]");
  // A monomial divides what is left: [4*B,S,S] to [B,4,S,-1] is S, [B*K,8] to [B,-1,8] K.
  EXPECT_EQ(Node("Reshape", {floats({C(4) * B, S("S"), S("S")}), i64s({B, C(4), S("S"), C(-1)})}).str(),
            "float[B,4,S,S]");
  EXPECT_EQ(Node("Reshape", {floats({B * S("K"), C(8)}), i64s({B, C(-1), C(8)})}).str(), "float[B,K,8]");
  EXPECT_EQ(Node("Reshape", {floats({B + C(1), C(8)}), i64s({B, C(-1)})}).str(), "float[B,?]");
  // allowzero=1: 0 is a dim of 0.
  EXPECT_EQ(Node("Reshape", {floats({C(0), C(3)}), i64s({C(0), C(3)})}).attr(attr_i("allowzero", 1)).str(),
            "float[0,3]");
  // Two -1s are invalid.
  EXPECT_EQ(Node("Reshape", {floats({C(4)}), i64s({C(-1), C(-1)})}).str(), "float[]");
  // Only the target's length known: the rank.
  EXPECT_EQ(Node("Reshape", {kX, tensor(TensorProto::INT64, {C(2)})}).str(), "float[?,?]");
  // Elements carry over.
  EXPECT_EQ(Node("Reshape", {shape_of(kX), i64s({C(1), C(-1)})}).str(), "int64[1,3] {N,M,3}");
  // Before opset 5: the shape attribute.
  EXPECT_EQ(Node("Reshape", {floats({C(2), C(6)})}).opset(4).attr(attr_is("shape", {3, -1})).str(), "float[3,4]");
}

TEST(FoldReshape, ConcatOfShapeSlicesGivesSymbolicShape) {
  // torchlib's view: Concat(Shape(x)[0:1], Shape(x)[1:2] * 2) -> Reshape.
  Fact x = floats({N, M, C(2)});
  Fact dims = shape_of(x);
  Fact first = Node("Slice", {dims, i64s({C(0)}), i64s({C(1)})}).out();
  Fact second = Node("Slice", {dims, i64s({C(1)}), i64s({C(2)})}).out();
  Fact doubled = Node("Mul", {second, i64s({C(2)})}).out();
  Fact target = Node("Concat", {first, doubled}).attr(attr_i("axis", 0)).out();
  EXPECT_EQ(target.str(), "int64[2] {N,2*M}");
  EXPECT_EQ(Node("Reshape", {x, target}).str(), "float[N,2*M]");
  // And the -1 form of the same.
  Fact minus_one = Node("Concat", {first, i64s({C(-1)})}).attr(attr_i("axis", 0)).out();
  EXPECT_EQ(Node("Reshape", {x, minus_one}).str(), "float[N,2*M]");
}

// An empty output needs no elements moved: its other dims may be huge (issue 10: the
// broadcast map was built per axis, 8 bytes per index of a 2^40 dim, beside the 0).
TEST(FoldExpand, EmptyOutputBesideAHugeDim) {
  const int64_t huge = int64_t{1} << 40;
  const Fact out = Node("Expand", {i64s({C(7)}), i64s({C(0), C(huge)})}).out();
  EXPECT_EQ(out.str(), "int64[0," + std::to_string(huge) + "] {}");
  EXPECT_EQ(Node("Add", {i64s({C(7)}), ints_of(TensorProto::INT64, {C(huge), C(0)}, {})}).str(),
            "int64[" + std::to_string(huge) + ",0] {}");
}

TEST(FoldExpand, SymbolicTargets) {
  EXPECT_EQ(Node("Expand", {floats({C(1), C(3)}), i64s({N, C(1)})}).str(), "float[N,3]");
  EXPECT_EQ(Node("Expand", {floats({C(3)}), shape_of(kX)}).str(), "float[N,M,3]");
  // Unknown target elements: known only where x has a dim other than 1.
  EXPECT_EQ(Node("Expand", {floats({C(1), C(3)}), i64s({Dim(), Dim()})}).str(), "float[?,3]");
  EXPECT_EQ(Node("Expand", {floats({C(3)}), tensor(TensorProto::INT64, {C(2)})}).str(), "float[?,3]");
  // Elements broadcast.
  EXPECT_EQ(Node("Expand", {i64s({N, C(2)}), i64s({C(2), C(1)})}).str(), "int64[2,2] {N,2,N,2}");
  EXPECT_EQ(Node("Expand", {f32(1.5), i64s({C(3)})}).str(), "float[3] {1.5,1.5,1.5}");
}

// ---- Range -----------------------------------------------------------------------------

TEST(FoldRange, ConstantAndSymbolic) {
  EXPECT_EQ(Node("Range", {i64(C(0)), i64(C(10)), i64(C(3))}).str(), "int64[4] {0,3,6,9}");
  EXPECT_EQ(Node("Range", {i64(C(5)), i64(C(0)), i64(C(-2))}).str(), "int64[3] {5,3,1}");
  EXPECT_EQ(Node("Range", {i64(C(5)), i64(C(0)), i64(C(1))}).str(), "int64[0] {}");
  // limit - start known non-negative: symbolic length.
  EXPECT_EQ(Node("Range", {i64(C(0)), i64(N), i64(C(1))}).str(), "int64[N]");
  EXPECT_EQ(Node("Range", {i64(N), i64(N + M), i64(C(1))}).str(), "int64[M]");
  EXPECT_EQ(Node("Range", {i64(C(0)), i64(C(2) * N), i64(C(2))}).str(), "int64[N]");
  EXPECT_EQ(Node("Range", {i64(N), i64(N + C(3)), i64(C(1))}).str(), "int64[3] {N,N+1,N+2}");
  // N-1 may be negative (N = 0): a max, N-1 where N >= 1 is assumed.
  EXPECT_EQ(Node("Range", {i64(C(1)), i64(N), i64(C(1))}).str(), "int64[max(N,1)-1]");
  Node from_one("Range", {i64(C(1)), i64(N), i64(C(1))});
  from_one.positive_dims();
  EXPECT_EQ(from_one.str(), "int64[N-1]");
  EXPECT_TRUE(from_one.relied());
  EXPECT_EQ(Node("Range", {i64(M), i64(N), i64(C(2))}).str(), "int64[max(floor((M+N+1)/2)-M,0)]");
  EXPECT_EQ(Node("Range", {i64(C(0)), i64(N), i64(C(2))}).str(), "int64[floor((N+1)/2)]");  // ceil(N/2)
  EXPECT_EQ(Node("Range", {i64(C(0)), i64(C(3)), i64(C(0))}).str(), "int64[?]");
  // Floating: the length, as ONNX computes it; the elements only where each is an integer
  // the type holds exactly (runtimes accumulate them, ONNX's definition multiplies).
  EXPECT_EQ(Node("Range", {f32(0), f32(4), f32(1)}).str(), "float[4] {0,1,2,3}");
  EXPECT_EQ(Node("Range", {f32(6), f32(0), f32(-2)}).str(), "float[3] {6,4,2}");
  EXPECT_EQ(Node("Range", {f32(0.5), f32(3), f32(1)}).str(), "float[3]");
  EXPECT_EQ(Node("Range", {f32(16777215), f32(16777218), f32(1)}).str(), "float[3]");  // past 2^24
  EXPECT_EQ(Node("Range", {f32(0), f32(1), f32(0.25)}).str(), "float[4]");
  EXPECT_EQ(Node("Range", {f32(1), f32(0), f32(0.25)}).str(), "float[0]");
  EXPECT_EQ(Node("Range", {ints_of(TensorProto::INT32, {}, {C(0)}), ints_of(TensorProto::INT32, {}, {C(3)}),
                           ints_of(TensorProto::INT32, {}, {C(1)})})
                .str(),
            "int32[3] {0,1,2}");
}

// ---- ReduceSum, ReduceProd -------------------------------------------------------------

TEST(FoldReduce, SumAxesByOpset) {
  Fact x = ints_of(TensorProto::INT64, {C(2), C(3)}, {C(1), C(2), C(3), C(4), C(5), C(6)});
  // Opset 11: axes attribute.
  EXPECT_EQ(Node("ReduceSum", {x}).opset(11).attr(attr_is("axes", {1})).str(), "int64[2,1] {6,15}");
  EXPECT_EQ(Node("ReduceSum", {x}).opset(11).attr(attr_is("axes", {0})).attr(attr_i("keepdims", 0)).str(),
            "int64[3] {5,7,9}");
  // Opset 13: axes input; none means all, or nothing with noop_with_empty_axes.
  EXPECT_EQ(Node("ReduceSum", {x, i64s({C(-1)})}).opset(13).attr(attr_i("keepdims", 0)).str(), "int64[2] {6,15}");
  EXPECT_EQ(Node("ReduceSum", {x}).opset(13).str(), "int64[1,1] {21}");
  EXPECT_EQ(Node("ReduceSum", {x}).opset(13).attr(attr_i("noop_with_empty_axes", 1)).out(), x);
  EXPECT_EQ(Node("ReduceSum", {x, tensor(TensorProto::INT64, {C(1)})}).opset(13).str(), "int64[?,?]");
  // Symbolic elements and shapes.
  EXPECT_EQ(Node("ReduceSum", {i64s({N, M, C(1)})}).attr(attr_i("keepdims", 0)).str(), "int64 {M+N+1}");
  EXPECT_EQ(Node("ReduceSum", {kX, i64s({C(1)})}).str(), "float[N,1,3]");
  // Integral floats sum exactly in any order.
  EXPECT_EQ(Node("ReduceSum", {f32({1, 2, 3})}).attr(attr_i("keepdims", 0)).str(), "float {6}");
  EXPECT_EQ(Node("ReduceSum", {f32({0.1, 0.2})}).attr(attr_i("keepdims", 0)).str(), "float");
}

TEST(FoldReduce, ProdAxesInputFromOpset18) {
  Fact dims = shape_of(kX);
  // The element count of x from its shape value.
  Fact count = Node("ReduceProd", {dims}).opset(18).attr(attr_i("keepdims", 0)).out();
  ASSERT_TRUE(count.ints);
  EXPECT_EQ((*count.ints)[0], Dim::parse("3*M*N"));
  Fact x = ints_of(TensorProto::INT64, {C(2), C(2)}, {C(1), C(2), C(3), C(4)});
  EXPECT_EQ(Node("ReduceProd", {x, i64s({C(0)})}).opset(18).str(), "int64[1,2] {3,8}");
  // Opset 13: axes is an attribute (an input would not be read).
  EXPECT_EQ(Node("ReduceProd", {x}).opset(13).attr(attr_is("axes", {1})).str(), "int64[2,1] {2,12}");
  EXPECT_EQ(Node("ReduceProd", {x, i64s({C(0)})}).opset(13).str(), "int64[1,1] {24}");
}

}  // namespace
}  // namespace shapeprop
