// Fuzz target: a serialized ModelProto, as onnx-infer-shapes reads a .onnx file, through
// the whole pipeline (fuzz_support.h). A file is depth-scanned in windows before it is
// parsed (load_model): that scan must give the answer the scan of all the bytes gives.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_support.h"
#include "io/syntax_depth.h"
#include "shapeprop/io.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace shapeprop;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const Limits limits = fuzz::fuzz_limits();
  const auto whole = binary_recursion_limit(bytes, "<fuzz>", limits);
  auto read_at = [bytes](uint64_t offset, char* out, size_t n) -> Result<size_t> {
    if (offset >= bytes.size()) return size_t{0};
    return bytes.copy(out, n, static_cast<size_t>(offset));
  };
  const auto windowed = binary_recursion_limit(read_at, bytes.size(), "<fuzz>", limits, 32);
  fuzz::require(whole.ok() == windowed.ok() &&
                    (whole.ok() ? *whole == *windowed : whole.error().str() == windowed.error().str()),
                "the depth scan in windows of 32 bytes differs from the scan of all the bytes");
  auto model = parse_model_binary(bytes, "<fuzz>", limits);
  if (!model) {
    fuzz::check_diagnostic(model.error());
    return 0;
  }
  fuzz::run_pipeline(*model);
  return 0;
}
