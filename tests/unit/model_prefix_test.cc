// The check of a device's or FIFO's first bytes (io/model_prefix.h) and the resumable
// wire-format walk under it (io/wire_scan.h): what can begin a model is never refused,
// however it is cut into chunks; what cannot is refused at its first bytes.
#include <random>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "io/model_prefix.h"
#include "io/read_input.h"
#include "io/syntax_depth.h"
#include "shapeprop/io.h"
#include "test_util.h"

namespace shapeprop {
namespace {

using ::testing::HasSubstr;

constexpr const char* kModel = R"(<ir_version: 8, opset_import: ["" : 18, "local" : 1], doc_string: "a 'quoted' \"text\" # not a comment">
# a comment: bytes here are not looked at: )" "\x01\xff" R"(
g (float[2] x) => (float[2] y) {
  t = local.F (x)
  y = If (c) <then_branch: graph = t1 () => (float[2] a) { a = Identity (t) }, else_branch: graph = e1 () => (float[2] b) { b = Abs (t) }>
}
<domain: "local", opset_import: ["" : 18]>
F (a) => (b) {
  b = Abs (a)
}
)";

std::string binary_model() {
  auto model = parse_model_text(kModel);
  EXPECT_TRUE(model.ok()) << model.error().str();
  return model->SerializeAsString();
}

// Feeds `bytes` to a fresh check in pieces of `piece` bytes; the first error, if any.
std::optional<Diagnostic> feed(std::string_view bytes, size_t piece, std::optional<Format> format = std::nullopt) {
  ModelPrefix prefix("in", format, Limits{});
  for (size_t n = piece; ; n += piece) {
    if (auto error = prefix.check(bytes.substr(0, n))) return error;
    if (n >= bytes.size()) return std::nullopt;
  }
}

TEST(ModelPrefix, ModelsAreNeverRefusedInAnyChunks) {
  const std::string binary = binary_model();
  ASSERT_EQ(static_cast<unsigned char>(binary[0]), 0x08);  // ir_version comes first
  for (size_t piece : {size_t{1}, size_t{2}, size_t{3}, size_t{7}, size_t{64}, binary.size()}) {
    EXPECT_EQ(feed(binary, piece), std::nullopt) << piece;
    EXPECT_EQ(feed(binary, piece, Format::Binary), std::nullopt) << piece;
    EXPECT_EQ(feed(kModel, piece), std::nullopt) << piece;
    EXPECT_EQ(feed(kModel, piece, Format::Text), std::nullopt) << piece;
  }
  EXPECT_EQ(feed("  \n\t ", 1), std::nullopt);  // blanks so far: either may follow
  EXPECT_EQ(feed("g (x) => (y) {", 1), std::nullopt);  // a graph without a header
}

TEST(ModelPrefix, BytesThatBeginNoModelAreRefusedAtOnce) {
  auto error = [](std::string_view bytes, std::optional<Format> format = std::nullopt) {
    auto d = feed(bytes, bytes.size(), format);
    return d ? d->str() : std::string("(none)");
  };
  EXPECT_EQ(error(std::string(8, '\0')),
            "in: error: not an ONNX model: it begins with byte 0x00 at offset 0, which begins neither a serialized model "
            "(its ir_version, byte 0x08) nor ONNX text ('<' or a name)");
  EXPECT_THAT(error(" \n\x08"), HasSubstr("it begins with byte 0x08 at offset 2"));
  EXPECT_EQ(error("<ir", Format::Binary),
            "in: error: not an ONNX model: a serialized model begins with its ir_version (byte 0x08), not byte 0x3c");
  EXPECT_EQ(error("\n\x08\x08", Format::Text), "in:2:1: error: not ONNX text: it begins with byte 0x08, not '<' or a name");
  EXPECT_EQ(error("<ir_version: 8,\n  \"ok\x01\" 'ok\x02' \x7f"),
            "in:2:15: error: not ONNX text: byte 0x7f outside a string, a quoted name or a comment");
  // Before the graph: ModelProto's fields 1-6 and 8 only, with their wire types.
  EXPECT_EQ(feed("\x08\x08\x42\x00\x12\x01\xff\x28\x01\x3a\x00\x72\x00", 1), std::nullopt);
  EXPECT_EQ(error("\x08\x08\x72\x00\x3a\x00"),
            "in: error: not an ONNX model: before its graph, a serialized model holds ModelProto's fields 1-6 and 8 only "
            "(ir_version, producer, domain, model_version, doc_string, opset_import), not field 14 of wire type 2 (at "
            "offset 2)");
  EXPECT_THAT(error("\x08\x08\x10\x00"), HasSubstr("not field 2 of wire type 0 (at offset 2)"));
  // Field 0 inside the graph; a length past the limit.
  EXPECT_THAT(error(std::string("\x08\x08\x3a\x02\x00\x00", 6)), HasSubstr("the protobuf is malformed within its first 6 bytes"));
  EXPECT_THAT(error("\x08\x08\x3a\xff\xff\xff\xff\x7f"), HasSubstr("the protobuf is malformed"));
}

TEST(ModelPrefix, RandomBytesAreRefusedWithinTheirFirstKilobytes) {
  // What /dev/urandom gives: three in four streams end at their first byte (the rest
  // begin as text or, one in 256, as binary), and every one of these within 4 KiB.
  std::mt19937 random(27);
  size_t at_first_byte = 0;
  for (int k = 0; k < 2000; ++k) {
    std::string bytes(4096, '\0');
    for (char& c : bytes) c = static_cast<char>(random());
    ModelPrefix prefix("in", std::nullopt, Limits{});
    ASSERT_TRUE(prefix.check(bytes).has_value()) << k;
    at_first_byte += prefix.check(bytes.substr(0, 1)).has_value() ? 1 : 0;
  }
  EXPECT_GT(at_first_byte, 1400u);
}

TEST(ModelPrefix, DepthLimitsAreReportedAsTheyArePassed) {
  // Nested graph attributes: an If whose then_branch holds the next If, 80 deep.
  const std::string bytes = testing::nested_if_model(80).SerializeAsString();
  auto d = feed(bytes, 100);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->str(), "in: error: subgraphs are nested more than 64 deep (--max-subgraph-depth)");
  auto whole = binary_recursion_limit(bytes, "in", Limits{});
  ASSERT_FALSE(whole.ok());
  EXPECT_EQ(whole.error().str(), d->str());
}

