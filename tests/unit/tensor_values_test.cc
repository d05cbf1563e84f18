// The constant values the passes compute with (src/transform/tensor_values.h): raw data is
// read as its typed fields are, element for element, for every type held; a size that does
// not match the dims, or more elements than asked for, is no value; encode() writes back
// what decode() read.
#include "transform/tensor_values.h"

#include <gtest/gtest.h>

#include <bit>
#include <cstring>
#include <cstdint>
#include <vector>

#include "support/tensor_data.h"

namespace shapeprop::transform {
namespace {

using onnx::TensorProto;

// A tensor of `type` and dims [2, 3] whose six elements are `raw`'s bytes.
TensorProto raw_tensor(int32_t type, const std::string& raw) {
  TensorProto t;
  t.set_data_type(type);
  t.add_dims(2);
  t.add_dims(3);
  t.set_raw_data(raw);
  return t;
}

template <class E>
std::string bytes_of(const std::vector<E>& values) {
  std::string raw(values.size() * sizeof(E), '\0');
  std::memcpy(raw.data(), values.data(), raw.size());
  return raw;
}

TEST(TensorValues, RawDataReadsAsTypedFields) {
  const std::vector<std::pair<int32_t, std::string>> cases = {
      {TensorProto::FLOAT, bytes_of<float>({1.5f, -2.0f, 0.0f, -0.0f, 3e38f, 1e-45f})},
      {TensorProto::DOUBLE, bytes_of<double>({1.5, -2.0, 0.0, -0.0, 1e308, 5e-324})},
      {TensorProto::FLOAT16, bytes_of<uint16_t>({0x3c00, 0xc000, 0x0001, 0x8000, 0x7bff, 0x3555})},
      {TensorProto::BFLOAT16, bytes_of<uint16_t>({0x3f80, 0xc000, 0x0001, 0x8000, 0x7f7f, 0x3eab})},
      {TensorProto::INT64, bytes_of<int64_t>({1, -2, INT64_MAX, INT64_MIN, 0, 7})},
      {TensorProto::INT32, bytes_of<int32_t>({1, -2, INT32_MAX, INT32_MIN, 0, 7})},
      {TensorProto::INT16, bytes_of<int16_t>({1, -2, INT16_MAX, INT16_MIN, 0, 7})},
      {TensorProto::INT8, bytes_of<int8_t>({1, -2, INT8_MAX, INT8_MIN, 0, 7})},
      {TensorProto::UINT32, bytes_of<uint32_t>({1, 2, UINT32_MAX, 0, 65536, 7})},
      {TensorProto::UINT16, bytes_of<uint16_t>({1, 2, UINT16_MAX, 0, 256, 7})},
      {TensorProto::UINT8, bytes_of<uint8_t>({1, 2, 255, 0, 128, 7})},
      {TensorProto::BOOL, bytes_of<uint8_t>({1, 0, 1, 0, 0, 1})},
  };
  for (const auto& [type, raw] : cases) {
    SCOPED_TRACE(type);
    const TensorProto t = raw_tensor(type, raw);
    const auto from_raw = decode(t);
    const auto from_typed = decode(typed_tensor(t));
    ASSERT_TRUE(from_raw);
    ASSERT_TRUE(from_typed);
    EXPECT_EQ(from_raw->size(), 6u);
    EXPECT_EQ(from_raw->dims, (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(from_raw->real, from_typed->real);
    EXPECT_EQ(from_raw->ints, from_typed->ints);
    // Bit for bit (-0.0 and 0.0 apart).
    // Compared as bit patterns: memcmp would be handed the null data() of the empty vectors
    // of the integer types, which it may not be.
    const auto bits = [](const std::vector<double>& reals) {
      std::vector<uint64_t> out;
      for (double r : reals) out.push_back(std::bit_cast<uint64_t>(r));
      return out;
    };
    EXPECT_EQ(bits(from_raw->reals), bits(from_typed->reals));
    // Encoding gives the typed form back.
    EXPECT_EQ(encode(*from_raw).SerializeAsString(), [&] {
      TensorProto typed = typed_tensor(t);
      typed.clear_name();
      return typed.SerializeAsString();
    }());
  }
}

TEST(TensorValues, WrongSizesAndLimitsAreNoValue) {
  // Five floats and a half for six elements; seven floats; an element more than allowed.
  EXPECT_FALSE(decode(raw_tensor(TensorProto::FLOAT, std::string(22, '\0'))));
  EXPECT_FALSE(decode(raw_tensor(TensorProto::FLOAT, std::string(28, '\0'))));
  EXPECT_TRUE(decode(raw_tensor(TensorProto::FLOAT, std::string(24, '\0')), 6));
  EXPECT_FALSE(decode(raw_tensor(TensorProto::FLOAT, std::string(24, '\0')), 5));
  TensorProto typed;
  typed.set_data_type(TensorProto::INT64);
  typed.add_dims(3);
  typed.add_int64_data(1);
  typed.add_int64_data(2);
  EXPECT_FALSE(decode(typed));  // two of three
  typed.add_int64_data(3);
  EXPECT_TRUE(decode(typed));
  typed.set_data_location(TensorProto::EXTERNAL);
  EXPECT_FALSE(decode(typed));  // never read
  TensorProto strings;
  strings.set_data_type(TensorProto::STRING);
  strings.add_string_data("a");
  EXPECT_FALSE(decode(strings));
}

}  // namespace
}  // namespace shapeprop::transform
