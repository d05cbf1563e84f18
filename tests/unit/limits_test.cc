// Limits and robustness (issue 10): reading input within bounds, writing outputs that
// are not regular files, nesting measured before the parsers see it, static depths,
// ONNX's full check without its exponential cost, shape inputs too long for ONNX.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ir/depth.h"
#include "check/full_check.h"
#include "infer/onnx_bridge.h"
#include "io/read_input.h"
#include "io/syntax_depth.h"
#include "shapeprop/io.h"
#include "shapeprop/validate.h"
#include "test_util.h"

namespace shapeprop {
namespace {

using ::testing::HasSubstr;
using testing::TempDir;

constexpr const char* kAbs = "<ir_version: 8, opset_import: [\"\" : 18]>\ng (float[2] x) => (float[2] y) {\n  y = Abs (x)\n}\n";

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// `depth` Ifs, each then_branch holding the next.
std::string nested_ifs(int depth) {
  std::string body = "o" + std::to_string(depth) + " = Identity (x)";
  for (int k = depth - 1; k >= 0; --k) {
    const std::string n = std::to_string(k + 1);
    body = "o" + std::to_string(k) + " = If (c) <then_branch: graph = t" + n + " () => (float[2] o" + n + ") { " + body +
           " }, else_branch: graph = e" + n + " () => (float[2] z" + n + ") { z" + n + " = Identity (x) }>";
  }
  return "<ir_version: 8, opset_import: [\"\" : 18]>\ng (bool c, float[2] x) => (float[2] o0) {\n  " + body + "\n}\n";
}

// `n` functions F_i, each calling F_{i+1} `calls` times (the last computes Abs).
std::string call_chain(int n, int calls) {
  std::string text = "<ir_version: 10, opset_import: [\"\" : 18, \"local\" : 1]>\ng (float[2] x) => (float[2] y) {\n  y = local.F0 (x)\n}\n";
  for (int i = 0; i < n; ++i) {
    const std::string next = "local.F" + std::to_string(i + 1);
    std::string body = i == n - 1 ? "b = Abs (a)" : calls == 1 ? "b = " + next + " (a)" : "t = " + next + " (a)\n  b = " + next + " (t)";
    text += "<domain: \"local\", opset_import: [\"\" : 18, \"local\" : 1]>\nF" + std::to_string(i) + " (a) => (b) {\n  " + body + "\n}\n";
  }
  return text;
}

// ---- reading -------------------------------------------------------------------------

TEST(ReadInput, DevicesAreReadUpToTheLimit) {
  Limits limits;
  limits.max_input_bytes = 1 << 20;
  auto zero = read_input("/dev/zero", limits);
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(zero.error().str(), "/dev/zero: error: input is larger than the limit of 1048576 bytes (--max-input-size)");
}

TEST(ReadInput, RegularFilesOverTheLimitAreNotRead) {
  TempDir dir;
  std::ofstream(dir / "m.onnxtxt") << kAbs;
  Limits limits;
  limits.max_input_bytes = 10;
  EXPECT_THAT(read_input(dir / "m.onnxtxt", limits).error().message, HasSubstr("larger than the limit of 10 bytes"));
  limits.max_input_bytes = std::string(kAbs).size();
  EXPECT_EQ(*read_input(dir / "m.onnxtxt", limits), kAbs);
  EXPECT_THAT(read_input(dir.path(), limits).error().message, HasSubstr("is a folder"));
}

TEST(ReadInput, FifoWithoutWriterIsGivenUpOn) {
  TempDir dir;
  ASSERT_EQ(::mkfifo((dir / "p").c_str(), 0600), 0);
  Limits limits;
  limits.fifo_wait_seconds = 0;
  auto r = read_input(dir / "p", limits);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("nothing was written to this FIFO within 0 s (--max-fifo-wait)"));
}

TEST(ReadInput, FifoWriterThatComesLaterIsRead) {
  TempDir dir;
  const auto fifo = dir / "p";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::thread writer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    std::ofstream(fifo) << kAbs;
  });
  auto r = read_input(fifo, Limits{});
  writer.join();
  ASSERT_TRUE(r.ok()) << r.error().str();
  EXPECT_EQ(*r, kAbs);
}

// ---- writing -------------------------------------------------------------------------

