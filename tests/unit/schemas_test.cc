// The rule language (src/schemas): parsing, layout matching and output computation, as
// pure functions on Facts; and the shipped rules loading.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <stdexcept>
#include <thread>

#include "schemas/rule_eval.h"
#include "schemas/rule_parser.h"
#include "shapeprop/schemas.h"
#include "test_util.h"

namespace shapeprop::schemas {
namespace {

using shapeprop::testing::int_attribute;

using ::testing::HasSubstr;

OpRule parse_one(const std::string& text) {
  auto rules = parse_rules(text, "t.rule");
  EXPECT_TRUE(rules.ok()) << (rules.ok() ? "" : rules.error().str());
  return rules.ok() ? rules->front() : OpRule();
}

Diagnostic parse_error(const std::string& text) {
  auto rules = parse_rules(text, "t.rule");
  EXPECT_FALSE(rules.ok());
  return rules.ok() ? Diagnostic() : rules.error();
}

Fact tensor(int32_t type, std::vector<Dim> dims) { return Fact::tensor(type, std::move(dims)); }
Dim s(const char* name) { return Dim::symbol(name); }
Dim c(int64_t v) { return Dim::constant(v); }
constexpr int32_t kFloat = onnx::TensorProto::FLOAT;
constexpr int32_t kInt64 = onnx::TensorProto::INT64;

Application apply(const OpRule& rule, size_t outputs, const std::vector<const Fact*>& inputs,
                  const std::vector<onnx::AttributeProto>& attributes = {}) {
  std::vector<const onnx::AttributeProto*> list;
  for (const auto& a : attributes) list.push_back(&a);
  return apply_rule(rule, outputs, inputs, list, [](const auto&, const auto&, const auto&) { return std::vector<Fact>(); });
}

TEST(RuleParser, ReadsOpAttributesTypesAndLayouts) {
  OpRule r = parse_one(R"(
    # comment
    op com.example.Cache <heads: int, eps: float = 1e-5, sizes: ints = [1, 2]>
    type T: tensor(float), tensor(float16)
    layout "no past" (T[B, L, D] x, ) => (T[B, @heads, L, D / @heads] present)
    layout (T[B, L, D] x, T[B, @heads, P, H]? past) => (T[B, @heads, P + L, H] present, float? extra)
  )");
  EXPECT_EQ(r.domain, "com.example");
  EXPECT_EQ(r.op, "Cache");
  ASSERT_EQ(r.attributes.size(), 3u);
  EXPECT_FALSE(r.attributes[0].default_value);
  EXPECT_FLOAT_EQ(r.attributes[1].default_value->f(), 1e-5f);
  EXPECT_EQ(r.attributes[2].default_value->ints_size(), 2);
  ASSERT_EQ(r.types.size(), 1u);
  EXPECT_EQ(r.types[0].allowed, (std::vector<int32_t>{kFloat, onnx::TensorProto::FLOAT16}));
  ASSERT_EQ(r.layouts.size(), 2u);
  EXPECT_EQ(r.layouts[0].label, "no past");
  EXPECT_EQ(r.layouts[1].label, "layout 2");
  EXPECT_TRUE(r.layouts[0].inputs[1].empty);
  EXPECT_TRUE(r.layouts[1].inputs[1].optional);
  EXPECT_EQ(r.layouts[1].where.line, 6);
}

TEST(RuleParser, DefaultDomainOp) {
  OpRule r = parse_one("op Foo type T: tensor(float) layout (T x) => (T y)");
  EXPECT_EQ(r.domain, "");
  EXPECT_EQ(r.op, "Foo");
}

TEST(RuleParser, ErrorsNameFileLineAndColumn) {
  Diagnostic d = parse_error("op X\ntype T: tensor(float)\nlayout (T[N] x) => (T[N + Q] y)\n");
  EXPECT_EQ(d.str(), "t.rule:3:21: error: symbol 'Q' is bound by no input of this layout");
  d = parse_error("op X\nlayout (float[N] x) => (float[N] y)\nlayout (float[N x) => (float y)");
  EXPECT_EQ(d.line, 3);
  EXPECT_EQ(d.column, 17);
  EXPECT_THAT(d.message, HasSubstr("expected ']'"));
  EXPECT_THAT(parse_error("").message, HasSubstr("no rule in this file"));
  EXPECT_THAT(parse_error("op X type U: tensor(float) layout (T x) => (T y)").message,
              HasSubstr("'T' is neither an element type nor a type variable"));
  EXPECT_THAT(parse_error("op X type T: tensor(float), tensor(int64) layout (float x) => (T y)").message,
              HasSubstr("bound by no input of this layout and allows more than one type"));
  EXPECT_THAT(parse_error("op X <a: int> layout (float[N] x) => (float[@a[0]] y)").message, HasSubstr("is not an ints"));
  EXPECT_THAT(parse_error("op X layout (float[*A, *B] x) => (float y)").message, HasSubstr("more than one '*'"));
  EXPECT_THAT(parse_error("op X layout (float[N] x) => (float y) shape (x) => (z) { z = Shape (x) }").message,
              HasSubstr("outputs must be exactly the outputs written without dims"));
  EXPECT_THAT(parse_error("op X layout (float \"x) => (float y)").message, HasSubstr("string is not closed"));
}

TEST(RuleEval, BindsSharedSymbolsAndBatchPrefixes) {
  OpRule r = parse_one("op X type T: tensor(float) layout (T[*B, D] x, T[D] g) => (T[*B, D] y, float[*B, 1] m)");
  Fact x = tensor(kFloat, {s("N"), c(7), Dim::unknown()}), g = tensor(kFloat, {c(32)});
  auto a = apply(r, 2, {&x, &g});
  ASSERT_TRUE(a.layout);
  // D is unknown in x and 32 in g: the two are one value, 32.
  EXPECT_EQ(a.outputs[0].str(), "float[N,7,32]");
  EXPECT_EQ(a.outputs[1].str(), "float[N,7,1]");
  EXPECT_TRUE(a.problems.empty());
}

TEST(RuleEval, ContradictingInputsRuleTheLayoutOut) {
  OpRule r = parse_one("op X type T: tensor(float) layout (T[*B, D] x, T[D] g) => (T[*B, D] y)");
  Fact x = tensor(kFloat, {c(2), c(8)}), g = tensor(kFloat, {c(4)});
  auto a = apply(r, 1, {&x, &g});
  EXPECT_FALSE(a.layout);
  EXPECT_FALSE(a.outputs[0].known());
  ASSERT_EQ(a.problems.size(), 1u);
  EXPECT_THAT(a.problems[0], HasSubstr("input 1 (g) dim 0 is 4, not 8"));
}

TEST(RuleEval, UnknownRankLeavesTheLayoutUndecided) {
  OpRule r = parse_one(R"(op X type T: tensor(float)
    layout "3-D" (T[B, S, D] x) => (T[B, S] y)
    layout "any" (T[*R] x) => (T[*R] y))");
  Fact any;
  any.elem_type = kFloat;  // rank unknown
  auto a = apply(r, 1, {&any});
  EXPECT_FALSE(a.layout);  // the first layout may be the one: nothing is stated
  EXPECT_FALSE(a.outputs[0].known());
  EXPECT_TRUE(a.problems.empty());
  Fact two = tensor(kFloat, {c(2), c(3)});
  a = apply(r, 1, {&two});  // the first is ruled out: the second applies
  ASSERT_TRUE(a.layout);
  EXPECT_EQ(a.layout->label, "any");
  EXPECT_EQ(a.outputs[0].str(), "float[2,3]");
}

TEST(RuleEval, TypeConstraintsAndPresence) {
  OpRule r = parse_one("op X type T: tensor(float) layout (T[N] x, T[N]? b, ) => (T[N] y)");
  Fact x = tensor(kFloat, {c(3)}), i = tensor(kInt64, {c(3)});
  EXPECT_TRUE(apply(r, 1, {&x}).layout);
  EXPECT_TRUE(apply(r, 1, {&x, nullptr}).layout);
  auto a = apply(r, 1, {&i});
  EXPECT_THAT(a.problems[0], HasSubstr("input 0 (x) is int64, which type T does not allow"));
  a = apply(r, 1, {&x, &x, &x});
  EXPECT_THAT(a.problems[0], HasSubstr("input 2 must be left out"));
  a = apply(r, 1, {});
  EXPECT_THAT(a.problems[0], HasSubstr("input 0 (x) is required"));
}

TEST(RuleEval, AttributesDefaultsGuardsAndUnknownAttributes) {
  OpRule r = parse_one(R"(op X <k: int = 2, sizes: ints = []> type T: tensor(float)
    layout where len(@sizes) == 0 (T[N] x) => (T[N * @k] y))");
  Fact x = tensor(kFloat, {s("N")});
  EXPECT_EQ(apply(r, 1, {&x}).outputs[0].str(), "float[2*N]");
  EXPECT_EQ(apply(r, 1, {&x}, {int_attribute("k", 3)}).outputs[0].str(), "float[3*N]");
  auto a = apply(r, 1, {&x}, {int_attribute("kk", 3)});
  EXPECT_EQ(a.outputs[0].str(), "float[2*N]");
  EXPECT_THAT(a.problems[0], HasSubstr("attribute 'kk' is not an attribute of X"));
}

TEST(RuleEval, ValuesBindAndMaxOfSizesIsDecidedByDifferences) {
  OpRule r = parse_one("op X type T: tensor(float) layout (T[P] past, int64[*_] {L} total) => (T[max(P, L), min(P, L)] y)");
  Fact past = tensor(kFloat, {s("P")});
  Fact total = Fact::int_tensor(kInt64, {c(1)}, {s("P") + s("S")});
  EXPECT_EQ(apply(r, 1, {&past, &total}).outputs[0].str(), "float[P+S,P]");
  Fact unknown_total = tensor(kInt64, {c(1)});
  EXPECT_EQ(apply(r, 1, {&past, &unknown_total}).outputs[0].str(), "float[?,?]");
  Fact other = Fact::int_tensor(kInt64, {c(1)}, {s("T")});  // unrelated symbols: min and max terms
  EXPECT_EQ(apply(r, 1, {&past, &other}).outputs[0].str(), "float[max(P,T),min(P,T)]");
}

TEST(RuleEval, ShapeFunctionOutputsBecomeShapes) {
  OpRule r = parse_one(R"(op X type T: tensor(float) layout (T[*_] x) => (T y, T[_] z)
    shape (x) => (y) { y = Shape (x) })");
  Fact x = tensor(kFloat, {s("N"), c(2)});
  auto a = apply_rule(r, 2, {&x}, {}, [&](const onnx::FunctionProto& f, const std::vector<const Fact*>& in, const auto&) {
    EXPECT_EQ(f.input_size(), 1);
    EXPECT_EQ(in[0], &x);
    return std::vector<Fact>{Fact::int_tensor(kInt64, {c(3)}, {c(5), s("N"), c(-1)})};
  });
  EXPECT_EQ(a.outputs[0].str(), "float[5,N,?]");  // a negative dim is never stated
  EXPECT_EQ(a.outputs[1].str(), "float[?]");
}

TEST(ShippedRules, LoadAndCoverTheContribOps) {
  auto rules = builtin_op_rules();
  std::vector<std::string> ops;
  for (const auto& [op, file] : rules->list())
    if (op.find('-') == std::string::npos) ops.push_back(op);  // versions of ONNX's ops: below
  EXPECT_EQ(ops, (std::vector<std::string>{
                     "SimplifiedLayerNormalization", "com.microsoft.Attention", "com.microsoft.BiasGelu",
                     "com.microsoft.EmbedLayerNormalization", "com.microsoft.FastGelu", "com.microsoft.FusedMatMul",
                     "com.microsoft.Gelu", "com.microsoft.GroupNorm", "com.microsoft.GroupQueryAttention",
                     "com.microsoft.MatMulNBits", "com.microsoft.MultiHeadAttention", "com.microsoft.QuickGelu",
                     "com.microsoft.RotaryEmbedding", "com.microsoft.SkipLayerNormalization",
                     "com.microsoft.SkipSimplifiedLayerNormalization"}));
  EXPECT_TRUE(rules->find("ai.onnx", "SimplifiedLayerNormalization"));
  EXPECT_FALSE(rules->find("com.microsoft", "NoSuchOp"));
}

TEST(RuleParser, AVersionOfAnOnnxOpWithItsBody) {
  OpRule r = parse_one(R"(
    op Gated since 28 <alpha: float = 1.0>
    type T: tensor(float), tensor(float6e2m3)
    layout (T[*S] A, T[*S] B) => (T[*S] Y, _ state)
    body (A, B) => (Y) {
      g = Sigmoid (A)
      Y = Mul (g, B)
    }
  )");
  EXPECT_EQ(r.since, 28);
  EXPECT_EQ(r.versioned_name(), "Gated-28");
  EXPECT_EQ(r.types[0].allowed, (std::vector<int32_t>{kFloat, 27}));
  ASSERT_TRUE(r.body);
  EXPECT_EQ(r.body->node_size(), 2);
  EXPECT_EQ(r.body->attribute_size(), 1);
  EXPECT_EQ(r.layouts[0].outputs[1].pattern.type_name, "_");
  // The output stated as `_` stays unknown.
  const Fact a = tensor(kFloat, {s("N")});
  auto applied = apply(r, 2, {&a, &a});
  EXPECT_TRUE(applied.outputs[0].known());
  EXPECT_FALSE(applied.outputs[1].known());
  // An attribute the version does not declare leaves every output unknown.
  auto unknown = apply(r, 2, {&a, &a}, {int_attribute("beta", 1)});
  EXPECT_FALSE(unknown.outputs[0].known());
  EXPECT_THAT(unknown.problems.at(0), HasSubstr("attribute 'beta' is not an attribute of Gated-28"));
}

TEST(RuleParser, VersionsAndBodiesAreCheckedWhereWritten) {
  EXPECT_THAT(parse_error("op com.x.A since 28 type T: tensor(float) layout (T a) => (T b)").str(),
              HasSubstr("t.rule:1:12: error: 'since' versions ai.onnx ops only"));
  EXPECT_THAT(parse_error("op A since 26 type T: tensor(float) layout (T a) => (T b)").str(),
              HasSubstr("'since' takes an ai.onnx opset after 26 up to 28"));
  EXPECT_THAT(parse_error("op A type T: tensor(float) layout (T a) => (T b) body (a) => (b) { b = Relu (a) }").str(),
              HasSubstr("a 'body' belongs to a versioned ai.onnx op"));
}

TEST(Schemas, ShippedRulesStateEveryOpNewerThanTheLinkedOnnx) {
  auto rules = builtin_op_rules();
  for (const char* op : {"CausalConvWithState", "LinearAttention", "Range"}) EXPECT_TRUE(rules->find_version(op, 27)) << op;
  for (const char* op : {"Celu", "SwiGLU", "Cast", "QuantizeLinear", "DequantizeLinear", "DepthToSpace", "SpaceToDepth",
                         "Mod", "Einsum", "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax",
                         "ReduceMean", "ReduceMin", "ReduceProd", "ReduceSum", "ReduceSumSquare"})
    EXPECT_TRUE(rules->find_version(op, 28)) << op;
  ASSERT_TRUE(rules->find_version("SwiGLU", 28)->body);
  EXPECT_FALSE(rules->find("", "Celu"));  // a version is no rule for an op outside the registry
}

// Every shipped file is indexed by its `op` lines before it is read (load_op_rules): the
// index must be exactly what its rules state, or a rule would never be found.
TEST(ShippedRules, EachFilesOpLinesIndexExactlyItsRules) {
  const auto dir = builtin_schemas_dir();
  ASSERT_TRUE(dir);
  size_t files = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(*dir)) {
    if (entry.path().extension() != ".rule") continue;
    ++files;
    std::ifstream in(entry.path(), std::ios::binary);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto parsed = parse_rules(text, entry.path().string());
    ASSERT_TRUE(parsed.ok()) << parsed.error().str();
    std::vector<std::tuple<std::string, std::string, int>> stated;
    for (const auto& r : *parsed) stated.emplace_back(r.domain, r.op, r.since);
    const auto scanned = scan_rule_ops(text);
    ASSERT_TRUE(scanned) << entry.path();
    EXPECT_EQ(*scanned, stated) << entry.path();
    // In the folder of its domain (onnx: the default one), which is all load_op_rules
    // knows of the files until a lookup of an op of that domain lists them.
    const std::string top = entry.path().lexically_relative(*dir).begin()->string();
    for (const auto& [domain, op, since] : stated) EXPECT_EQ(domain, top == "onnx" ? "" : top) << entry.path();
  }
  EXPECT_GE(files, 28u);
  // And the builtin set is the deferred one: nothing read until an op is looked up.
  auto rules = load_op_rules({*dir});
  ASSERT_TRUE(rules.ok());
  EXPECT_EQ((*rules)->unread_files(), files);
}

// The shipped folder is listed only when a lookup needs it: most runs look up no op of
// the domains it holds (a model's functions are ops of domains of their own).
TEST(ShippedRules, AreListedAtTheFirstLookupOfAnOpOfADomainTheyHold) {
  const auto dir = builtin_schemas_dir();
  ASSERT_TRUE(dir);
  for (const char* domain : {"com.microsoft", "", "ai.onnx"}) {
    auto loaded = load_op_rules({*dir});
    ASSERT_TRUE(loaded.ok()) << loaded.error().str();
    const OpRules& rules = **loaded;
    EXPECT_FALSE(rules.listed());
    EXPECT_FALSE(rules.find("pkg.onnxscript.torch_lib", "aten_add"));
    EXPECT_FALSE(rules.find("com.example", "Gelu"));
    EXPECT_FALSE(rules.listed()) << domain;
    EXPECT_FALSE(rules.find(domain, "NoSuchOp"));
    EXPECT_TRUE(rules.listed()) << domain;
    EXPECT_TRUE(rules.find("com.microsoft", "Gelu"));
    EXPECT_TRUE(rules.find_version("Celu", 28));
  }
  // size(), list() and unread_files() list it too, and say what a folder read at load says.
  auto lazy = load_op_rules({*dir});
  auto eager = load_op_rules({*dir}, std::nullopt);
  ASSERT_TRUE(lazy.ok() && eager.ok());
  EXPECT_TRUE((*eager)->listed());
  EXPECT_EQ((*lazy)->size(), (*eager)->size());
  EXPECT_TRUE((*lazy)->listed());
  EXPECT_EQ((*lazy)->list(), (*eager)->list());
}

TEST(ShippedRules, AFolderAfterThemReplacesTheirRuleWithoutListingThem) {
  const auto dir = builtin_schemas_dir();
  ASSERT_TRUE(dir);
  testing::TempDir user;
  std::ofstream(user / "gelu.rule") << "op com.microsoft.Gelu\ntype T: tensor(float)\nlayout (T[*S] X) => (T[*S] Y)\n";
  auto loaded = load_op_rules({*dir, user.path()});
  ASSERT_TRUE(loaded.ok()) << loaded.error().str();
  const OpRules& rules = **loaded;
  const schemas::OpRule* gelu = rules.find("com.microsoft", "Gelu");
  ASSERT_TRUE(gelu);
  EXPECT_EQ(gelu->where.file, (user / "gelu.rule").generic_string());
  EXPECT_FALSE(rules.listed());
  ASSERT_TRUE(rules.find("com.microsoft", "FastGelu"));
  EXPECT_TRUE(rules.listed());
  EXPECT_EQ(rules.find("com.microsoft", "Gelu"), gelu);
  EXPECT_EQ(rules.find("com.microsoft", "FastGelu")->where.file, "schemas/com.microsoft/FastGelu.rule");
}

TEST(RuleScan, ReadsOpLinesAsTheParserDoes) {
  using Keys = std::vector<std::tuple<std::string, std::string, int>>;
  EXPECT_EQ(scan_rule_ops("# op com.x.Commented\nop com.x.A <a: int>\n  type T: tensor(float)\nop B since 28\n"
                          "\top ai.onnx.C   # a comment\nopening = 1\nop_d = Relu (x)\n"),
            (Keys{{"com.x", "A", 0}, {"", "B", 28}, {"", "C", 0}}));
  EXPECT_EQ(scan_rule_ops("layout (T a) => (T b)\n"), Keys{});
  // Lines it cannot index: the folder is then read in full at load.
  EXPECT_FALSE(scan_rule_ops("op\ncom.x.A\n"));
  EXPECT_FALSE(scan_rule_ops("op = Relu (x)\n"));
  EXPECT_FALSE(scan_rule_ops("op A since\n"));
  EXPECT_FALSE(scan_rule_ops("op A sinc 28\n"));
}

// A folder of rule files, deferred or read at load.
struct RuleFolder {
  testing::TempDir dir;
  void write(const std::string& name, const std::string& text) const { std::ofstream(dir / name) << text; }
  Result<std::shared_ptr<const OpRules>> load(bool deferred) const {
    return load_op_rules({dir.path()}, deferred ? std::optional(dir.path()) : std::nullopt);
  }
};

constexpr const char* kUnary = "type T: tensor(float)\nlayout (T[*S] X) => (T[*S] Y)\n";

TEST(DeferredRules, AFileIsReadAtTheFirstLookupOfOneOfItsOps) {
  RuleFolder folder;
  folder.write("a.rule", std::string("op com.x.A\n") + kUnary + "op com.x.B <k: int = 1>\n" + kUnary);
  folder.write("c.rule", std::string("op C since 28\n") + kUnary);
  auto loaded = folder.load(/*deferred=*/true);
  ASSERT_TRUE(loaded.ok()) << loaded.error().str();
  const OpRules& rules = **loaded;
  EXPECT_EQ(rules.size(), 3u);
  EXPECT_EQ(rules.unread_files(), 2u);
  EXPECT_FALSE(rules.find("com.x", "Z"));  // no file states it: none is read
  EXPECT_FALSE(rules.find_version("A", 28));
  EXPECT_EQ(rules.unread_files(), 2u);
  const schemas::OpRule* b = rules.find("com.x", "B");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->attributes.at(0).name, "k");
  EXPECT_EQ(rules.unread_files(), 1u);
  EXPECT_EQ(rules.find("com.x", "A")->op, "A");  // read already, with B
  EXPECT_EQ(rules.unread_files(), 1u);
  // list() reads the rest, and says what a folder read at load says.
  auto eager = folder.load(/*deferred=*/false);
  ASSERT_TRUE(eager.ok());
  EXPECT_EQ((*eager)->unread_files(), 0u);
  EXPECT_EQ(rules.list(), (*eager)->list());
  EXPECT_EQ(rules.unread_files(), 0u);
}

