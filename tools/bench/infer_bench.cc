// Inference speed, side by side with ONNX's own C++ inference in the same process:
// shapeprop's annotate (infer_shapes) and --mode inline (specialize) against
// onnx::shape_inference::InferShapes, on corpus models; and the inference a full check
// runs (strict, no data propagation) through ONNX's own registry and through
// shapeprop::SchemaRegistry, next to shapeprop's own checker (check_model).
//
//   build/release/tools/shapeprop-bench [--benchmark_filter=...] [CORPUS_DIR]
#include <benchmark/benchmark.h>

#include <filesystem>
#include <iostream>

#include "onnx/defs/schema.h"
#include "onnx/shape_inference/implementation.h"
#include "shapeprop/check.h"
#include "shapeprop/infer.h"
#include "shapeprop/io.h"
#include "shapeprop/schema_registry.h"
#include "shapeprop/specialize.h"

namespace {

std::filesystem::path g_corpus = SHAPEPROP_CORPUS_DIR;

onnx::ModelProto load(const std::string& name) {
  auto m = shapeprop::load_model(g_corpus / "torchlib-2024-03" / "models" / name);
  if (!m) {
    std::cerr << m.error().str() << '\n';
    std::exit(2);
  }
  return *m;
}

void onnx_infer(benchmark::State& state, const std::string& name) {
  const onnx::ModelProto model = load(name);
  for (auto _ : state) {
    onnx::ModelProto copy = model;
    onnx::ShapeInferenceOptions options(false, 0, true);
    onnx::shape_inference::DataValueMap data;
    onnx::shape_inference::InferShapes(copy, onnx::OpSchemaRegistry::Instance(), options, &data);
    benchmark::DoNotOptimize(copy);
  }
}

// What check_model(model, full_check=true) adds to the structural check: strict inference
// on a copy, without data propagation; with ONNX's registry, or with shapeprop's (built
// anew for each run, so that its memo starts empty).
void onnx_full_check_inference(benchmark::State& state, const std::string& name, bool with_shapeprop) {
  const onnx::ModelProto model = load(name);
  const onnx::ShapeInferenceOptions strict(true, 1, false);
  for (auto _ : state) {
    onnx::ModelProto copy = model;
    if (with_shapeprop) {
      shapeprop::SchemaRegistry registry(model);
      onnx::shape_inference::InferShapes(copy, &registry, strict);
    } else {
      onnx::shape_inference::InferShapes(copy, onnx::OpSchemaRegistry::Instance(), strict);
    }
    benchmark::DoNotOptimize(copy);
  }
}

void shapeprop_check(benchmark::State& state, const std::string& name) {
  const onnx::ModelProto model = load(name);
  for (auto _ : state) {
    auto found = shapeprop::check_model(model);
    benchmark::DoNotOptimize(found);
  }
}

void shapeprop_annotate(benchmark::State& state, const std::string& name) {
  const onnx::ModelProto model = load(name);
  for (auto _ : state) {
    onnx::ModelProto copy = model;
    auto r = shapeprop::infer_shapes(copy);
    benchmark::DoNotOptimize(r);
  }
}

void shapeprop_inline(benchmark::State& state, const std::string& name) {
  const onnx::ModelProto model = load(name);
  shapeprop::TransformOptions options;
  options.inline_policy = shapeprop::InlinePolicy::All;
  for (auto _ : state) {
    onnx::ModelProto copy = model;
    auto r = shapeprop::specialize(copy, options);
    benchmark::DoNotOptimize(r);
  }
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (argc > 1) g_corpus = argv[1];
  for (const char* model : {"transformer_L2.onnx", "transformer_L16.onnx", "sdpa.onnx"}) {
    const std::string m = model;
    benchmark::RegisterBenchmark(("onnx_InferShapes/" + m).c_str(), onnx_infer, m)->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("shapeprop_annotate/" + m).c_str(), shapeprop_annotate, m)->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("shapeprop_inline/" + m).c_str(), shapeprop_inline, m)->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("onnx_full_check_inference/" + m).c_str(), onnx_full_check_inference, m, false)
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("onnx_full_check_inference_shapeprop_registry/" + m).c_str(),
                                 onnx_full_check_inference, m, true)
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("shapeprop_check/" + m).c_str(), shapeprop_check, m)->Unit(benchmark::kMillisecond);
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
