// Inference speed, side by side with ONNX's own C++ in the same process, on the same
// model, each iteration on a fresh copy:
//   annotate: shapeprop::infer_shapes             vs  onnx::shape_inference::InferShapes
//   inline:   shapeprop::specialize(inline = all) vs  ONNX's inliner, then InferShapes
//   check:    shapeprop::check_model              vs  the inference a full check runs
//             (strict, no data propagation) with ONNX's registry; `check.registry` is
//             that inference through shapeprop::SchemaRegistry
// (ONNX's InferShapes with data propagation on, as `onnx-infer-baseline` runs it).
//
//   build/release/tools/shapeprop-bench [google benchmark flags] [MODEL.onnx ...]
//
// Without models it runs on the corpus's transformer_L2, transformer_L16 and sdpa;
// scripts/bench.sh passes the L-layer transformers that gen-transformer writes. Each
// benchmark reports, besides its time, `ratio` = its time / ONNX's time on that model.
#include <benchmark/benchmark.h>

#include <filesystem>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "onnx/defs/schema.h"
#include "onnx/inliner/inliner.h"
#include "onnx/shape_inference/implementation.h"
#include "shapeprop/check.h"
#include "shapeprop/infer.h"
#include "shapeprop/io.h"
#include "shapeprop/schema_registry.h"
#include "shapeprop/specialize.h"

namespace {

std::map<std::string, onnx::ModelProto> g_models;

const onnx::ModelProto& model(const std::string& path) {
  auto it = g_models.find(path);
  if (it != g_models.end()) return it->second;
  auto m = shapeprop::load_model(path);
  if (!m) {
    std::cerr << m.error().str() << '\n';
    std::exit(2);
  }
  return g_models.emplace(path, std::move(*m)).first->second;
}

void onnx_infer(onnx::ModelProto& m) {
  onnx::ShapeInferenceOptions options(/*check_type=*/false, /*error_mode=*/0, /*enable_data_propagation=*/true);
  onnx::shape_inference::InferShapes(m, onnx::OpSchemaRegistry::Instance(), options);
}

void onnx_annotate(benchmark::State& state, const std::string& path) {
  const onnx::ModelProto& m = model(path);
  for (auto _ : state) {
    onnx::ModelProto copy = m;
    onnx_infer(copy);
    benchmark::DoNotOptimize(copy);
  }
}

void onnx_inline(benchmark::State& state, const std::string& path) {
  const onnx::ModelProto& m = model(path);
  for (auto _ : state) {
    onnx::ModelProto copy = m;
    onnx::inliner::InlineLocalFunctions(copy, /*convert_version=*/false);
    onnx_infer(copy);
    benchmark::DoNotOptimize(copy);
  }
}

void shapeprop_annotate(benchmark::State& state, const std::string& path) {
  const onnx::ModelProto& m = model(path);
  for (auto _ : state) {
    onnx::ModelProto copy = m;
    auto r = shapeprop::infer_shapes(copy);
    benchmark::DoNotOptimize(r);
  }
}

void shapeprop_inline(benchmark::State& state, const std::string& path) {
  const onnx::ModelProto& m = model(path);
  shapeprop::TransformOptions options;
  options.inline_policy = shapeprop::InlinePolicy::All;
  for (auto _ : state) {
    onnx::ModelProto copy = m;
    auto r = shapeprop::specialize(copy, options);
    benchmark::DoNotOptimize(r);
  }
}

// What check_model(model, full_check=true) adds to the structural check: strict inference
// on a copy, without data propagation; with ONNX's registry, or with shapeprop's (built
// anew for each run, so that its memo starts empty).
void full_check_inference(benchmark::State& state, const std::string& path, bool with_shapeprop) {
  const onnx::ModelProto& m = model(path);
  const onnx::ShapeInferenceOptions strict(true, 1, false);
  for (auto _ : state) {
    onnx::ModelProto copy = m;
    if (with_shapeprop) {
      shapeprop::SchemaRegistry registry(m);
      onnx::shape_inference::InferShapes(copy, &registry, strict);
    } else {
      onnx::shape_inference::InferShapes(copy, onnx::OpSchemaRegistry::Instance(), strict);
    }
    benchmark::DoNotOptimize(copy);
  }
}

void shapeprop_check(benchmark::State& state, const std::string& path) {
  const onnx::ModelProto& m = model(path);
  for (auto _ : state) {
    auto found = shapeprop::check_model(m);
    benchmark::DoNotOptimize(found);
  }
}

// Reports each shapeprop benchmark's time as a ratio to ONNX's on the same model and job.
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    std::vector<Run> out = runs;
    for (auto& run : out) {
      const std::string name = run.benchmark_name();
      const bool ours = name.rfind("shapeprop_", 0) == 0;
      // "annotate/MODEL"; a variant "check.registry/MODEL" compares with "check/MODEL".
      std::string key = name.substr(name.find('_') + 1);
      if (auto dot = key.find('.'); dot != std::string::npos && dot < key.find('/')) key.erase(dot, key.find('/') - dot);
      const double t = run.GetAdjustedRealTime();
      if (!ours) {
        onnx_[key] = t;
      } else if (auto it = onnx_.find(key); it != onnx_.end() && it->second > 0) {
        run.counters["ratio"] = benchmark::Counter(t / it->second);
      }
    }
    ConsoleReporter::ReportRuns(out);
  }

 private:
  std::map<std::string, double> onnx_;
};

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  std::vector<std::string> paths(argv + 1, argv + argc);
  if (paths.empty())
    for (const char* name : {"transformer_L2.onnx", "transformer_L16.onnx", "sdpa.onnx"})
      paths.push_back(std::string(SHAPEPROP_CORPUS_DIR) + "/torchlib-2024-03/models/" + name);
  for (const auto& path : paths) {
    const std::string m = std::filesystem::path(path).filename().string();
    // ONNX's run first, so that the reporter has it when shapeprop's arrives.
    benchmark::RegisterBenchmark(("onnx_annotate/" + m).c_str(), onnx_annotate, path)->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("shapeprop_annotate/" + m).c_str(), shapeprop_annotate, path)->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("onnx_inline/" + m).c_str(), onnx_inline, path)->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("shapeprop_inline/" + m).c_str(), shapeprop_inline, path)->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("onnx_check/" + m).c_str(), full_check_inference, path, false)->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("shapeprop_check.registry/" + m).c_str(), full_check_inference, path, true)
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("shapeprop_check/" + m).c_str(), shapeprop_check, path)->Unit(benchmark::kMillisecond);
  }
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return 0;
}