TEST(RuleFiles, AreReadWholeAndNamedByTheirPlaceInTheFolder) {
  RuleFolder folder;
  std::filesystem::create_directories(folder.dir.path() / "sub");
  // Longer than any one read, with a rule at its end.
  std::string text;
  while (text.size() < 100'000) text += "# a comment line, read and passed over by the parser\n";
  text += std::string("op com.x.Last\n") + kUnary;
  folder.write("sub/long.rule", text);
  folder.write("sub/bad.rule", "op com.x.Bad\nlayout (Q[*S] X) => (Q[*S] Y)\n");  // Q is no type
  auto loaded = folder.load(/*deferred=*/true);
  ASSERT_TRUE(loaded.ok()) << loaded.error().str();
  ASSERT_TRUE((*loaded)->find("com.x", "Last"));
  EXPECT_EQ((*loaded)->find("com.x", "Last")->where.file, (folder.dir.path() / "sub" / "long.rule").generic_string());
  try {
    (*loaded)->find("com.x", "Bad");
    ADD_FAILURE() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("sub/bad.rule:2:"));
  }
}

TEST(RuleFiles, OneThatCannotBeReadIsAnErrorNamingIt) {
  // A regular file whose read() fails: this process's memory at address 0 (EIO).
  RuleFolder folder;
  folder.write("good.rule", std::string("op com.x.Good\n") + kUnary);
  std::filesystem::create_symlink("/proc/self/mem", folder.dir.path() / "unreadable.rule");
  for (bool deferred : {true, false}) {
    auto loaded = folder.load(deferred);
    ASSERT_FALSE(loaded.ok());
    EXPECT_THAT(loaded.error().str(), HasSubstr("cannot read rule file"));
    EXPECT_THAT(loaded.error().str(), HasSubstr("unreadable.rule"));
  }
}

