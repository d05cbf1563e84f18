// onnx-infer-shapes' command line: the options it takes and how they are read.
#pragma once

#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "shapeprop/infer.h"
#include "shapeprop/input_shapes.h"
#include "shapeprop/io.h"
#include "shapeprop/limits.h"
#include "shapeprop/options.h"
#include "shapeprop/passes.h"
#include "shapeprop/specialize.h"

namespace cli {

constexpr int kOk = 0;
constexpr int kCheckFailed = 1;
constexpr int kBadInput = 2;

using shapeprop::Mode;

struct Options {
  std::string input;
  Mode mode = Mode::Annotate;
  std::optional<shapeprop::InlinePolicy> inline_policy;
  size_t small_limit = shapeprop::TransformOptions{}.small_limit;
  std::set<std::pair<std::string, std::string>> keep;  // --keep: (domain, name)
  std::optional<shapeprop::Naming> naming;
  shapeprop::ExpandRequest expand;  // --expand-ops, --target-opset
  std::optional<std::string> output;  // nullopt: stdout
  bool output_dash = false;           // -o - (stdout, said outright)
  std::optional<shapeprop::Format> emit;
  bool infer = true;
  shapeprop::InferOptions infer_options;  // with the limits
  std::vector<std::string> schema_dirs;
  std::vector<std::string> overrides;
  bool verify_roundtrip = false;
  bool verify_idempotent = false;
  bool verify_full_check = false;
  bool quiet = false;
  bool print_shapes = false;  // --print-shapes: the values' types on stdout instead of the model
  std::string report;  // --report FILE.json
  std::vector<shapeprop::Pass> passes;         // --passes: instead of the mode's pipeline
  std::vector<shapeprop::Pass> print_after;   // --print-after, each once
  shapeprop::InputShapes shapes;  // --set-dim, --input-shape, --dim-range, --rename-dim, --name-dims
  shapeprop::OptionSet given;     // the options given (a list option: when its list holds something)

  const shapeprop::Limits& limits() const { return infer_options.limits; }
  // Whether the run rewrites the model (specialize, inline) rather than annotating it, and
  // how it inlines.
  bool transforms() const { return mode != Mode::Annotate || shapeprop::implies_transform(given); }
  // --inline=all unless given, in --mode inline and for --passes that name inline.
  shapeprop::InlinePolicy inlining() const {
    const bool inlines =
        mode == Mode::Inline || std::find(passes.begin(), passes.end(), shapeprop::Pass::Inline) != passes.end();
    return inline_policy.value_or(inlines ? shapeprop::InlinePolicy::All : shapeprop::InlinePolicy::None);
  }
};

// The name the usage line, the errors and the summary lines call the program by
// ("onnx-infer-shapes" unless set_program_name names it otherwise).
const std::string& program_name();
void set_program_name(std::string_view name);

// "PROGRAM: error: MESSAGE" on stderr.
void error(const std::string& message);

// Reads the command line into `options`. Returns the exit code when the command line
// ends the run (help, version, bad usage: then one line on stderr).
std::optional<int> parse_args(int argc, char** argv, Options& options);

}  // namespace cli
