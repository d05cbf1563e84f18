// Unit tests of shapeprop::run (shapeprop/driver.h), the one pipeline of the CLI and the
// Python package: the options it refuses, the statuses, the steps it reports, and the
// rules reaching every job, the check's included.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "shapeprop/driver.h"
#include "shapeprop/infer.h"
#include "shapeprop/io.h"
#include "shapeprop/specialize.h"
#include "test_util.h"

namespace shapeprop {
namespace {

namespace fs = std::filesystem;
using testing::parse_or_fail;

constexpr const char* kVendorModel = R"(
<ir_version: 10, opset_import: ["" : 18, "my.ops" : 1]>
main (float[4, 5] x) => (float[4, 6] y) {
  y = my.ops.Double (x)
}
)";

// A folder holding one rule, for my.ops.Double (elementwise).
fs::path rules_folder() {
  const fs::path dir = fs::temp_directory_path() / ("shapeprop_driver_rules_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "double.rule") << "op my.ops.Double\ntype T: tensor(float)\nlayout (T[*S] X) => (T[*S] Y)\n";
  return dir;
}

JobOptions bytes_job(JobKind kind, const onnx::ModelProto& model) {
  JobOptions job;
  job.kind = kind;
  job.bytes = model.SerializeAsString();
  job.origin = "m.onnx";
  return job;
}

std::vector<std::string> errors(const Report& report) {
  std::vector<std::string> out;
  for (const auto& d : report.diagnostics)
    if (d.severity == Severity::Error) out.push_back(d.message);
  return out;
}

TEST(Driver, RefusesOptionsThatDoNotApplyNamingThem) {
  const auto model = parse_or_fail(kVendorModel);
  JobOptions job = bytes_job(JobKind::Annotate, model);
  job.transform.keep = {{"", "x"}};
  auto done = run(job);
  ASSERT_FALSE(done);
  EXPECT_EQ(done.error().message, "keep applies to a transform only");

  job = bytes_job(JobKind::Check, model);
  job.output = "out.onnx";
  done = run(job);
  ASSERT_FALSE(done);
  EXPECT_NE(done.error().message.find("a check writes nothing"), std::string::npos);

  JobOptions none;
  done = run(none);
  ASSERT_FALSE(done);
  EXPECT_EQ(done.error().message, "no input model given");
}

TEST(Driver, TheCheckReadsTheUserRulesAsTheOtherJobsDo) {
  const auto model = parse_or_fail(kVendorModel);
  const fs::path rules = rules_folder();

  JobOptions check = bytes_job(JobKind::Check, model);
  auto unknown = run(check);
  ASSERT_TRUE(unknown);
  ASSERT_EQ(errors(unknown->report).size(), 1u);
  EXPECT_NE(errors(unknown->report)[0].find("no schema or rule for my.ops.Double"), std::string::npos);

  check.schema_dirs = {rules};
  auto found = run(check);
  ASSERT_TRUE(found);
  EXPECT_EQ(found->status, JobStatus::ProblemsFound);
  EXPECT_FALSE(found->report.ok);
  ASSERT_EQ(errors(found->report).size(), 1u);
  EXPECT_NE(errors(found->report)[0].find("'y' is declared float[4,6] (graph output) but proven float[4,5]"),
            std::string::npos);

  JobOptions annotate = bytes_job(JobKind::Annotate, model);
  annotate.schema_dirs = {rules};
  auto typed = run(annotate);
  ASSERT_TRUE(typed);
  EXPECT_EQ(typed->status, JobStatus::Ok);
  ASSERT_TRUE(typed->model);
  const auto& dims = typed->model->graph().output(0).type().tensor_type().shape().dim();
  ASSERT_EQ(dims.size(), 2);
  EXPECT_EQ(dims[1].dim_value(), 5);  // proven, in place of the declared 6
  fs::remove_all(rules);
}

TEST(Driver, TellsEachStepAndStopsAtTheFirstError) {
  onnx::ModelProto model = parse_or_fail(kVendorModel);
  model.mutable_graph()->mutable_node(0)->add_input("undefined");  // a second input nothing defines
  JobOptions job = bytes_job(JobKind::Transform, model);
  std::vector<Step> told;
  job.on_diagnostics = [&](Step step, const Diagnostics&) { told.push_back(step); };
  auto done = run(job);
  ASSERT_TRUE(done);
  EXPECT_EQ(done->status, JobStatus::BadInput);
  EXPECT_FALSE(done->model && done->report.ok);
  ASSERT_FALSE(told.empty());
  EXPECT_EQ(told.back(), Step::Validation);
  EXPECT_EQ(std::count(told.begin(), told.end(), Step::Process), 0);
}

TEST(Driver, TheOutputReplacesTheInputOnlyWhenAskedTo) {
  const fs::path dir = fs::temp_directory_path() / ("shapeprop_driver_io_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path path = dir / "m.onnx";
  ASSERT_TRUE(save_model(parse_or_fail(R"(
<ir_version: 10, opset_import: ["" : 18]>
main (float[4, 5] x) => (y) {
  y = Relu (x)
}
)"),
                         path, Format::Binary));
  const auto before = fs::file_size(path);
  JobOptions job;
  job.input = path;
  job.output = path;
  auto refused = run(job);
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, JobStatus::BadInput);
  EXPECT_EQ(fs::file_size(path), before);  // untouched

  job.replace_input = true;
  auto replaced = run(job);
  ASSERT_TRUE(replaced);
  EXPECT_EQ(replaced->status, JobStatus::Ok);
  auto again = load_model(path);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->graph().output(0).type().tensor_type().shape().dim_size(), 2);  // y is typed now
  fs::remove_all(dir);
}

// Models ONNX's checker refuses and shapeprop's own validation lets pass: each reaches
// ONNX's checker, so with JobOptions::check_alongside the first analysis reads it.
const std::vector<std::pair<const char*, const char*>> kRefusedByOnnxChecker = {
    {"two inputs to Relu", R"(
<ir_version: 10, opset_import: ["" : 18]>
main (float[4, 5] x) => (y) {
  y = Relu (x, x)
}
)"},
    {"a float axis", R"(
<ir_version: 10, opset_import: ["" : 18]>
main (float[4, 5] x) => (y) {
  y = Concat <axis = 1.5> (x, x)
}
)"},
    {"a value defined twice", R"(
<ir_version: 10, opset_import: ["" : 18]>
main (float[4, 5] x) => (y) {
  y = Relu (x)
  y = Abs (x)
}
)"},
    {"a float perm in a function's body", R"(
<ir_version: 10, opset_import: ["" : 18, "local" : 1]>
main (float[4, 5] x) => (y) {
  t = local.F (x)
  y = local.F (t)
}
<domain: "local", opset_import: ["" : 18]>
F (a) => (b) {
  b = Transpose <perm = [1.0, 0.0]> (a)
}
)"},
};

// What a run told, step by step, and the phases the library announced.
struct Told {
  std::vector<std::pair<Step, std::vector<std::string>>> steps;
  std::vector<std::string> phases;
};

Result<JobOutcome> run_telling(JobOptions job, Told& told) {
  job.on_diagnostics = [&told](Step step, const Diagnostics& found) {
    std::vector<std::string> lines;
    for (const auto& d : found) lines.push_back(d.str());
    told.steps.emplace_back(step, std::move(lines));
  };
  job.transform.infer.on_phase = [&told](std::string_view phase) { told.phases.emplace_back(phase); };
  return run(job);
}

// A job of `kind` on `model` with its result as bytes (a transform inlines every call), run
// with ONNX's checker before the analysis (telling `before`) and beside it (`alongside`).
std::pair<Result<JobOutcome>, Result<JobOutcome>> run_both_ways(JobKind kind, const onnx::ModelProto& model,
                                                                Told& before, Told& alongside) {
  JobOptions job = bytes_job(kind, model);
  job.sink = JobOptions::Sink::Bytes;
  if (kind == JobKind::Transform) job.transform.inline_policy = InlinePolicy::All;
  job.check_alongside = false;
  auto first = run_telling(job, before);
  job.check_alongside = true;
  return {std::move(first), run_telling(job, alongside)};
}

// The model's runs with the checker alongside and before give the same: refused by ONNX's
// checker, as validation's one report, and nothing else told; the analysis started.
void expect_refused_alike(const onnx::ModelProto& model) {
  for (JobKind kind : {JobKind::Annotate, JobKind::Transform}) {
    Told before, alongside;
    auto [first, second] = run_both_ways(kind, model, before, alongside);
    ASSERT_TRUE(first && second);
    // Refused by ONNX's checker, not by shapeprop's validation.
    ASSERT_EQ(errors(first->report).size(), 1u);
    EXPECT_EQ(errors(first->report)[0].rfind("ONNX checker: ", 0), 0u) << errors(first->report)[0];
    EXPECT_EQ(second->status, JobStatus::BadInput);
    EXPECT_FALSE(second->model);
    EXPECT_FALSE(second->bytes);
    EXPECT_EQ(errors(second->report), errors(first->report));
    EXPECT_EQ(alongside.steps, before.steps);
    // The checker ran beside the first analysis: the analysis started, the run stopped
    // where it would first write (no specialization, no annotation).
    EXPECT_EQ(before.phases, (std::vector<std::string>{"load", "validation"}));
    EXPECT_EQ(alongside.phases, (std::vector<std::string>{"load", "validation", "analysis"}));
  }
}

TEST(Driver, AModelOnnxsCheckerRefusesEndsTheRunAsWhenTheCheckerRanFirst) {
  for (const auto& [what, text] : kRefusedByOnnxChecker) {
    SCOPED_TRACE(what);
    expect_refused_alike(parse_or_fail(text));
  }
  // An Add with no output: ONNX's inference of Add writes output 0 unasked (a crash of the
  // analysis once, found by fuzz-model_binary: tools/fuzz/regressions/model_binary/
  // add_without_output_refused_by_checker).
  SCOPED_TRACE("an Add with no output");
  onnx::ModelProto model = parse_or_fail(R"(
<ir_version: 10, opset_import: ["" : 18]>
main (float[4, 5] x) => (y) {
  s = Add (x, x)
  y = Relu (x)
}
)");
  model.mutable_graph()->mutable_node(0)->clear_output();
  expect_refused_alike(model);
}

TEST(Driver, TheCheckerAlongsideChangesNoResult) {
  const onnx::ModelProto model = parse_or_fail(R"(
<ir_version: 10, opset_import: ["" : 18, "local" : 1]>
main (float[4, 5] x) => (y) {
  t = local.F (x)
  y = local.F (t)
}
<domain: "local", opset_import: ["" : 18]>
F (a) => (b) {
  r = Shape (a)
  n = Size (r)
  b = Transpose <perm = [1, 0]> (a)
}
)");
  for (JobKind kind : {JobKind::Annotate, JobKind::Transform}) {
    Told before, alongside;
    auto [first, second] = run_both_ways(kind, model, before, alongside);
    ASSERT_TRUE(first && second);
    EXPECT_EQ(second->status, JobStatus::Ok);
    ASSERT_TRUE(first->bytes && second->bytes);
    EXPECT_EQ(*second->bytes, *first->bytes);
    EXPECT_EQ(alongside.steps, before.steps);
    EXPECT_EQ(alongside.phases, before.phases);
  }
}

// InferOptions::before_writing: called after the analysis, before the first write; its
// error ends the run with the model as it was, even one given up (consume_input).
TEST(BeforeWriting, ItsErrorEndsTheRunBeforeTheModelIsWritten) {
  const onnx::ModelProto model = parse_or_fail(kRefusedByOnnxChecker.back().second);
  const std::string bytes = model.SerializeAsString();
  std::vector<std::string> order;
  InferOptions options;
  options.on_phase = [&order](std::string_view phase) { order.emplace_back(phase); };
  options.before_writing = [&order]() -> Status {
    order.push_back("before writing");
    return Diagnostic::error("stop here");
  };
  onnx::ModelProto annotated = model;
  auto inferred = infer_shapes(annotated, options);
  ASSERT_FALSE(inferred);
  EXPECT_EQ(inferred.error().message, "stop here");
  EXPECT_EQ(annotated.SerializeAsString(), bytes);
  EXPECT_EQ(order, (std::vector<std::string>{"analysis", "before writing"}));

  order.clear();
  TransformOptions transform;
  transform.infer = options;
  transform.inline_policy = InlinePolicy::All;
  transform.consume_input = true;
  onnx::ModelProto flat = model;
  auto done = specialize(flat, transform);
  ASSERT_FALSE(done);
  EXPECT_EQ(done.error().message, "stop here");
  EXPECT_EQ(flat.SerializeAsString(), bytes);
  EXPECT_EQ(order, (std::vector<std::string>{"analysis", "before writing"}));

  // Going on, it is asked again before each round writes, and the result is the same.
  size_t asked = 0;
  transform.infer.before_writing = [&asked]() -> Status {
    ++asked;
    return Ok{};
  };
  transform.infer.on_phase = nullptr;
  const onnx::ModelProto valid = parse_or_fail(kVendorModel);
  onnx::ModelProto gated = valid, plain = valid;
  TransformOptions without = transform;
  without.infer.before_writing = nullptr;
  ASSERT_TRUE(specialize(gated, transform));
  ASSERT_TRUE(specialize(plain, without));
  EXPECT_GE(asked, 1u);
  EXPECT_EQ(gated.SerializeAsString(), plain.SerializeAsString());
}

}  // namespace
}  // namespace shapeprop
