#include <fcntl.h>
#include <unistd.h>

#include <fstream>
#include <random>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "shapeprop/io.h"
#include "shapeprop/text.h"
#include "shapeprop/validate.h"
#include "shapeprop/version.h"
#include "test_util.h"

namespace shapeprop {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using testing::TempDir;

constexpr const char* kSmall = R"ONNX(
<
   ir_version: 8,
   opset_import: ["" : 18]
>
g (float[2] x) => (float[2] y) {
   y = Abs (x)
}
)ONNX";

void write(const std::filesystem::path& p, const std::string& bytes) {
  std::ofstream(p, std::ios::binary) << bytes;
}

TEST(FormatForPath, FromExtension) {
  EXPECT_EQ(format_for_path("m.onnx"), Format::Binary);
  EXPECT_EQ(format_for_path("dir/m.onnxtxt"), Format::Text);
  EXPECT_EQ(format_for_path("m.txt"), Format::Text);
  EXPECT_EQ(format_for_path("m.model"), std::nullopt);
}

TEST(ParseText, SyntaxErrorNamesLineAndColumn) {
  auto m = parse_model_text("<\n ir_version: 8\n>\ng (float x) => (float y) {\n  y = Abs (x\n}\n", "bad.onnxtxt");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().file, "bad.onnxtxt");
  EXPECT_EQ(m.error().line, 6);
  EXPECT_EQ(m.error().column, 1);
  EXPECT_THAT(m.error().str(), StartsWith("bad.onnxtxt:6:1: error: syntax error: Expected character ) not found."));
  EXPECT_EQ(m.error().str().find('\n'), std::string::npos);
}

TEST(ParseText, BadLiteralIsAnErrorNotAnException) {
  // ONNX's parser calls std::stol on this literal, which throws.
  auto m = parse_model_text(
      "<ir_version: 8, opset_import: [\"\" : 18]>\ng (float x) => (float y) {\n"
      "  y = Abs <a: int = 99999999999999999999999> (x)\n}\n",
      "t");
  ASSERT_FALSE(m.ok());
  EXPECT_THAT(m.error().message, HasSubstr("bad literal"));
}

TEST(ParseText, QuotedNamesRoundTrip) {
  auto m = testing::parse_or_fail(R"ONNX(
<ir_version: 8, opset_import: ["" : 18]>
g (float['n 1'] 'a::b') => (float['n 1'] '') {
   '' = Abs ('a::b')
}
)ONNX");
  EXPECT_EQ(m.graph().input(0).name(), "a::b");
  EXPECT_EQ(m.graph().input(0).type().tensor_type().shape().dim(0).dim_param(), "n 1");
  EXPECT_EQ(m.graph().node(0).output(0), "");
  EXPECT_TRUE(verify_text_roundtrip(m).ok());
}

TEST(ParseText, IdentifiersLikeTheInternalPrefixStayThemselves) {
  // The rewriter picks a prefix that the text does not contain.
  auto m = testing::parse_or_fail(R"ONNX(
<ir_version: 8, opset_import: ["" : 18]>
g (float _sp_quoted_0) => (float 'q x') {
   'q x' = Abs (_sp_quoted_0)
}
)ONNX");
  EXPECT_EQ(m.graph().input(0).name(), "_sp_quoted_0");
  EXPECT_EQ(m.graph().output(0).name(), "q x");
}

TEST(ParseBinary, EmptyRandomAndTruncated) {
  auto empty = parse_model_binary("", "e.onnx");
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.error().str(), "e.onnx: error: empty file: no model");

  auto model = testing::parse_or_fail(kSmall);
  auto bytes = serialize_model(model);
  ASSERT_TRUE(bytes.ok());
  ASSERT_TRUE(parse_model_binary(*bytes, "ok.onnx").ok());
  // Every strict prefix of a model is rejected, whichever byte it stops at: by the
  // parser, or (a cut exactly between two fields of the outermost message leaves a
  // smaller, well-formed message) by validation.
  for (size_t n = 1; n < bytes->size(); ++n) {
    auto cut = parse_model_binary(std::string_view(*bytes).substr(0, n), "cut.onnx");
    EXPECT_TRUE(!cut.ok() || has_errors(validate_model(*cut, "cut.onnx"))) << n;
  }

  std::mt19937 rng(42);
  for (int trial = 0; trial < 200; ++trial) {
    std::string noise(64 + trial, '\0');
    for (auto& c : noise) c = static_cast<char>(rng());
    EXPECT_FALSE(parse_model_binary(noise, "noise.onnx").ok()) << trial;
  }
}

