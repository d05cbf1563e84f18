// Analyses at once in one process, as the Python package runs them (it releases the GIL
// around shapeprop::run, python/src/run.cc) and as an exporter linking the library may:
// every result of a run among others (different models, and the same model, in several
// threads) equals the result of the same run alone. The tsan preset builds these tests
// under ThreadSanitizer (scripts/test.sh runs them there), which reports any access to
// shared state that is not synchronized, whether or not a result came out wrong;
// docs/library.md, "Concurrency", lists what is shared.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <latch>
#include <string>
#include <thread>
#include <vector>

#include "shapeprop/check.h"
#include "shapeprop/driver.h"
#include "shapeprop/infer.h"
#include "shapeprop/io.h"
#include "shapeprop/report.h"
#include "shapeprop/specialize.h"
#include "test_util.h"

namespace shapeprop {
namespace {

namespace fs = std::filesystem;
using testing::corpus_dir;

// What a run gives back, without its times (which differ from run to run).
std::string outcome_text(const Result<JobOutcome>& done) {
  if (!done) return "error: " + done.error().str();
  Report report = done->report;
  report.phases.clear();
  report.pass_times = PassTimes();
  return std::to_string(static_cast<int>(done->status)) + "\n" + done->bytes.value_or("<no bytes>") + "\n" +
         to_json(report);
}

// Writes one rule, for my.ops.Double, into `dir` (read by every run that names it, as the
// Python package's `schemas` does).
void write_rules(const fs::path& dir) {
  std::ofstream(dir / "double.rule") << "op my.ops.Double\ntype T: tensor(float)\nlayout (T[*S] X) => (T[*S] Y)\n";
}

constexpr const char* kVendorModel = R"(
<ir_version: 10, opset_import: ["" : 18, "my.ops" : 1]>
main (float[batch, 5] x) => (y) {
  d = my.ops.Double (x)
  y = Relu (d)
}
)";

// The jobs the Python package's functions run: infer_shapes, specialize (inline none,
// small, all), check_model, each with its report; on the corpus's models (torchlib's
// local functions, a convolution, a dynamo export) and on one that needs the rules
// folder `rules` (which the caller owns and removes).
std::vector<std::function<Result<JobOutcome>()>> jobs(const fs::path& rules) {
  const fs::path models = corpus_dir() / "torchlib-2024-03" / "models";
  auto job = [](JobKind kind, fs::path input, InlinePolicy policy = InlinePolicy::None) {
    return [kind, input, policy]() {
      JobOptions o;
      o.kind = kind;
      o.input = input;
      o.transform.inline_policy = policy;
      if (kind != JobKind::Check) o.sink = JobOptions::Sink::Bytes;
      o.count = true;
      o.verify_full_check = kind != JobKind::Check;
      return run(o);
    };
  };
  write_rules(rules);
  const std::string vendor = parse_model_text(kVendorModel, "<vendor>")->SerializeAsString();
  return {
      job(JobKind::Annotate, models / "transformer_L2.onnx"),
      job(JobKind::Transform, models / "transformer_L2.onnx", InlinePolicy::All),
      job(JobKind::Transform, models / "sdpa.onnx", InlinePolicy::Small),
      job(JobKind::Check, models / "transformer_L2.onnx"),
      job(JobKind::Annotate, corpus_dir() / "torch-dynamo" / "dort_debug_7951_conv_maxpool.onnx"),
      job(JobKind::Transform, corpus_dir() / "torch-dynamo" / "dort_llama_model_1_inlined.onnx", InlinePolicy::None),
      job(JobKind::Transform, corpus_dir() / "functions" / "onnxscript_gemmgelu.onnx", InlinePolicy::None),
      [rules, vendor]() {
        JobOptions o;
        o.bytes = vendor;
        o.origin = "vendor.onnx";
        o.schema_dirs = {rules};
        o.sink = JobOptions::Sink::Bytes;
        return run(o);
      },
  };
}

// Runs `threads` threads each running every job `rounds` times (thread t starts at job
// t, so that different models and the same model are analysed at once), then every job
// once alone, and compares. The threads come first: in a process of its own (as
// scripts/test-tsan.sh runs this file) they are the first users of what the library
// makes on first use (the shipped rules, ONNX's registry, Dim's tables).
void runs_at_once_agree(size_t threads, size_t rounds) {
  const testing::TempDir rules;  // removed when the test ends
  const auto work = jobs(rules.path());
  std::vector<std::vector<std::string>> got(threads);
  std::vector<std::thread> pool;
  std::latch start(static_cast<std::ptrdiff_t>(threads));  // all at once, not as each thread is made
  for (size_t t = 0; t < threads; ++t)
    pool.emplace_back([&, t]() {
      start.arrive_and_wait();
      for (size_t r = 0; r < rounds; ++r)
        for (size_t i = 0; i < work.size(); ++i) got[t].push_back(outcome_text(work[(t + i) % work.size()]()));
    });
  for (auto& th : pool) th.join();
  std::vector<std::string> alone;
  for (const auto& j : work) {
    const auto done = j();
    // Each job succeeds alone: a failure would compare equal too easily.
    ASSERT_TRUE(done.ok() && done->status == JobStatus::Ok) << alone.size() << ": " << outcome_text(done);
    alone.push_back(outcome_text(done));
  }
  for (size_t t = 0; t < threads; ++t)
    for (size_t k = 0; k < got[t].size(); ++k)
      EXPECT_EQ(got[t][k], alone[(t + k) % work.size()]) << "thread " << t << ", run " << k;
}

TEST(Concurrency, RunsOfDifferentModelsAndOfOneModelAtOnceGiveWhatEachGivesAlone) { runs_at_once_agree(4, 2); }

// The library's own functions on one model that every thread reads (a const ModelProto
// read at once is safe, protobuf says): check_model on it, and infer_shapes and
// specialize on copies of it.
TEST(Concurrency, LibraryCallsOnOneSharedModel) {
  auto model = load_model(corpus_dir() / "torchlib-2024-03" / "models" / "sdpa.onnx");
  ASSERT_TRUE(model.ok());
  const onnx::ModelProto& shared = *model;
  auto analyse = [&shared]() {
    std::string out;
    onnx::ModelProto annotated = shared;
    auto inferred = infer_shapes(annotated);
    out += inferred ? annotated.SerializeAsString() : inferred.error().str();
    TransformOptions transform;
    transform.inline_policy = InlinePolicy::All;
    onnx::ModelProto flat = shared;
    auto specialized = specialize(flat, transform);
    out += specialized ? flat.SerializeAsString() : specialized.error().str();
    for (const auto& d : check_model(shared)) out += d.str() + "\n";
    return out;
  };
  const std::string alone = analyse();
  std::vector<std::string> got(3);
  std::vector<std::thread> pool;
  for (size_t t = 0; t < got.size(); ++t) pool.emplace_back([&, t]() { got[t] = analyse(); });
  for (auto& th : pool) th.join();
  for (const auto& g : got) EXPECT_EQ(g, alone);
}

}  // namespace
}  // namespace shapeprop