TEST(WireScan, ResumesWhereTheBytesEnd) {
  const std::string bytes = binary_model();
  WireScan whole = binary_depth_scan(bytes.size(), Limits{});
  ASSERT_EQ(whole.advance(bytes), WireScan::Outcome::Ended);
  for (size_t cut = 0; cut < bytes.size(); ++cut) {
    WireScan scan = binary_depth_scan(bytes.size(), Limits{});
    ASSERT_EQ(scan.advance(std::string_view(bytes).substr(0, cut)), WireScan::Outcome::NeedMore) << cut;
    ASSERT_EQ(scan.advance(bytes), WireScan::Outcome::Ended) << cut;
    ASSERT_EQ(scan.messages(), whole.messages()) << cut;
  }
  // Cut short for good: a whole-model scan reads that as malformed.
  WireScan cut = binary_depth_scan(bytes.size() - 1, Limits{});
  EXPECT_EQ(cut.advance(std::string_view(bytes).substr(0, bytes.size() - 1)), WireScan::Outcome::Malformed);
}

// The scan of a file read in windows (binary_recursion_limit's ReadAt form) gives what the
// scan of all its bytes gives, whatever the window, and reads nothing it skips.
TEST(WireScan, WindowsGiveTheWholeScansAnswer) {
  // A model with a weight of 64 KiB, and one with nested subgraphs past the limit.
  auto weighted = parse_model_text(kModel);
  ASSERT_TRUE(weighted.ok());
  auto* weight = weighted->mutable_graph()->add_initializer();
  weight->set_name("w");
  weight->set_data_type(onnx::TensorProto::FLOAT);
  weight->add_dims(16384);
  weight->set_raw_data(std::string(65536, '\x7f'));
  onnx::ModelProto deep;
  deep.set_ir_version(8);
  onnx::GraphProto* graph = deep.mutable_graph();
  for (int k = 0; k < 80; ++k) {
    auto* attribute = graph->add_node()->add_attribute();
    attribute->set_name("then_branch");
    attribute->set_type(onnx::AttributeProto::GRAPH);
    graph = attribute->mutable_g();
  }
  // One that ends with a long string: its last value is skipped to the end of the file.
  auto tailed = parse_model_text(kModel);
  ASSERT_TRUE(tailed.ok());
  ASSERT_GT(tailed->functions_size(), 0);  // its last field, and the function's last its metadata
  auto* entry = tailed->mutable_functions(tailed->functions_size() - 1)->add_metadata_props();
  entry->set_key("k");
  entry->set_value(std::string(300, 'v'));
  const std::string small = binary_model(), heavy = weighted->SerializeAsString(), nested = deep.SerializeAsString(),
                    tail = tailed->SerializeAsString(), cut = small.substr(0, small.size() - 3), garbage("\x08\x08\xff");
  for (const std::string* input : {&small, &heavy, &tail, &cut, &nested, &garbage}) {
    const std::string& whole = *input;
    const auto expected = binary_recursion_limit(whole, "in", Limits{});
    for (size_t window : {size_t{32}, size_t{33}, size_t{47}, size_t{64}, size_t{1000}, size_t{1} << 20}) {
      size_t read = 0;
      auto read_at = [&](uint64_t offset, char* out, size_t n) -> Result<size_t> {
        if (offset >= whole.size()) return size_t{0};
        const size_t got = std::min<size_t>(n, whole.size() - offset);
        whole.copy(out, got, offset);
        read += got;
        return got;
      };
      const auto got = binary_recursion_limit(read_at, whole.size(), "in", Limits{}, window);
      ASSERT_EQ(got.ok(), expected.ok()) << window;
      if (expected.ok())
        EXPECT_EQ(*got, *expected) << window;
      else
        EXPECT_EQ(got.error().str(), expected.error().str()) << window;
      // The weight's bytes are skipped, not read, where the window is smaller than they are.
      if (input == &heavy && window < 65536) {
        EXPECT_LT(read, whole.size() - 60000) << window;
      }
    }
  }
  // A read that fails ends the scan with its error.
  auto failing = [](uint64_t, char*, size_t) -> Result<size_t> { return Diagnostic::error("cannot read: EIO"); };
  EXPECT_EQ(binary_recursion_limit(failing, small.size(), "in", Limits{}).error().message, "cannot read: EIO");
}