// Protobuf keeps any number in TensorProto.data_type, and ONNX's checker lets a tensor
// with raw_data through whatever its number; nothing can read such a tensor, and the text
// syntax has no name for it (model_binary fuzzing: it did not round-trip through text).
TEST(ParseBinary, UnknownDataTypeIsAnError) {
  auto model = testing::parse_or_fail(kSmall);
  auto* weight = model.mutable_graph()->add_initializer();
  weight->set_name("k:0");
  weight->add_dims(2);
  weight->set_data_type(48);
  weight->set_raw_data(std::string(8, '\0'));
  auto bytes = serialize_model(model);
  ASSERT_TRUE(bytes.ok());
  auto parsed = parse_model_binary(*bytes, "m.onnx");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.error().str(), std::string("m.onnx: error: not an ONNX model: tensor 'k:0' has data_type 48, which is "
                                              "no element type of ONNX ") + onnx_version());
  // In a Constant of a function body too.
  model = testing::parse_or_fail(kSmall);
  auto* node = model.add_functions()->add_node();
  node->set_op_type("Constant");
  auto* value = node->add_attribute();
  value->set_name("value");
  value->set_type(onnx::AttributeProto::TENSOR);
  value->mutable_t()->set_data_type(-3);
  bytes = serialize_model(model);
  ASSERT_TRUE(bytes.ok());
  EXPECT_FALSE(parse_model_binary(*bytes, "m.onnx").ok());
  // Every type ONNX defines stays readable.
  model = testing::parse_or_fail(kSmall);
  weight = model.mutable_graph()->add_initializer();
  weight->set_name("w");
  weight->set_data_type(onnx::TensorProto::BFLOAT16);
  weight->set_raw_data(std::string(2, '\0'));
  bytes = serialize_model(model);
  EXPECT_TRUE(parse_model_binary(*bytes, "m.onnx").ok());
}

TEST(LoadModel, SniffsTextWithoutExtension) {
  TempDir dir;
  write(dir / "model", kSmall);
  auto m = load_model(dir / "model");
  ASSERT_TRUE(m.ok()) << m.error().str();
  EXPECT_EQ(m->graph().node(0).op_type(), "Abs");
}

// A binary file is read in pieces (never held whole): it loads as its bytes parse, and
// every error is the one the bytes give.
TEST(LoadModel, BinaryFilesLoadAsTheirBytesParse) {
  TempDir dir;
  auto model = testing::parse_or_fail(kSmall);
  auto* weight = model.mutable_graph()->add_initializer();
  weight->set_name("w");
  weight->set_data_type(onnx::TensorProto::FLOAT);
  weight->add_dims(100000);
  weight->set_raw_data(std::string(400000, '\x01'));
  auto bytes = serialize_model(model);
  ASSERT_TRUE(bytes.ok());
  for (const char* name : {"m.onnx", "m.pb", "model"}) {
    write(dir / name, *bytes);
    auto loaded = load_model(dir / name);
    ASSERT_TRUE(loaded.ok()) << name << ": " << loaded.error().str();
    EXPECT_EQ(loaded->SerializeAsString(), *bytes) << name;
  }
  // Cut short, cut inside the weight, empty, and no protobuf at all.
  for (const std::string& cut : {bytes->substr(0, bytes->size() - 1), bytes->substr(0, 1000), std::string(),
                                 std::string("\x08\x08\xff\xff")}) {
    const auto path = dir / "cut.onnx";
    write(path, cut);
    auto loaded = load_model(path);
    auto parsed = parse_model_binary(cut, path.string());
    ASSERT_FALSE(parsed.ok());
    ASSERT_FALSE(loaded.ok()) << cut.size();
    EXPECT_EQ(loaded.error().str(), parsed.error().str()) << cut.size();
  }
}

TEST(LoadModel, TextWithoutExtensionAfterBlankLines) {
  TempDir dir;
  write(dir / "model", std::string(5000, '\n') + " \t\r\v\f" + kSmall);
  auto m = load_model(dir / "model");
  ASSERT_TRUE(m.ok()) << m.error().str();
  EXPECT_EQ(m->graph().node(0).op_type(), "Abs");
  write(dir / "blank", std::string(5000, ' '));
  EXPECT_FALSE(load_model(dir / "blank").ok());
}