TEST(DeferredRules, AFileThatDoesNotReadIsAnErrorAtItsLookup) {
  RuleFolder folder;
  folder.write("bad.rule", "op com.x.Bad\nlayout (Q[*S] X) => (Q[*S] Y)\n");  // Q is no type
  folder.write("good.rule", std::string("op com.x.Good\n") + kUnary);
  // Read at load: the load fails, naming the place.
  auto eager = folder.load(/*deferred=*/false);
  ASSERT_FALSE(eager.ok());
  EXPECT_THAT(eager.error().str(), HasSubstr("bad.rule:2:"));
  // Deferred: the other file's ops are found; this one's lookup throws, naming the file.
  auto loaded = folder.load(/*deferred=*/true);
  ASSERT_TRUE(loaded.ok());
  EXPECT_TRUE((*loaded)->find("com.x", "Good"));
  try {
    (*loaded)->find("com.x", "Bad");
    ADD_FAILURE() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("bad.rule:2:"));
  }
  EXPECT_THROW((*loaded)->find("com.x", "Bad"), std::runtime_error);  // every time
}

TEST(DeferredRules, OpLinesThatMissARuleAreAnErrorAtTheFilesLookup) {
  // A rule that starts on the line of another's layout: the `op` lines index only the first.
  RuleFolder folder;
  folder.write("two.rule", "op com.x.A\ntype T: tensor(float)\nlayout (T a) => (T b) op com.x.B\ntype T: tensor(float)\n"
                           "layout (T a) => (T b)\n");
  auto loaded = folder.load(/*deferred=*/true);
  ASSERT_TRUE(loaded.ok());
  EXPECT_EQ((*loaded)->size(), 1u);
  EXPECT_THROW((*loaded)->find("com.x", "A"), std::runtime_error);
  auto eager = folder.load(/*deferred=*/false);
  ASSERT_TRUE(eager.ok());
  EXPECT_EQ((*eager)->size(), 2u);
}

