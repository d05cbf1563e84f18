#include <limits>
#include <set>
#include <string>
#include <vector>

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

// A sequence of a tensor type, as ONNX states one.
onnx::TypeProto sequence_of(onnx::TypeProto elem) {
  onnx::TypeProto t;
  *t.mutable_sequence_type()->mutable_elem_type() = std::move(elem);
  return t;
}

// Issue 50: the dims inside a sequence, an optional or a map are Dims as a tensor's are,
// read and written through the same reader and writer, however deeply nested.
TEST(Fact, NonTensorPartsAreFacts) {
  const auto seq = sequence_of(tensor_type(TensorProto::FLOAT, {"2*N", "3", "?"}));
  const std::set<std::string> ours{"2*N"};
  const Fact f = Fact::of_type(seq, &ours);
  ASSERT_TRUE(f.other);
  EXPECT_EQ(f.other->kind, NonTensor::Kind::kSequence);
  ASSERT_TRUE(f.other->element.shape);
  EXPECT_EQ((*f.other->element.shape)[0], C(2) * N);  // an expression, not a name
  EXPECT_EQ(f.str(), "seq(float[2*N,3,?])");
  EXPECT_EQ(f.type().SerializeAsString(), seq.SerializeAsString());
  EXPECT_EQ(Fact::of_type(f.type(), &ours), f);
  EXPECT_TRUE(f.writable());
  // A model's own "2*N" is a name: another Dim, another fact.
  EXPECT_NE(Fact::of_type(seq), f);
  EXPECT_NE(Fact::of_type(seq).hash(), f.hash());

  // A reader and a writer see every dim, nested ones too.
  onnx::TypeProto nested;
  *nested.mutable_optional_type()->mutable_elem_type() = seq;
  std::vector<std::string> read;
  const Fact g = Fact::of_type(nested, [&read](const std::string& p) {
    read.push_back(p);
    return Dim::symbol("M");
  });
  EXPECT_EQ(read, std::vector<std::string>{"2*N"});
  EXPECT_EQ(g.str(), "optional(seq(float[M,3,?]))");
  std::vector<std::string> written;
  g.type([&written](onnx::TensorShapeProto_Dimension& out, const Dim& d) {
    written.push_back(d.str());
    out.set_dim_param("w");
  });
  EXPECT_EQ(written, std::vector<std::string>{"M"});

  // Maps and sparse tensors.
  onnx::TypeProto map;
  map.mutable_map_type()->set_key_type(TensorProto::INT64);
  *map.mutable_map_type()->mutable_value_type() = tensor_type(TensorProto::FLOAT, {"N"});
  EXPECT_EQ(Fact::of_type(map).str(), "map(int64, float[N])");
  EXPECT_EQ(Fact::of_type(map).type().SerializeAsString(), map.SerializeAsString());
  onnx::TypeProto sparse;
  sparse.mutable_sparse_tensor_type()->set_elem_type(TensorProto::FLOAT);
  sparse.mutable_sparse_tensor_type()->mutable_shape()->add_dim()->set_dim_param("N");
  EXPECT_EQ(Fact::of_type(sparse).str(), "sparse float[N]");
  EXPECT_EQ(Fact::of_type(sparse).type().SerializeAsString(), sparse.SerializeAsString());

  // No element type: nothing ONNX's checker takes as a value's type.
  onnx::TypeProto bare;
  bare.mutable_sequence_type();
  EXPECT_FALSE(Fact::of_type(bare).writable());
  EXPECT_EQ(Fact::of_type(bare).type().SerializeAsString(), bare.SerializeAsString());
  EXPECT_FALSE(Fact::of_type(sequence_of(tensor_type(0, {"N"}))).writable());
}

TEST(Fact, NonTensorJoinAndRename) {
  const Fact a = Fact::of_type(sequence_of(tensor_type(TensorProto::FLOAT, {"N", "3"})));
  const Fact b = Fact::of_type(sequence_of(tensor_type(TensorProto::FLOAT, {"M", "3"})));
  EXPECT_EQ(join(a, b).str(), "seq(float[?,3])");
  EXPECT_EQ(join(a, a), a);
  EXPECT_FALSE(join(a, Fact::of_type(sequence_of(tensor_type(TensorProto::INT64, {"N", "3"})))).known());
  EXPECT_FALSE(join(a, Fact::tensor(TensorProto::FLOAT, {N, C(3)})).known());
  // optional(T) and U: optional(T joined with U), as ONNX takes a value for an optional.
  onnx::TypeProto opt;
  *opt.mutable_optional_type()->mutable_elem_type() = b.type();
  EXPECT_EQ(join(Fact::of_type(opt), a).str(), "optional(seq(float[?,3]))");

  // for_each_tensor changes this fact's copy of a shared part, never another fact's.
  Fact renamed = a;
  renamed.for_each_tensor([](Fact& t) { (*t.shape)[0] = Dim::symbol("K"); });
  EXPECT_EQ(renamed.str(), "seq(float[K,3])");
  EXPECT_EQ(a.str(), "seq(float[N,3])");
  std::vector<std::string> seen;
  renamed.for_each_tensor([&seen](const Fact& t) { seen.push_back(t.str()); });
  EXPECT_EQ(seen, std::vector<std::string>{"float[K,3]"});
}

}  // namespace
}  // namespace shapeprop