TEST(WriteOutput, FifoIsWrittenInPlace) {
  TempDir dir;
  const auto fifo = dir / "p";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string got;
  std::thread reader([&] { got = slurp(fifo); });
  auto w = write_output(fifo, "model bytes");
  reader.join();
  ASSERT_TRUE(w.ok()) << w.error().str();
  EXPECT_EQ(got, "model bytes");
  struct stat st {};
  ASSERT_EQ(::stat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
}

TEST(WriteOutput, FifoWithoutReaderIsAnError) {
  TempDir dir;
  const auto fifo = dir / "p";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  Limits limits;
  limits.fifo_wait_seconds = 0;
  auto w = write_output(fifo, "x", limits);
  ASSERT_FALSE(w.ok());
  EXPECT_THAT(w.error().message, HasSubstr("no process opened this FIFO for reading within 0 s"));
  struct stat st {};
  ASSERT_EQ(::stat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
}

TEST(WriteOutput, SymbolicLinkKeepsPointingAtTheReplacedFile) {
  TempDir dir;
  std::ofstream(dir / "real") << "old";
  std::filesystem::create_symlink("real", dir / "link");
  ASSERT_TRUE(write_output(dir / "link", "new").ok());
  EXPECT_TRUE(std::filesystem::is_symlink(dir / "link"));
  EXPECT_EQ(slurp(dir / "real"), "new");
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()), {}), 2);  // no temporary left
}

TEST(WriteOutput, CharacterDevicesAreWrittenInPlaceBlockDevicesRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "making device files (mknod) needs root";
  TempDir dir;
  ASSERT_EQ(::mknod((dir / "null").c_str(), S_IFCHR | 0666, makedev(1, 3)), 0);
  ASSERT_EQ(::mknod((dir / "full").c_str(), S_IFCHR | 0666, makedev(1, 7)), 0);
  ASSERT_EQ(::mknod((dir / "block").c_str(), S_IFBLK | 0600, makedev(7, 200)), 0);
  EXPECT_TRUE(write_output(dir / "null", "x").ok());
  auto full = write_output(dir / "full", "x");
  ASSERT_FALSE(full.ok());
  EXPECT_THAT(full.error().message, HasSubstr("No space left on device"));
  auto block = write_output(dir / "block", "x");
  ASSERT_FALSE(block.ok());
  EXPECT_THAT(block.error().message, HasSubstr("is a block device"));
  for (const char* name : {"null", "full"}) {
    struct stat st {};
    ASSERT_EQ(::stat((dir / name).c_str(), &st), 0);
    EXPECT_TRUE(S_ISCHR(st.st_mode)) << name;
  }
}

// ---- nesting before parsing ----------------------------------------------------------

TEST(TextDepth, SubgraphsAndBrackets) {
  EXPECT_EQ(check_text_depth(nested_ifs(64), "t", Limits{}), std::nullopt);
  auto deep = check_text_depth(nested_ifs(65), "t", Limits{});
  ASSERT_TRUE(deep.has_value());
  EXPECT_EQ(deep->line, 3);
  EXPECT_GT(deep->column, 1);
  EXPECT_EQ(deep->message, "subgraphs are nested more than 64 deep (--max-subgraph-depth)");
  // Brackets in strings and comments do not count; tensor literals are no graph bodies.
  const std::string quiet = std::string("<doc_string: \"") + std::string(1000, '{') + "\">\n# " + std::string(1000, '(') +
                            "\ng (float x) => (float y) {\n  c = Constant <value: tensor = int64[1] {1}> ()\n}\n";
  Limits one;
  one.max_subgraph_depth = 0;
  EXPECT_EQ(check_text_depth(quiet, "t", one), std::nullopt);
  auto parens = check_text_depth(std::string(400, '('), "t", Limits{});
  ASSERT_TRUE(parens.has_value());
  EXPECT_THAT(parens->message, HasSubstr("brackets are nested more than 320 deep"));
}

TEST(BinaryDepth, ProtobufParsesWhatTheLimitsAllow) {
  Limits roomy;
  roomy.max_subgraph_depth = 200;
  auto model = parse_model_text(nested_ifs(150), "t", roomy);
  ASSERT_TRUE(model.ok()) << model.error().str();
  const std::string bytes = model->SerializeAsString();
  // 150 nested Ifs are ~450 nested messages: beyond protobuf's default limit of 100.
  auto back = parse_model_binary(bytes, "m.onnx", roomy);
  ASSERT_TRUE(back.ok()) << back.error().str();
  EXPECT_EQ(back->SerializeAsString(), bytes);
  auto refused = parse_model_binary(bytes, "m.onnx");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().str(), "m.onnx: error: subgraphs are nested more than 64 deep (--max-subgraph-depth)");
  // Bytes that are no protobuf are still reported as such.
  EXPECT_THAT(parse_model_binary(bytes.substr(0, bytes.size() / 2), "m.onnx").error().message,
              HasSubstr("malformed or truncated"));
}

