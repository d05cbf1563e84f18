// onnx-infer-shapes' command line, read by the option table (shapeprop/options.def):
// each option's value into cli::Options, then the table's rules of what goes together.
#include "options.h"

#include <charconv>
#include <cstdint>
#include <iostream>
#include <sstream>
#include <string_view>
#include <utility>
#include <vector>

#include "shape_options.h"
#include "shapeprop/function_id.h"
#include "shapeprop/schemas.h"
#include "shapeprop/version.h"

namespace cli {

namespace {

// A whole number from text: decimal digits, with an optional K, M or G (powers of 1024)
// when `bytes`. nullopt when it is not one or lies outside [min, max].
std::optional<uint64_t> parse_number(std::string_view text, uint64_t min, uint64_t max, bool bytes) {
  uint64_t scale = 1;
  if (bytes && !text.empty()) {
    const char unit = text.back();
    if (unit == 'K' || unit == 'k') scale = uint64_t{1} << 10;
    if (unit == 'M' || unit == 'm') scale = uint64_t{1} << 20;
    if (unit == 'G' || unit == 'g') scale = uint64_t{1} << 30;
    if (scale > 1) text.remove_suffix(1);
  }
  uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  if (__builtin_mul_overflow(value, scale, &value) || value < min || value > max) return std::nullopt;
  return value;
}

std::string in_quotes(const std::string& s) { return "'" + s + "'"; }

// The option a command-line word names: its flag or short flag, or --flag=VALUE for one
// that takes a value.
const shapeprop::OptionSpec* option_named(const std::string& word) {
  for (const auto& spec : shapeprop::all_options()) {
    if (word == spec.flag || (!spec.short_flag.empty() && word == spec.short_flag)) return &spec;
    if (!spec.metavar.empty() && word.size() > spec.flag.size() && word.compare(0, spec.flag.size(), spec.flag) == 0 &&
        word[spec.flag.size()] == '=')
      return &spec;
  }
  return nullptr;
}

void print_version() {
  std::cout << "onnx-infer-shapes (shapeprop) " << shapeprop::version() << ", ONNX " << shapeprop::onnx_version()
            << " (IR " << shapeprop::onnx_ir_version() << ", ai.onnx opsets up to " << shapeprop::onnx_max_opset("")
            << ")\n";
  if (shapeprop::rules_max_opset() > shapeprop::onnx_max_opset(""))
    std::cout << "read through rules: IR up to " << shapeprop::rules_ir_version() << ", ai.onnx opsets "
              << shapeprop::onnx_max_opset("") + 1 << " to " << shapeprop::rules_max_opset()
              << " (the ops new or changed there by schemas/onnx/opset*)\n";
  std::cout << "linked ONNX: " << shapeprop::onnx_build() << '\n';
  const auto schemas = shapeprop::builtin_schemas_dir();
  std::cout << "shipped rules: " << (schemas ? schemas->string() : std::string("not found")) << '\n';
}

void print_passes() {
  for (const auto& p : shapeprop::all_passes()) {
    std::cout << p.name << std::string(p.name.size() < 20 ? 20 - p.name.size() : 1, ' ')
              << (p.kind == shapeprop::PassKind::Module  ? "[module] "
                  : p.kind == shapeprop::PassKind::OptIn ? "[opt-in] "
                                                         : "");
    for (char c : p.description)  // Markdown's code spans as plain text
      if (c != '`') std::cout << c;
    std::cout << '\n';
  }
}

// --passes (a list) or --print-after (one name).
std::optional<std::vector<shapeprop::Pass>> read_passes(const std::string& v, bool list) {
  const char* flag = list ? "--passes" : "--print-after";
  std::stringstream names(v);
  std::vector<shapeprop::Pass> passes;
  for (std::string name; std::getline(names, name, ',');) {
    auto pass = shapeprop::find_pass(name);
    if (!pass) {
      error(std::string(flag) + " names no pass " + in_quotes(name) + " (--list-passes lists them)");
      return std::nullopt;
    }
    passes.push_back(*pass);
  }
  if (passes.empty() || (!list && passes.size() > 1)) {
    error(list ? std::string("--passes takes pass names, as in --passes fold,dce")
               : "--print-after takes one pass name, not " + in_quotes(v));
    return std::nullopt;
  }
  return passes;
}

// Option `spec` with its value `v` (empty for one that takes none) into `o`. Returns the
// exit code when it ends the run: after help, the version or the passes; or a bad value
// (then one line on stderr).
std::optional<int> apply(const shapeprop::OptionSpec& spec, const std::string& v, Options& o) {
  using shapeprop::OptionId;
  const std::string flag(spec.flag);
  switch (spec.id) {
    case OptionId::Help: {
      // The usage line names the program as it was run.
      std::string help = shapeprop::help_text();
      const std::string_view usage = "usage: onnx-infer-shapes";
      if (help.starts_with(usage)) help.replace(0, usage.size(), "usage: " + program_name());
      std::cout << help;
      return kOk;
    }
    case OptionId::Version:
      print_version();
      return kOk;
    case OptionId::ListPasses:
      print_passes();
      return kOk;
    case OptionId::MaxInputSize:
    case OptionId::MaxFifoWait:
    case OptionId::MaxSubgraphDepth:
    case OptionId::MaxCallDepth:
    case OptionId::MaxElements:
    case OptionId::MaxInlinedNodes:
    case OptionId::MaxInlineGrowth:
    case OptionId::MaxSpecializations:
    case OptionId::MaxDimTerms: {
      const shapeprop::LimitSpec& limit = spec.limit;
      auto n = parse_number(v, limit.min, limit.max, limit.bytes);
      if (!n) {
        error(flag + " takes a whole number from " + std::to_string(limit.min) + " to " + std::to_string(limit.max) +
              (limit.bytes ? " (K, M, G allowed)" : "") + ", not " + in_quotes(v));
        return kBadInput;
      }
      limit.set(o.infer_options.limits, *n);
      return std::nullopt;
    }
    case OptionId::Output:
      if (v.empty()) {
        error("--output needs a file name; to write to stdout, give '-' or leave --output out");
        return kBadInput;
      }
      // "-" is standard output, as for most tools (a file of that name: -o ./-).
      o.output_dash = v == "-";
      if (o.output_dash)
        o.output.reset();
      else
        o.output = v;
      return std::nullopt;
    case OptionId::Emit:
      o.emit = shapeprop::enum_named<shapeprop::Format>(v);
      if (!o.emit) {
        error("--emit takes " + shapeprop::name_choices<shapeprop::Format>(true) + ", not " + in_quotes(v));
        return kBadInput;
      }
      return std::nullopt;
    case OptionId::Mode:
      if (auto mode = shapeprop::enum_named<Mode>(v)) {
        o.mode = *mode;
        return std::nullopt;
      }
      error("--mode takes " + shapeprop::name_choices<Mode>(true) + ", not " + in_quotes(v));
      return kBadInput;
    case OptionId::Inline:
      if (v.rfind("small", 0) == 0 && v.size() > 5) {
        constexpr uint64_t kMaxSmall = uint64_t{1} << 32;
        auto n = v[5] == ':' ? parse_number(std::string_view(v).substr(6), 0, kMaxSmall, false) : std::nullopt;
        if (!n) {
          error("--inline small takes a node count from 0 to " + std::to_string(kMaxSmall) + ", as in small:8, not " +
                in_quotes(v));
          return kBadInput;
        }
        o.inline_policy = shapeprop::InlinePolicy::Small;
        o.small_limit = static_cast<size_t>(*n);
      } else if (auto policy = shapeprop::enum_named<shapeprop::InlinePolicy>(v)) {
        o.inline_policy = *policy;
      } else {
        error("--inline takes all, none or small[:N], not " + in_quotes(v));
        return kBadInput;
      }
      return std::nullopt;
    case OptionId::Passes:
    case OptionId::PrintAfter: {
      const bool list = spec.id == OptionId::Passes;
      auto passes = read_passes(v, list);
      if (!passes) return kBadInput;
      if (list)
        o.passes = std::move(*passes);
      else if (std::find(o.print_after.begin(), o.print_after.end(), passes->front()) == o.print_after.end())
        o.print_after.push_back(passes->front());
      return std::nullopt;
    }
    case OptionId::Keep: {
      std::stringstream list(v);
      for (std::string id; std::getline(list, id, ',');) {
        const size_t sep = id.rfind("::");
        if (sep == std::string::npos || sep + 2 == id.size()) {
          error("--keep takes DOMAIN::NAME, as in pkg.onnxscript.torch_lib::aten_gelu, not " + in_quotes(id));
          return kBadInput;
        }
        o.keep.insert({shapeprop::FunctionId::canonical_domain(id.substr(0, sep)), id.substr(sep + 2)});
      }
      return std::nullopt;
    }
    case OptionId::ExpandOps: {
      std::stringstream list(v);
      for (std::string op; std::getline(list, op, ',');) {
        if (op == "all-functions") {
          o.expand.all_functions = true;
        } else if (op.empty() || op.find_first_of(" :./") != std::string::npos) {
          error("--expand-ops takes ai.onnx op types (Attention,RMSNormalization) or all-functions, not " +
                in_quotes(op));
          return kBadInput;
        } else {
          o.expand.ops.insert(op);
        }
      }
      if (v.empty()) {
        error("--expand-ops takes ai.onnx op types (Attention,RMSNormalization) or all-functions");
        return kBadInput;
      }
      return std::nullopt;
    }
    case OptionId::TargetOpset: {
      int64_t n = 0;
      const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
      if (ec != std::errc() || end != v.data() + v.size() || n < 1 || n > shapeprop::onnx_max_opset("")) {
        error("--target-opset takes an ai.onnx opset from 1 to " + std::to_string(shapeprop::onnx_max_opset("")) +
              ", not " + in_quotes(v));
        return kBadInput;
      }
      o.expand.target_opset = n;
      return std::nullopt;
    }
    case OptionId::Naming:
      o.naming = shapeprop::enum_named<shapeprop::Naming>(v);
      if (!o.naming) {
        error("--naming takes " + shapeprop::name_choices<shapeprop::Naming>(false) + ", not " + in_quotes(v));
        return kBadInput;
      }
      return std::nullopt;
    case OptionId::Declared:
    case OptionId::OverridableInitializers: {
      const bool declared = spec.id == OptionId::Declared;
      const auto d = shapeprop::enum_named<shapeprop::DeclaredTypes>(v);
      const auto i = shapeprop::enum_named<shapeprop::OverridableInitializers>(v);
      if (declared ? !d : !i) {
        error(std::string(spec.flag) + " takes " +
              (declared ? shapeprop::name_choices<shapeprop::DeclaredTypes>(false)
                        : shapeprop::name_choices<shapeprop::OverridableInitializers>(false)) +
              ", not " + in_quotes(v));
        return kBadInput;
      }
      if (declared)
        o.infer_options.declared = *d;
      else
        o.infer_options.overridable_initializers = *i;
      return std::nullopt;
    }
    case OptionId::Override: o.overrides.push_back(v); return std::nullopt;
    case OptionId::Schemas: o.schema_dirs.push_back(v); return std::nullopt;
    case OptionId::Strict: o.infer_options.strict = true; return std::nullopt;
    case OptionId::AllowEmptyDims: o.infer_options.assume_positive_dims = false; return std::nullopt;
    case OptionId::KeepIrVersion: o.infer_options.annotate_functions = false; return std::nullopt;
    case OptionId::NoInfer: o.infer = false; return std::nullopt;
    case OptionId::DebugAnalysis: o.infer_options.debug = true; return std::nullopt;
    case OptionId::VerifyRoundtrip: o.verify_roundtrip = true; return std::nullopt;
    case OptionId::VerifyIdempotent: o.verify_idempotent = true; return std::nullopt;
    case OptionId::VerifyFullCheck: o.verify_full_check = true; return std::nullopt;
    case OptionId::Report:
      if (v.empty()) {
        error("--report needs a file name");
        return kBadInput;
      }
      o.report = v;
      return std::nullopt;
    case OptionId::SetDim:
    case OptionId::InputShape:
    case OptionId::DimRange:
    case OptionId::RenameDim: {
      using Reader = std::optional<std::string> (*)(std::string_view, shapeprop::InputShapes&);
      const Reader read = spec.id == OptionId::SetDim       ? read_set_dim
                          : spec.id == OptionId::InputShape ? read_input_shape
                          : spec.id == OptionId::DimRange   ? read_dim_range
                                                            : read_rename_dim;
      if (auto problem = read(v, o.shapes)) {
        error(*problem);
        return kBadInput;
      }
      return std::nullopt;
    }
    case OptionId::PrintShapes: o.print_shapes = true; return std::nullopt;
    case OptionId::NameDims: o.shapes.name_dims = true; return std::nullopt;
    case OptionId::Quiet: o.quiet = true; return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace

namespace {
std::string& program() {
  static std::string name = "onnx-infer-shapes";
  return name;
}
}  // namespace

const std::string& program_name() { return program(); }
void set_program_name(std::string_view name) { program() = name; }

void error(const std::string& message) {
  // As a Diagnostic, so that names from the command line are clipped like any other.
  std::cerr << program_name() << ": " << shapeprop::Diagnostic::error(message).str() << '\n';
}

std::optional<int> parse_args(int argc, char** argv, Options& o) {
  std::vector<std::string> args(argv + 1, argv + argc);
  shapeprop::OptionSet& given = o.given;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (const shapeprop::OptionSpec* spec = option_named(a)) {
      std::string v;
      if (!spec->metavar.empty()) {
        if (auto eq = a.find('='); a.rfind("--", 0) == 0 && eq != std::string::npos) {
          v = a.substr(eq + 1);
        } else if (i + 1 < args.size()) {
          v = args[++i];
        } else {
          error("option " + std::string(spec->flag) + " needs a value");
          return kBadInput;
        }
      }
      if (auto done = apply(*spec, v, o)) return done;
      given.set(static_cast<size_t>(spec->id));
    } else if (a.size() > 1 && a[0] == '-') {
      error("unknown option " + in_quotes(a) + " (see --help)");
      return kBadInput;
    } else if (o.input.empty()) {
      if (a.empty()) {
        error("the input path is empty");
        return kBadInput;
      }
      o.input = a;
    } else {
      error("more than one input given (" + in_quotes(o.input) + " and " + in_quotes(a) + ")");
      return kBadInput;
    }
  }
  if (o.input.empty()) {
    error("no input model given (see --help)");
    return kBadInput;
  }
  // A list option counts as given when its list holds something.
  given.set(static_cast<size_t>(shapeprop::OptionId::Keep), !o.keep.empty());
  given.set(static_cast<size_t>(shapeprop::OptionId::RenameDim), !o.shapes.renames.empty());
  shapeprop::OptionUse use;
  use.mode = o.mode == Mode::Annotate && o.transforms() ? Mode::Specialize : o.mode;
  use.given = given;
  use.passes = o.passes;
  use.print_after = o.print_after;
  use.stdout_named = o.output_dash;
  use.shapes_on_stdout = true;
  if (auto conflict = shapeprop::find_conflict(use)) {
    error(conflict->message(shapeprop::Conflict::Spelling::Flags));
    return kBadInput;
  }
  return std::nullopt;
}

}  // namespace cli
