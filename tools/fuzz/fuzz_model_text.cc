// Fuzz target: ONNX text, as onnx-infer-shapes reads a .onnxtxt file (quoted names
// included), through the whole pipeline (fuzz_support.h).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_support.h"
#include "shapeprop/io.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace shapeprop;
  auto model = parse_model_text(std::string_view(reinterpret_cast<const char*>(data), size), "<fuzz>", fuzz::fuzz_limits());
  if (!model) {
    fuzz::check_diagnostic(model.error());
    return 0;
  }
  fuzz::run_pipeline(*model);
  return 0;
}