// A model whose input's type is `sequences` sequences deep around a tensor: its messages
// nest 4 + 2 x sequences deep (graph, value_info, type, then a sequence and its element
// type for each level), with no subgraph.
onnx::ModelProto nested_sequences(int sequences) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(21);
  auto* graph = model.mutable_graph();
  graph->set_name("g");
  auto* input = graph->add_input();
  input->set_name("x");
  onnx::TypeProto* type = input->mutable_type();
  for (int k = 0; k < sequences; ++k) type = type->mutable_sequence_type()->mutable_elem_type();
  type->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  auto* node = graph->add_node();
  node->set_op_type("Identity");
  node->add_input("x");
  node->add_output("y");
  graph->add_output()->set_name("y");
  return model;
}

// Protobuf parses first, at binary_parse_limit; the scan then tells why a model failed.
// The limit is exact: the deepest model the scan allows parses, one level deeper is
// refused as nested too deep (not as malformed), in memory and from a file alike.
TEST(BinaryDepth, TheParseLimitIsTheScansLimit) {
  const Limits limits;  // messages at most 320 deep
  const std::string fits = nested_sequences(158).SerializeAsString();        // 320 deep
  const std::string too_deep = nested_sequences(159).SerializeAsString();    // 322 deep
  const std::string just_over = [] {
    // 321 deep: the tensor type's shape, one message below the element type.
    auto m = nested_sequences(158);
    onnx::TypeProto* type = m.mutable_graph()->mutable_input(0)->mutable_type();
    for (int k = 0; k < 158; ++k) type = type->mutable_sequence_type()->mutable_elem_type();
    type->mutable_tensor_type()->mutable_shape();
    return m.SerializeAsString();
  }();
  ASSERT_EQ(*binary_recursion_limit(fits, "m.onnx", limits), 320 + 2);  // the scan's own count, plus its margin
  EXPECT_TRUE(parse_model_binary(fits, "m.onnx", limits).ok());
  for (const std::string* bytes : {&just_over, &too_deep}) {
    ::testing::internal::CaptureStderr();  // protobuf's parser says nothing of its own
    auto refused = parse_model_binary(*bytes, "m.onnx", limits);
    EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.error().str(),
              "m.onnx: error: protobuf messages are nested more than 320 deep (the limit is 4 x --max-subgraph-depth "
              "+ 64)");
  }
  // From a file, which is parsed as it is read and scanned only when that fails.
  TempDir dir;
  const auto good = dir.path() / "fits.onnx", bad = dir.path() / "deep.onnx";
  ASSERT_TRUE(write_output(good, fits, limits).ok());
  ASSERT_TRUE(write_output(bad, just_over, limits).ok());
  EXPECT_TRUE(load_model(good, limits).ok());
  auto refused = load_model(bad, limits);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.error().message, HasSubstr("protobuf messages are nested more than 320 deep"));
}

// Subgraphs nested past --max-subgraph-depth parse within the message depth, and are
// refused after the parse as the scan refused them: through nodes' attributes, function
// bodies, and functions' default attributes.
TEST(BinaryDepth, SubgraphsPastTheLimitAreRefusedAfterTheParse) {
  Limits limits;
  limits.max_subgraph_depth = 2;
  const std::string error = "m.onnx: error: subgraphs are nested more than 2 deep (--max-subgraph-depth)";
  EXPECT_TRUE(parse_model_binary(testing::nested_if_model(2).SerializeAsString(), "m.onnx", limits).ok());
  auto main_graph = parse_model_binary(testing::nested_if_model(3).SerializeAsString(), "m.onnx", limits);
  ASSERT_FALSE(main_graph.ok());
  EXPECT_EQ(main_graph.error().str(), error);
  // The same nesting in a function's body, and in a function's default attribute, where a
  // body and its graph attribute are two levels.
  for (bool in_default : {false, true}) {
    for (int depth : {2, 3}) {
      onnx::ModelProto model = testing::nested_if_model(0);
      model.mutable_graph()->add_node()->set_op_type("Identity");
      auto* f = model.add_functions();
      f->set_name("F");
      f->set_domain("local");
      onnx::AttributeProto* a = in_default ? f->add_attribute_proto() : f->add_node()->add_attribute();
      a->set_name("g");
      a->set_type(onnx::AttributeProto::GRAPH);
      *a->mutable_g() = testing::nested_if_model(depth - 1).graph();
      auto parsed = parse_model_binary(model.SerializeAsString(), "m.onnx", limits);
      EXPECT_EQ(parsed.ok(), depth == 2) << in_default << depth;
      if (!parsed.ok()) {
        EXPECT_EQ(parsed.error().str(), error);
      }
      // The scan agrees on both.
      EXPECT_EQ(binary_recursion_limit(model.SerializeAsString(), "m.onnx", limits).ok(), depth == 2);
    }
  }
}

// ---- static depths -------------------------------------------------------------------

