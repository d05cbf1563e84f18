// transform::inline_selected_functions against ONNX's own inliner: the same model out,
// byte for byte, on every corpus model, every golden test's input, and cases written for
// what ONNX's renaming does (calls in subgraphs, calls in inlined bodies, attribute
// references, omitted inputs and outputs, callee value_info, functions kept and inlined
// into).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <functional>
#include <sstream>
#include <unordered_map>

#include "onnx/common/version.h"
#include "onnx/inliner/inliner.h"
#include "shapeprop/call_graph.h"
#include "shapeprop/io.h"
#include "test_util.h"
#include "transform/inline.h"

namespace shapeprop {
namespace {

std::string bytes_of(const onnx::ModelProto& m) {
  auto s = serialize_model(m);
  return s.ok() ? *s : std::string("<unserializable>");
}

// From ONNX 1.18 on, ONNX's inliner numbers the calls it inlines into a function that
// stays on from the main graph's count, and avoids the main graph's names there; 1.17's
// numbers each function body on its own, as ours does under every ONNX (a body's names are
// its own, and an output must not depend on the ONNX shapeprop is built with). Those
// bodies then agree up to the names they define.
bool onnx_numbers_kept_bodies_on_from_the_graph() {
  int major = 0, minor = 0;
  return std::sscanf(onnx::LAST_RELEASE_VERSION, "%d.%d", &major, &minor) == 2 && (major > 1 || minor >= 18);
}

// The function with every name its nodes define (in subgraphs too) replaced by its rank
// in order of definition; its inputs and outputs keep theirs.
onnx::FunctionProto with_defined_names_numbered(onnx::FunctionProto f) {
  std::unordered_map<std::string, std::string> number;
  auto define = [&](const std::string& name) {
    if (name.empty() || std::count(f.output().begin(), f.output().end(), name)) return;
    number.try_emplace(name, "v" + std::to_string(number.size()));
  };
  auto rename = [&](std::string* name) {
    if (auto it = number.find(*name); it != number.end()) *name = it->second;
  };
  std::function<void(google::protobuf::RepeatedPtrField<onnx::NodeProto>*, bool)> nodes =
      [&](google::protobuf::RepeatedPtrField<onnx::NodeProto>* list, bool defining) {
        for (auto& n : *list) {
          if (defining)
            for (const auto& o : n.output()) define(o);
          for (auto& a : *n.mutable_attribute()) {
            std::vector<onnx::GraphProto*> graphs;
            if (a.has_g()) graphs.push_back(a.mutable_g());
            for (auto& g : *a.mutable_graphs()) graphs.push_back(&g);
            for (auto* g : graphs) {
              if (defining)
                for (const auto& vi : g->input()) define(vi.name());
              nodes(g->mutable_node(), defining);
              if (defining) continue;
              for (auto* vis : {g->mutable_input(), g->mutable_output(), g->mutable_value_info()})
                for (auto& vi : *vis) rename(vi.mutable_name());
            }
          }
          if (defining) continue;
          for (auto& i : *n.mutable_input()) rename(&i);
          for (auto& o : *n.mutable_output()) rename(&o);
        }
      };
  nodes(f.mutable_node(), true);
  nodes(f.mutable_node(), false);
  for (auto& vi : *f.mutable_value_info()) rename(vi.mutable_name());
  return f;
}

// Both inliners on copies of `model`, selecting `selected` (all functions when empty):
// equal outputs, or both refusing.
void expect_same_as_onnx(const onnx::ModelProto& model, std::vector<std::pair<std::string, std::string>> selected = {}) {
  if (selected.empty())
    for (const auto& f : model.functions()) selected.emplace_back(f.domain(), f.name());
  onnx::ModelProto theirs = model, ours = model;
  std::string their_error, our_error;
  try {
    auto set = onnx::inliner::FunctionIdSet::Create(onnx::inliner::FunctionIdVector(selected));
    onnx::inliner::InlineSelectedFunctions(theirs, *set);
  } catch (const std::exception& e) {
    their_error = e.what();
  }
  try {
    transform::inline_selected_functions(ours, selected);
  } catch (const std::exception& e) {
    our_error = e.what();
  }
  EXPECT_EQ(our_error.empty(), their_error.empty()) << "ours: " << our_error << "\ntheirs: " << their_error;
  if (!our_error.empty() || !their_error.empty()) return;
  if (onnx_numbers_kept_bodies_on_from_the_graph())
    for (auto* m : {&ours, &theirs})
      for (auto& f : *m->mutable_functions()) f = with_defined_names_numbered(f);
  EXPECT_EQ(bytes_of(ours), bytes_of(theirs));
}

bool passes_an_input_through(const onnx::ModelProto& model) {
  for (const auto& f : model.functions())
    for (const auto& out : f.output())
      if (std::find(f.input().begin(), f.input().end(), out) != f.input().end()) return true;
  return false;
}

TEST(Inline, SameAsOnnxOnTheCorpus) {
  size_t with_functions = 0;
  for (const auto& path : testing::files_under(testing::corpus_dir(), ".onnx")) {
    SCOPED_TRACE(path.string());
    auto model = load_model(path);
    if (!model) continue;  // the deliberately malformed one
    with_functions += model->functions_size() > 0;
    expect_same_as_onnx(*model);
  }
  EXPECT_GE(with_functions, 25u);
}

TEST(Inline, SameAsOnnxOnEveryGoldenInput) {
  size_t compared = 0;
  for (const auto& path : testing::files_under(std::filesystem::path(testing::kSourceDir) / "tests" / "golden", ".onnxtxt")) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    auto model = parse_model_text(text.str(), path.string());
    // Recursive functions (which both inliners would unfold without end) are rejected
    // before anything inlines; a function output that is one of its inputs is where the
    // inliners differ on purpose (OutputThatIsAnInputIsCopied).
    if (!model || model->functions_size() == 0 || !CallGraph::build(*model) || passes_an_input_through(*model)) continue;
    SCOPED_TRACE(path.string());
    expect_same_as_onnx(*model);
    ++compared;
  }
  EXPECT_GE(compared, 20u);
}

TEST(Inline, SameAsOnnxOnRenamingCases) {
  // Calls inside If branches and inside an inlined body, a node name, an omitted input and
  // output, a name the graph already has (temp__1 exists), attribute references with and
  // without a value at the call, callee value_info, and a subgraph inside a callee.
  const char* text = R"ONNX(
<ir_version: 10, opset_import: ["" : 18, "local" : 1]>
g (float[2] x, bool c) => (float[2] y, float[2] z) {
  temp__1 = Identity (x)
  a, b = local.Twice <alpha: float = 2.0> (x, temp__1)
  y = If (c) <
    then_branch = t () => (float[2] ty) { ty, unused = local.Twice (a, ) },
    else_branch = e () => (float[2] ey) { ey = local.Outer (b) }
  >
  z, = local.Twice (y, )
}
<domain: "local", opset_import: ["" : 18, "local" : 1]>
Twice <alpha: float = 1.0> (p, q) => (r, s) {
  temp = Mul (p, p)
  scaled = Constant <value_float: float = @alpha> ()
  named_node = Identity (temp)
  r = Add (named_node, scaled)
  s = Identity (r)
}
<domain: "local", opset_import: ["" : 18, "local" : 1]>
Outer (u) => (v) {
  w, = local.Twice (u, )
  v = If (w_cond) <then_branch = t2 () => (float[2] o) { o = Identity (w) }, else_branch = e2 () => (float[2] o) { o = Neg (w) }>
}
)ONNX";
  auto model = testing::parse_or_fail(text);
  // Give one body value_info, as an IR-10 exporter would write it.
  for (auto& f : *model.mutable_functions())
    if (f.name() == "Twice") {
      auto* vi = f.add_value_info();
      vi->set_name("temp");
      vi->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
    }
  expect_same_as_onnx(model);
  expect_same_as_onnx(model, {{"local", "Twice"}});  // Outer stays, and Twice is inlined into it
  expect_same_as_onnx(model, {{"local", "Outer"}});  // Outer's body keeps calling Twice
}

