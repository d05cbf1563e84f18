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
#include "shapeprop/io.h"
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

}  // namespace
}  // namespace shapeprop
