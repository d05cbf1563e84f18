// Repeated runs hold memory flat: a long-lived library user (an exporter's process, the
// Python module) runs the analysis and the transforms on model after model, and nothing a
// run makes may stay behind once it is done. After a few runs to warm what is built once
// (ONNX's schemas and function bodies, protobuf's descriptors), further runs on the same
// models leave the heap in use and Dim's process-wide tables where they were.
#include <gtest/gtest.h>

#include <cstddef>
#include <string>
#include <vector>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SHAPEPROP_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define SHAPEPROP_ASAN 1
#endif
#ifdef SHAPEPROP_ASAN
#include <sanitizer/allocator_interface.h>
#else
#include <malloc.h>
#endif

#include "shapeprop/dim.h"
#include "shapeprop/infer.h"
#include "shapeprop/io.h"
#include "shapeprop/specialize.h"
#include "test_util.h"

namespace shapeprop {
namespace {

// Bytes the program holds allocated now (under ASan its allocator's count: freed chunks
// it keeps in quarantine are not among them).
size_t heap_in_use() {
#ifdef SHAPEPROP_ASAN
  return __sanitizer_get_current_allocated_bytes();
#else
  const struct mallinfo2 info = mallinfo2();
  return info.uordblks + info.hblkhd;
#endif
}

// Models with functions called in several contexts, symbolic dims, fresh symbols for
// data-dependent sizes, Ifs to fold and calls to inline.
std::vector<onnx::ModelProto> models() {
  std::vector<onnx::ModelProto> out;
  for (const char* name : {"transformer_L2", "sdpa", "narrow_chunk", "embedding"}) {
    auto m = load_model(testing::corpus_dir() / "torchlib-2024-03" / "models" / (std::string(name) + ".onnx"));
    EXPECT_TRUE(m.ok()) << name;
    if (m.ok()) out.push_back(*m);
  }
  return out;
}

// One run of each job a user asks for, on a copy of each model.
void run_all(const std::vector<onnx::ModelProto>& inputs) {
  for (const auto& input : inputs) {
    onnx::ModelProto annotated = input;
    auto inferred = infer_shapes(annotated);
    ASSERT_TRUE(inferred.ok());
    for (InlinePolicy policy : {InlinePolicy::None, InlinePolicy::All}) {
      onnx::ModelProto transformed = input;
      TransformOptions options;
      options.inline_policy = policy;
      auto done = specialize(transformed, options);
      ASSERT_TRUE(done.ok());
    }
  }
}

TEST(RepeatedRuns, HoldTheHeapAndDimsTablesFlat) {
  const auto inputs = models();
  ASSERT_EQ(inputs.size(), 4u);
  for (int i = 0; i < 3; ++i) run_all(inputs);  // warm what is built once
  const size_t heap = heap_in_use();
  const size_t entries = Dim::interned_entries();
  ASSERT_GT(entries, 0u);  // the models have symbolic dims: the count is live
  constexpr int kRuns = 20;
  for (int i = 0; i < kRuns; ++i) run_all(inputs);
  EXPECT_EQ(Dim::interned_entries(), entries);
  // A run of the four models allocates some megabytes; what stays of 20 of them is
  // allocator noise at most (a leak of one node per run would be 20 times its size).
  const size_t after = heap_in_use();
  EXPECT_LE(after, heap + 16 * 1024) << "heap in use grew from " << heap << " to " << after << " bytes over "
                                     << kRuns << " runs";
}

}  // namespace
}  // namespace shapeprop
