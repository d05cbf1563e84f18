// The options of a run as one table (options.def): each option's flag, value, help, the
// library's and Python's name for it, and the modes that take it. onnx-infer-shapes parses
// its command line and prints --help from it; find_conflict() holds the rules of which
// options go together, for the command line and for shapeprop::run alike.
#pragma once

#include <bitset>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "shapeprop/enum_names.h"
#include "shapeprop/limits.h"
#include "shapeprop/passes.h"

namespace shapeprop {

enum class OptionId : uint8_t {
#define SHAPEPROP_OPTION(ID, ...) ID,
#define SHAPEPROP_LIMIT(ID, ...) ID,
#include "shapeprop/options.def"
#undef SHAPEPROP_OPTION
#undef SHAPEPROP_LIMIT
};

inline constexpr size_t kOptionCount = 0
#define SHAPEPROP_OPTION(ID, ...) +1
#define SHAPEPROP_LIMIT(ID, ...) +1
#include "shapeprop/options.def"
#undef SHAPEPROP_OPTION
#undef SHAPEPROP_LIMIT
    ;

// The modes an option applies in, as bits of Mode.
using ModeSet = uint8_t;
constexpr ModeSet mode_bit(Mode mode) { return static_cast<ModeSet>(1u << static_cast<unsigned>(mode)); }
inline constexpr ModeSet kAllModes = mode_bit(Mode::Annotate) | mode_bit(Mode::Specialize) | mode_bit(Mode::Inline) |
                                     mode_bit(Mode::Check);
inline constexpr ModeSet kWritingModes = kAllModes & ~mode_bit(Mode::Check);
inline constexpr ModeSet kTransformModes = mode_bit(Mode::Specialize) | mode_bit(Mode::Inline);

// The part of --help an option is listed in.
enum class OptionSection : uint8_t { Options, Shapes, Limits };

// A --max-* option's range and the Limits field it sets.
struct LimitSpec {
  uint64_t min = 0, max = 0;
  bool bytes = false;  // K, M, G suffixes (powers of 1024)
  uint64_t (*get)(const Limits&) = nullptr;
  void (*set)(Limits&, uint64_t) = nullptr;
};

struct OptionSpec {
  OptionId id;
  std::string_view flag;          // "--output"
  std::string_view short_flag{};  // "-o", or empty
  std::string_view metavar{};     // its value in --help ("PATH"); empty: it takes none
  // How the library (in its messages) and the Python package (as a keyword, when
  // `python`) name it: "rename_dims". With `negates`, the option sets `key` to false.
  std::string_view key{};
  bool python = false;
  bool negates = false;
  ModeSet modes = kAllModes;
  bool implies_transform = false;  // given with --mode annotate, it makes the mode specialize
  OptionSection section = OptionSection::Options;
  std::string_view help{};        // lines as --help wraps them; "{default}": default_text()
  std::string_view error_name{};  // how the conflicts name it, when not by its flag: "--verify-*"
  std::string (*default_text)() = nullptr;
  LimitSpec limit{};  // OptionSection::Limits
};

// Every option, in --help's order (OptionId's).
std::span<const OptionSpec> all_options();
const OptionSpec& option_spec(OptionId id);

// onnx-infer-shapes --help.
std::string help_text();

// A limit as its help says it: 2147483647 is "2G-1", 65536 is "65536".
std::string limit_text(uint64_t value, bool bytes);

using OptionSet = std::bitset<kOptionCount>;

// Whether one of these options makes --mode annotate a transform (OptionSpec::implies_transform).
bool implies_transform(const OptionSet& given);

// What a run was given, for find_conflict.
struct OptionUse {
  Mode mode = Mode::Annotate;  // after what the options imply (implies_transform)
  OptionSet given;
  std::vector<Pass> passes;       // --passes
  std::vector<Pass> print_after;  // --print-after
  bool stdout_named = false;      // -o -: the result on stdout, said outright
  bool shapes_on_stdout = false;  // --print-shapes prints the types on stdout (the CLI does)
};

// Two options that do not go together, or an option the mode does not take.
struct Conflict {
  enum class Rule {
    NotInCheck,         // `option` writes or transforms, and --mode check does neither
    TransformOnly,      // `option` applies to specialize and inline only
    AnnotateOnly,       // `option` applies to annotate only (what it takes on trust is no premise of a rewrite)
    ShapesNeedInference,  // --print-shapes with --no-infer
    ShapesOnStdout,     // --print-shapes with -o - or --emit alone: stdout holds the types
    PassNotRun,         // --print-after names a pass --passes does not run
  };
  Rule rule;
  OptionId option;
  Pass pass{};  // PassNotRun's: the pass not run
  bool stdout_named = false;  // ShapesOnStdout's: by -o -, not --emit
  // How the command line says it (naming flags), or the library (naming keys).
  enum class Spelling { Flags, Keys };
  std::string message(Spelling spelling) const;
};

// The first conflict among the options used, in the order of the rules above and of the
// table; nullopt when they go together.
std::optional<Conflict> find_conflict(const OptionUse& use);

}  // namespace shapeprop