// Where ONNX's inliner leaves a call's output undefined (a function output that is one of
// its inputs), ours copies the input with an Identity; the body still reads the input.
TEST(Inline, OutputThatIsAnInputIsCopied) {
  auto model = testing::parse_or_fail(R"ONNX(
<ir_version: 10, opset_import: ["" : 18, "local" : 1]>
g (float[2] a) => (float[2] y, float[2] z) { y, z = local.Pair (a) }
<domain: "local", opset_import: ["" : 18]>
Pair (x) => (x, r) { r = Neg (x) }
)ONNX");
  transform::inline_selected_functions(model, {{"local", "Pair"}});
  ASSERT_EQ(model.graph().node_size(), 2);
  EXPECT_EQ(model.graph().node(0).op_type(), "Neg");
  EXPECT_EQ(model.graph().node(0).input(0), "a");
  EXPECT_EQ(model.graph().node(0).output(0), "z");
  EXPECT_EQ(model.graph().node(1).op_type(), "Identity");
  EXPECT_EQ(model.graph().node(1).input(0), "a");
  EXPECT_EQ(model.graph().node(1).output(0), "y");
}

TEST(Inline, RefusesFunctionsThatDisagreeOnAnOpset) {
  auto model = testing::parse_or_fail(R"ONNX(
<ir_version: 10, opset_import: ["" : 18, "local" : 1]>
g (float[2] x) => (float[2] y) { y = local.F (x) }
<domain: "local", opset_import: ["" : 17]>
F (p) => (q) { q = Neg (p) }
)ONNX");
  onnx::ModelProto ours = model;
  EXPECT_THROW(transform::inline_selected_functions(ours, {{"local", "F"}}), std::runtime_error);
  expect_same_as_onnx(model);
}

}  // namespace
}  // namespace shapeprop