TEST(LoadModel, OverTwoGibibytesIsAClearError) {
  TempDir dir;
  const auto path = dir / "huge.onnx";
  // A sparse file: 2 GiB + 1 byte of size, almost nothing on disk.
  int fd = ::open(path.c_str(), O_CREAT | O_WRONLY, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::ftruncate(fd, (off_t{1} << 31) + 1), 0);
  ::close(fd);
  auto m = load_model(path);
  ASSERT_FALSE(m.ok());
  EXPECT_THAT(m.error().message, HasSubstr("larger than 2 GiB"));
}

TEST(ExternalData, LocationsMustStayInTheFolder) {
  TempDir dir;
  std::filesystem::create_directories(dir / "m");
  std::filesystem::create_directories(dir / "out");
  std::filesystem::create_symlink("../out", dir / "m" / "link");
  auto with_location = [](const std::string& location) {
    onnx::ModelProto m;
    auto* t = m.mutable_graph()->add_initializer();
    t->set_name("w");
    t->set_data_location(onnx::TensorProto::EXTERNAL);
    auto* kv = t->add_external_data();
    kv->set_key("location");
    kv->set_value(location);
    return m;
  };
  const auto model_dir = dir / "m";
  EXPECT_TRUE(check_external_data(with_location("w.bin"), model_dir, "m.onnx").ok());
  EXPECT_TRUE(check_external_data(with_location("sub/w.bin"), model_dir, "m.onnx").ok());
  EXPECT_TRUE(check_external_data(with_location("./w.bin"), model_dir, "m.onnx").ok());
  for (const char* bad : {"../w.bin", "/etc/passwd", "sub/../../w.bin", "link/w.bin", ""}) {
    auto status = check_external_data(with_location(bad), model_dir, "m.onnx");
    ASSERT_FALSE(status.ok()) << bad;
    EXPECT_THAT(status.error().str(), StartsWith("m.onnx: error: tensor 'w': external data location")) << bad;
  }
}

TEST(ExternalData, FoundInSubgraphsAndFunctions) {
  auto m = testing::parse_or_fail(R"ONNX(
<ir_version: 8, opset_import: ["" : 18, "local" : 1]>
g (float[2] x) => (float[2] y) {
   y = local.f (x)
}
<domain: "local", opset_import: ["" : 18]>
f (x) => (y) {
   w = Constant <value: tensor = float[2] w ["location": "../escape.bin"]> ()
   y = Add (x, w)
}
)ONNX");
  auto status = check_external_data(m, ".", "m.onnxtxt");
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(status.error().message, HasSubstr("'../escape.bin' leaves the model's folder"));
}

TEST(SaveModel, AtomicAndDeterministic) {
  TempDir dir;
  auto model = testing::parse_or_fail(kSmall);
  ASSERT_TRUE(save_model(model, dir / "a.onnx", Format::Binary).ok());
  ASSERT_TRUE(save_model(model, dir / "b.onnx", Format::Binary).ok());
  auto read = [](const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  };
  EXPECT_EQ(read(dir / "a.onnx"), read(dir / "b.onnx"));
  ASSERT_TRUE(save_model(model, dir / "a.onnxtxt", Format::Text).ok());
  EXPECT_EQ(read(dir / "a.onnxtxt"), print_model(model));
  // Nothing but the three outputs: no temporary file left behind.
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()), std::filesystem::directory_iterator()), 3);
}

TEST(SaveModel, MissingFolderLeavesNothing) {
  TempDir dir;
  auto status = save_model(testing::parse_or_fail(kSmall), dir / "no" / "m.onnx", Format::Binary);
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(status.error().message, HasSubstr("does not exist"));
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

TEST(SaveModel, ReplacesAnExistingFileWhole) {
  TempDir dir;
  write(dir / "m.onnx", std::string(100000, 'x'));
  auto model = testing::parse_or_fail(kSmall);
  ASSERT_TRUE(save_model(model, dir / "m.onnx", Format::Binary).ok());
  auto loaded = load_model(dir / "m.onnx");
  ASSERT_TRUE(loaded.ok()) << loaded.error().str();
  EXPECT_EQ(loaded->SerializeAsString(), model.SerializeAsString());
}

}  // namespace
}  // namespace shapeprop
