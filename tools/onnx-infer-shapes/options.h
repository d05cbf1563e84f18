// onnx-infer-shapes' command line: the options it takes and how they are read.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "shapeprop/infer.h"
#include "shapeprop/io.h"
#include "shapeprop/limits.h"
#include "shapeprop/specialize.h"

namespace cli {

constexpr int kOk = 0;
constexpr int kCheckFailed = 1;
constexpr int kBadInput = 2;

enum class Mode { Annotate, Specialize, Inline, Check };

struct Options {
  std::string input;
  Mode mode = Mode::Annotate;
  std::optional<shapeprop::InlinePolicy> inline_policy;
  size_t small_limit = 8;
  std::optional<std::string> output;  // nullopt: stdout
  std::optional<shapeprop::Format> emit;
  bool infer = true;
  shapeprop::InferOptions infer_options;  // with the limits
  std::vector<std::string> schema_dirs;
  std::vector<std::string> overrides;
  bool verify_roundtrip = false;
  bool verify_idempotent = false;
  bool verify_full_check = false;
  bool quiet = false;

  const shapeprop::Limits& limits() const { return infer_options.limits; }
};

// "onnx-infer-shapes: error: MESSAGE" on stderr.
void error(const std::string& message);

// Reads the command line into `options`. Returns the exit code when the command line
// ends the run (help, version, bad usage: then one line on stderr).
std::optional<int> parse_args(int argc, char** argv, Options& options);

}  // namespace cli