TEST(Depths, SubgraphsThroughCallsAndCallChains) {
  auto chain = testing::parse_or_fail(call_chain(5, 1));
  EXPECT_EQ(model_depths(chain).calls, 5u);
  EXPECT_EQ(model_depths(chain).subgraphs, 0u);
  auto ifs = testing::parse_or_fail(nested_ifs(3));
  EXPECT_EQ(model_depths(ifs).subgraphs, 3u);
  Limits tight;
  tight.max_call_depth = 4;
  auto d = check_depths(chain, "m", tight);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].message, "calls are nested 5 deep; the limit is 4 (--max-call-depth)");
  EXPECT_EQ(d[0].call_path.front(), "graph 'g'");
  EXPECT_EQ(d[0].call_path.back(), "function local.F4");
  EXPECT_TRUE(validate_structure(chain, "m", tight).size() == 1 && has_errors(validate_structure(chain, "m", tight)));
}

TEST(Depths, SubgraphsCountThroughCalls) {
  // Each function calls the next inside an If's branch: 2 subgraph levels along one path,
  // though no body nests more than 1.
  auto m = testing::parse_or_fail(R"ONNX(
<ir_version: 10, opset_import: ["" : 18, "local" : 1]>
g (bool c, float[2] x) => (float[2] y) { y = local.F0 (c, x) }
<domain: "local", opset_import: ["" : 18, "local" : 1]>
F0 (c, a) => (b) {
  b = If (c) <then_branch: graph = t () => (o) { o = local.F1 (c, a) }, else_branch: graph = e () => (z) { z = Identity (a) }>
}
<domain: "local", opset_import: ["" : 18, "local" : 1]>
F1 (c, a) => (b) {
  b = If (c) <then_branch: graph = t () => (o) { o = Abs (a) }, else_branch: graph = e () => (z) { z = Identity (a) }>
}
)ONNX");
  EXPECT_EQ(model_depths(m).subgraphs, 2u);
  EXPECT_EQ(model_depths(m).calls, 2u);
  Limits one;
  one.max_subgraph_depth = 1;
  auto d = check_depths(m, "m", one);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].str(),
            "m: error: subgraphs are nested 2 deep, counting those in called functions; the limit is 1 "
            "(--max-subgraph-depth) [at graph 'g' > node 'y' (local.F0) > function local.F0 > (2 more) > "
            "node 'o' (local.F1) > function local.F1 > node 'b' (If) > attribute 'then_branch']");
}

TEST(Depths, RecursionEndsTheWalk) {
  auto m = testing::parse_or_fail(R"ONNX(
<ir_version: 10, opset_import: ["" : 18, "local" : 1]>
g (float[2] x) => (float[2] y) { y = local.f (x) }
<domain: "local", opset_import: ["" : 18, "local" : 1]>
f (a) => (b) { b = local.f (a) }
)ONNX");
  EXPECT_EQ(model_depths(m).calls, 2u);  // main -> f, then f -> f closes the cycle
  EXPECT_TRUE(check_depths(m, "m", Limits{}).empty());
}

// ---- ONNX's full check ---------------------------------------------------------------

TEST(FullCheck, EachBodyOncePerSignature) {
  // 30 functions that each call the next twice: 2^30 - 1 calls, 30 signatures.
  auto m = testing::parse_or_fail(call_chain(30, 2));
  Limits limits;
  ASSERT_FALSE(has_errors(validate_model(m, "m", nullptr, CheckerMode::as_inference, limits)));
  EXPECT_EQ(strict_infer_shapes(m), 30u);
  EXPECT_EQ(m.graph().output(0).type().tensor_type().shape().dim(0).dim_value(), 2);
}

// ---- the bridge to ONNX's inference --------------------------------------------------

TEST(OnnxBridge, ShapeInputsLongerThanTheLimitHaveNoLength) {
  onnx::NodeProto reshape;
  reshape.set_op_type("Reshape");
  reshape.add_input("x");
  reshape.add_input("s");
  reshape.add_output("y");
  const auto* schema = infer::find_schema("Reshape", "", 18);
  ASSERT_NE(schema, nullptr);
  const Fact x = Fact::tensor(onnx::TensorProto::FLOAT, {Dim::constant(2)});
  const Fact s = Fact::tensor(onnx::TensorProto::INT64, {Dim::constant(100000)});
  auto r = infer::OnnxBridge().infer(*schema, reshape, {&x, &s}, {}, nullptr);
  ASSERT_EQ(r.outputs.size(), 1u);
  EXPECT_EQ(r.outputs[0].str(), "float[]");  // rank unknown: not 100,000 dims
  auto wide = infer::OnnxBridge(100000).infer(*schema, reshape, {&x, &s}, {}, nullptr);
  EXPECT_EQ(wide.outputs[0].rank(), 100000u);
}

}  // namespace
}  // namespace shapeprop
