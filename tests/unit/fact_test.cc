#include <limits>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "shapeprop/fact.h"

namespace shapeprop {
namespace {

using onnx::TensorProto;

const Dim N = Dim::symbol("N");
Dim C(int64_t v) { return Dim::constant(v); }

onnx::TypeProto tensor_type(int32_t elem, std::vector<std::string> dims) {
  onnx::TypeProto t;
  t.mutable_tensor_type()->set_elem_type(elem);
  auto* shape = t.mutable_tensor_type()->mutable_shape();
  for (const auto& d : dims) {
    auto* dim = shape->add_dim();
    if (d == "?") continue;
    if (d.find_first_not_of("0123456789") == std::string::npos)
      dim->set_dim_value(std::stoll(d));
    else
      dim->set_dim_param(d);
  }
  return t;
}

TEST(Fact, TypeRoundTrip) {
  auto t = tensor_type(TensorProto::FLOAT, {"N", "3", "?", "2*N"});
  Fact f = Fact::of_type(t);
  EXPECT_EQ(f.str(), "float[N,3,?,2*N]");
  EXPECT_EQ(f.type().SerializeAsString(), t.SerializeAsString());
  EXPECT_EQ(Fact::of_type(f.type()), f);
  onnx::TypeProto unknown_rank;
  unknown_rank.mutable_tensor_type()->set_elem_type(TensorProto::INT64);
  EXPECT_EQ(Fact::of_type(unknown_rank).str(), "int64[]");
  EXPECT_FALSE(Fact::of_type(unknown_rank).rank());
}

TEST(Fact, OfTensorTypedAndRaw) {
  TensorProto t;
  t.set_data_type(TensorProto::INT64);
  t.add_dims(2);
  t.add_int64_data(4);
  t.add_int64_data(-1);
  EXPECT_EQ(Fact::of_tensor(t).str(), "int64[2] {4,-1}");
  TensorProto raw;
  raw.set_data_type(TensorProto::FLOAT16);
  raw.add_dims(2);
  raw.set_raw_data(std::string("\x00\x3c\x00\xc0", 4));  // 1.0, -2.0
  Fact h = Fact::of_tensor(raw);
  ASSERT_TRUE(h.reals);
  EXPECT_EQ(*h.reals, (std::vector<double>{1.0, -2.0}));
  // Back to a tensor with the same values.
  auto back = h.to_tensor();
  ASSERT_TRUE(back);
  EXPECT_EQ(Fact::of_tensor(*back), h);
  // External data and big tensors: type and shape only.
  TensorProto big;
  big.set_data_type(TensorProto::FLOAT);
  big.add_dims(1000);
  big.set_raw_data(std::string(4000, '\0'));
  EXPECT_FALSE(Fact::of_tensor(big).has_elements());
  EXPECT_EQ(Fact::of_tensor(big).str(), "float[1000]");
}

TEST(Fact, ShapeValue) {
  Fact s = Fact::int_tensor(TensorProto::INT64, {C(2)}, {N, C(3)});
  EXPECT_FALSE(s.is_constant());
  auto shape = s.as_shape_value();
  ASSERT_TRUE(shape);
  EXPECT_EQ(shape->dim(0).dim_param(), "N");
  EXPECT_EQ(shape->dim(1).dim_value(), 3);
  EXPECT_FALSE(s.to_tensor());  // not a constant
}

TEST(Fact, JoinKeepsWhatHoldsForBoth) {
  Fact a = Fact::tensor(TensorProto::FLOAT, {N, C(3)});
  Fact b = Fact::tensor(TensorProto::FLOAT, {Dim::symbol("M"), C(3)});
  EXPECT_EQ(join(a, b).str(), "float[?,3]");
  EXPECT_EQ(join(a, a), a);
  Fact rank1 = Fact::tensor(TensorProto::FLOAT, {C(7)});
  EXPECT_EQ(join(a, rank1).str(), "float[]");
  Fact other_type = Fact::tensor(TensorProto::DOUBLE, {N, C(3)});
  EXPECT_EQ(join(a, other_type).str(), "?[N,3]");  // the element type goes, the shape agrees
  EXPECT_EQ(join(Fact::int_tensor(TensorProto::INT64, {}, {C(1)}), Fact::int_tensor(TensorProto::INT64, {}, {C(2)})).str(),
            "int64");
}

TEST(Fact, RefineTakesTheMorePreciseAndReportsContradictions) {
  Fact inferred = Fact::tensor(TensorProto::FLOAT, {N, Dim()});
  Fact declared = Fact::tensor(TensorProto::FLOAT, {C(5), C(3)});
  auto r = Fact::refine(inferred, declared);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->str(), "float[5,3]");
  EXPECT_TRUE(r->at_least_as_precise_as(declared));
  EXPECT_FALSE(inferred.at_least_as_precise_as(declared));

  auto bad_rank = Fact::refine(inferred, Fact::tensor(TensorProto::FLOAT, {C(5)}));
  ASSERT_FALSE(bad_rank.ok());
  EXPECT_THAT(bad_rank.error().message, ::testing::HasSubstr("rank 2 contradicts rank 1"));
  EXPECT_FALSE(Fact::refine(declared, Fact::tensor(TensorProto::FLOAT, {C(4), C(3)})).ok());
  EXPECT_FALSE(Fact::refine(declared, Fact::tensor(TensorProto::INT64, {C(5), C(3)})).ok());
  // Unknown facts refine to the other.
  EXPECT_EQ(*Fact::refine(Fact(), declared), declared);
}

TEST(Fact, EqualityAndHash) {
  Fact a = Fact::real_tensor(TensorProto::FLOAT, {}, {std::nan("")});
  Fact b = Fact::real_tensor(TensorProto::FLOAT, {}, {std::nan("")});
  EXPECT_EQ(a, b);  // bitwise: NaN equals NaN, so a context with it hashes like itself
  EXPECT_EQ(a.hash(), b.hash());
  EXPECT_NE(Fact::tensor(TensorProto::FLOAT, {N}), Fact::tensor(TensorProto::FLOAT, {C(3)}));
  // Empty tensors know all of their (no) elements: equal, without comparing null data
  // (the fuzz finding fact_equal_empty_reals; UBSan fails this test without the fix).
  Fact e = Fact::real_tensor(TensorProto::FLOAT, {C(0)}, {});
  Fact f = Fact::real_tensor(TensorProto::FLOAT, {C(0)}, {});
  EXPECT_EQ(e, f);
  EXPECT_EQ(e.hash(), f.hash());
}

// Dims whose product overflows int64 (issue 10): the element count is checked, so such a
// tensor has no elements to know (the product wrapped to 1 in release builds, and the one
// value stood for the whole tensor; UBSan reported the overflow).
TEST(Fact, ElementCountOverflowKeepsNoElements) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  TensorProto t;
  t.set_data_type(TensorProto::INT64);
  t.add_dims(kMax);
  t.add_dims(kMax);
  t.add_int64_data(7);
  const Fact f = Fact::of_tensor(t);
  EXPECT_FALSE(f.has_elements());
  EXPECT_EQ(f.str(), "int64[" + std::to_string(kMax) + "," + std::to_string(kMax) + "]");
  EXPECT_EQ(f.static_size(), std::nullopt);
  EXPECT_EQ(f.to_tensor(), std::nullopt);
  t.set_dims(1, 0);  // an empty tensor beside a huge dim has no elements either way
  EXPECT_EQ(Fact::of_tensor(t).static_size(), 0);
}

}  // namespace
}  // namespace shapeprop