TEST(DeferredRules, AFolderTheOpLinesCannotIndexIsReadAtLoad) {
  // An op named twice: the error a folder read at load gives, whether deferred or not.
  RuleFolder twice;
  twice.write("a.rule", std::string("op com.x.A\n") + kUnary);
  twice.write("b.rule", std::string("op com.x.A\n") + kUnary);
  for (bool deferred : {false, true}) {
    auto loaded = twice.load(deferred);
    ASSERT_FALSE(loaded.ok());
    EXPECT_THAT(loaded.error().str(), HasSubstr("a second rule for com.x.A (the first is at ")) << deferred;
  }
  RuleFolder unindexed;
  unindexed.write("a.rule", std::string("op\ncom.x.A\n") + kUnary);
  auto loaded = unindexed.load(/*deferred=*/true);
  ASSERT_TRUE(loaded.ok());
  EXPECT_EQ((*loaded)->unread_files(), 0u);
  EXPECT_TRUE((*loaded)->find("com.x", "A"));
}

TEST(DeferredRules, ThreadsLookUpAtOnce) {
  RuleFolder folder;
  for (int k = 0; k < 8; ++k)
    folder.write("r" + std::to_string(k) + ".rule", "op com.x.Op" + std::to_string(k) + "\n" + kUnary);
  auto loaded = folder.load(/*deferred=*/true);
  ASSERT_TRUE(loaded.ok());
  const OpRules& rules = **loaded;
  std::vector<std::thread> threads;
  std::vector<int> found(4, 0);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&rules, &found, t] {
      for (int k = 0; k < 8; ++k) found[static_cast<size_t>(t)] += rules.find("com.x", "Op" + std::to_string(k)) != nullptr;
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(found, std::vector<int>(4, 8));
  EXPECT_EQ(rules.unread_files(), 0u);
}

}  // namespace
}  // namespace shapeprop::schemas