// read_varint: one byte below 0x80 is the value itself; a byte with its top bit set goes on
// into the next; bytes that end (or whose end is set) inside a varint are short; more than
// ten bytes, overlong. `pos` moves past what was read.
TEST(WireScan, ReadsVarintsOfOneAndMoreBytes) {
  auto read = [](std::string_view bytes, uint64_t end, VarintRead expected, uint64_t value, uint64_t after) {
    uint64_t pos = 0, got = 0;
    EXPECT_EQ(read_varint(bytes, pos, end, got), expected) << bytes.size();
    if (expected != VarintRead::Ok) return;
    EXPECT_EQ(got, value);
    EXPECT_EQ(pos, after);
  };
  read(std::string_view("\x00\x05", 2), 2, VarintRead::Ok, 0, 1);
  read("\x7f\x05", 2, VarintRead::Ok, 127, 1);
  read("\x96\x01\x05", 3, VarintRead::Ok, 150, 2);
  read("\x80\x80\x01", 3, VarintRead::Ok, 1u << 14, 3);
  read("\x96\x01", 1, VarintRead::Short, 0, 0);  // its end set inside it
  read("\x96", 1, VarintRead::Short, 0, 0);
  read("\x05", 0, VarintRead::Short, 0, 0);
  read("\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 10, VarintRead::Ok, UINT64_MAX, 10);
  read("\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 11, VarintRead::Overlong, 0, 0);
}

TEST(ReadInput, DevicesEndAtTheirFirstChunkWhenItBeginsNoModel) {
  size_t largest = 0;
  ModelPrefix prefix("/dev/zero", std::nullopt, Limits{});
  auto zero = read_input("/dev/zero", Limits{}, [&](std::string_view bytes) {
    largest = std::max(largest, bytes.size());
    return prefix.check(bytes);
  });
  ASSERT_FALSE(zero.ok());
  EXPECT_THAT(zero.error().str(), HasSubstr("/dev/zero: error: not an ONNX model: it begins with byte 0x00"));
  EXPECT_LE(largest, size_t{1} << 20);  // one chunk
}

}  // namespace
}  // namespace shapeprop
