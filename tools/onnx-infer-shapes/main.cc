// onnx-infer-shapes: the command-line driver over the shapeprop library.
//
// Loads a model (binary or text), validates it, and writes it (binary or text).
// Exit codes: 0 ok, 1 problems found by a check, 2 bad usage or unreadable input.
#include <unistd.h>

#include <cstdio>
#include <algorithm>
#include <cstring>
#include <iostream>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "shapeprop/check.h"
#include "shapeprop/infer.h"
#include "shapeprop/io.h"
#include "shapeprop/override.h"
#include "shapeprop/progress.h"
#include "shapeprop/report.h"
#include "shapeprop/schemas.h"
#include "shapeprop/specialize.h"
#include "shapeprop/text.h"
#include "shapeprop/validate.h"
#include "shapeprop/version.h"

namespace {

constexpr int kOk = 0;
constexpr int kCheckFailed = 1;
constexpr int kBadInput = 2;

const char* const kUsage = R"(usage: onnx-infer-shapes [options] INPUT

Infers types and shapes through the model's functions, per call site, and writes them
as graph value_info and FunctionProto.value_info.

options:
  --mode MODE            annotate (default): write inferred types only;
                         specialize: one folded copy of each function per distinct
                         context (rank conditionals, CastLikes and shape arithmetic the
                         facts decide are gone), dead code removed;
                         inline: specialize, then inline (--inline=all unless given);
                         check: write nothing; check every declared type against
                         what strict inference proves in each context (exit 1 when
                         one is false, or the model is malformed; always strict)
  --inline POLICY        all | none | small[:N] (bodies of at most N nodes after
                         folding, default 8); implies --mode specialize at least
  --keep DOMAIN::NAME[,...]
                         functions a backend claims (a plugin of that name): their
                         calls stay as written, attributes included, through every
                         inlining policy, and their bodies are not specialized
                         (repeatable; specialize and inline modes)
  --naming copies|overload
                         specializations of one function as renamed copies (f__0,
                         f__1; the default) or as IR-10 overloads of f, for tools
                         that look functions up by name (specialize and inline modes)
  -o, --output PATH      write the result to PATH (atomically); default: text on stdout
  --emit text|binary     output format; default from the output's extension
                         (.onnx binary, .onnxtxt text), text when writing to stdout
  --override LIB         replace the model's functions by the functions of LIB (ONNX
                         text syntax, functions only; or a binary model's functions)
                         with the same (domain, name, overload), before the analysis;
                         a replacement must keep the arity, the attributes and their
                         defaults, opsets ONNX's checker accepts, and the output types
                         of every context the model calls it in (repeatable)
  --schemas DIR          also read the rules (*.rule) under DIR for ops outside ONNX's
                         registry (repeatable; a rule there replaces the shipped rule
                         for the same op; the language: schemas/README.md)
  --strict               conflicts, ops without a schema or rule and failed inference
                         are errors
  --allow-empty-dims     do not assume symbolic dims are at least 1 (by default
                         Size(x) == 0 is false for x of shape [N, 8], as PyTorch's
                         exporter assumes of dynamic dims)
  --keep-ir-version      write nothing inside functions, so that the IR version stays
                         (FunctionProto.value_info needs IR 10; otherwise it is raised)
  --no-infer             only load, validate and write
  --debug-analysis       print the call graph and the contexts analysed per function
                         (on stderr)
  --verify-roundtrip     check that the output prints as text and parses back unchanged
  --verify-idempotent    check that running again on the output changes nothing
  --verify-full-check    check the output with ONNX's full checker (strict inference)
  --report FILE.json     write a report of the run for programs to read: counts before
                         and after, contexts and specializations per function, rewrites
                         by kind, diagnostics with call paths, time per phase, the
                         assumptions relied on (schema: docs/report.schema.json); written
                         also when the run fails (the model never is)
  -q, --quiet            print nothing but errors (on a terminal, a table of counts
                         before and after follows the summary, and runs over a second
                         show their progress)
  --version              print the version and exit
  -h, --help             print this help and exit

exit status: 0 ok, 1 a check found problems, 2 bad usage or unreadable input
)";

enum class Mode { Annotate, Specialize, Inline, Check };

struct Options {
  std::string input;
  Mode mode = Mode::Annotate;
  std::optional<shapeprop::InlinePolicy> inline_policy;
  size_t small_limit = 8;
  std::set<std::pair<std::string, std::string>> keep;  // --keep: (domain, name)
  std::optional<shapeprop::Naming> naming;
  std::string output;
  std::optional<shapeprop::Format> emit;
  bool infer = true;
  bool debug_analysis = false;
  shapeprop::InferOptions infer_options;
  std::vector<std::string> schema_dirs;
  std::vector<std::string> overrides;
  bool verify_roundtrip = false;
  bool verify_idempotent = false;
  bool verify_full_check = false;
  bool quiet = false;
  std::string report;  // --report FILE.json
};

// The run's report (written with --report; its counts make the terminal's table) and the
// progress line (on a terminal only), shared by the steps below.
shapeprop::Report run_report;
shapeprop::ProgressLine* progress = nullptr;

void error(const std::string& message) {
  run_report.diagnostics.push_back(shapeprop::Diagnostic::error(message));
  std::cerr << "onnx-infer-shapes: error: " << message << '\n';
}

// Keeps diagnostics for the report, printed or not (-q).
void record(const shapeprop::Diagnostics& diagnostics) {
  run_report.diagnostics.insert(run_report.diagnostics.end(), diagnostics.begin(), diagnostics.end());
}

void print(const shapeprop::Diagnostics& diagnostics) {
  shapeprop::ProgressLine::Pause pause(progress);
  for (const auto& d : diagnostics) std::cerr << d.str() << '\n';
}

void report(const shapeprop::Diagnostics& diagnostics) {
  record(diagnostics);
  print(diagnostics);
}

shapeprop::Diagnostics with_severity(const shapeprop::Diagnostics& all, shapeprop::Severity severity) {
  shapeprop::Diagnostics out;
  for (const auto& d : all)
    if (d.severity == severity) out.push_back(d);
  return out;
}
shapeprop::Diagnostics errors_only(const shapeprop::Diagnostics& all) {
  return with_severity(all, shapeprop::Severity::Error);
}
shapeprop::Diagnostics warnings_only(const shapeprop::Diagnostics& all) {
  return with_severity(all, shapeprop::Severity::Warning);
}

// The summary lines (kept in the report, -q or not) and, on a terminal, the table of
// counts before and after.
void finish(const Options& o, const std::string& summary) {
  if (progress) progress->stop();
  std::cerr << summary;
  if (o.quiet || !o.infer || !isatty(STDERR_FILENO) || !run_report.before || !run_report.after) return;
  std::cerr << shapeprop::counts_table(*run_report.before, *run_report.after);
}

// Returns the exit code when the command line ends the run (help, version, bad usage).
std::optional<int> parse_args(int argc, char** argv, Options& o) {
  std::vector<std::string> args(argv + 1, argv + argc);
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&](const char* flag) -> std::optional<std::string> {
      if (auto eq = a.find('='); a.rfind("--", 0) == 0 && eq != std::string::npos) return a.substr(eq + 1);
      if (i + 1 >= args.size()) {
        error(std::string("option ") + flag + " needs a value");
        return std::nullopt;
      }
      return args[++i];
    };
    auto is = [&](const char* name) { return a == name || a.rfind(std::string(name) + "=", 0) == 0; };
    if (a == "-h" || a == "--help") {
      std::cout << kUsage;
      return kOk;
    } else if (a == "--version") {
      std::cout << "onnx-infer-shapes (shapeprop) " << shapeprop::version() << ", ONNX " << shapeprop::onnx_version()
                << '\n';
      const auto schemas = shapeprop::builtin_schemas_dir();
      std::cout << "shipped rules: " << (schemas ? schemas->string() : std::string("not found")) << '\n';
      return kOk;
    } else if (a == "-o" || is("--output")) {
      auto v = value("--output");
      if (!v) return kBadInput;
      o.output = *v;
    } else if (is("--emit")) {
      auto v = value("--emit");
      if (!v) return kBadInput;
      if (*v == "text")
        o.emit = shapeprop::Format::Text;
      else if (*v == "binary")
        o.emit = shapeprop::Format::Binary;
      else {
        error("--emit takes 'text' or 'binary', not '" + *v + "'");
        return kBadInput;
      }
    } else if (is("--mode")) {
      auto v = value("--mode");
      if (!v) return kBadInput;
      if (*v == "annotate")
        o.mode = Mode::Annotate;
      else if (*v == "specialize")
        o.mode = Mode::Specialize;
      else if (*v == "inline")
        o.mode = Mode::Inline;
      else if (*v == "check")
        o.mode = Mode::Check;
      else {
        error("--mode takes 'annotate', 'specialize', 'inline' or 'check', not '" + *v + "'");
        return kBadInput;
      }
    } else if (is("--inline")) {
      auto v = value("--inline");
      if (!v) return kBadInput;
      if (*v == "all") {
        o.inline_policy = shapeprop::InlinePolicy::All;
      } else if (*v == "none") {
        o.inline_policy = shapeprop::InlinePolicy::None;
      } else if (v->rfind("small", 0) == 0) {
        o.inline_policy = shapeprop::InlinePolicy::Small;
        if (v->size() > 5) {
          const std::string n = v->substr(5);
          if (n.size() < 2 || n[0] != ':' || n.find_first_not_of("0123456789", 1) != std::string::npos) {
            error("--inline small takes a node count, as in small:8, not '" + *v + "'");
            return kBadInput;
          }
          o.small_limit = std::stoul(n.substr(1));
        }
      } else {
        error("--inline takes all, none or small[:N], not '" + *v + "'");
        return kBadInput;
      }
    } else if (is("--keep")) {
      auto v = value("--keep");
      if (!v) return kBadInput;
      std::stringstream list(*v);
      for (std::string id; std::getline(list, id, ',');) {
        const size_t sep = id.rfind("::");
        if (sep == std::string::npos || sep + 2 == id.size()) {
          error("--keep takes DOMAIN::NAME, as in pkg.onnxscript.torch_lib::aten_gelu, not '" + id + "'");
          return kBadInput;
        }
        o.keep.insert({shapeprop::FunctionId::canonical_domain(id.substr(0, sep)), id.substr(sep + 2)});
      }
    } else if (is("--naming")) {
      auto v = value("--naming");
      if (!v) return kBadInput;
      if (*v == "copies") {
        o.naming = shapeprop::Naming::Copies;
      } else if (*v == "overload") {
        o.naming = shapeprop::Naming::Overloads;
      } else {
        error("--naming takes copies or overload, not '" + *v + "'");
        return kBadInput;
      }
    } else if (is("--override")) {
      auto v = value("--override");
      if (!v) return kBadInput;
      o.overrides.push_back(*v);
    } else if (is("--schemas")) {
      auto v = value("--schemas");
      if (!v) return kBadInput;
      o.schema_dirs.push_back(*v);
    } else if (a == "--strict") {
      o.infer_options.strict = true;
    } else if (a == "--allow-empty-dims") {
      o.infer_options.assume_positive_dims = false;
    } else if (a == "--keep-ir-version") {
      o.infer_options.annotate_functions = false;
    } else if (a == "--no-infer") {
      o.infer = false;
    } else if (a == "--debug-analysis") {
      o.infer_options.debug = true;
    } else if (a == "--verify-roundtrip") {
      o.verify_roundtrip = true;
    } else if (a == "--verify-idempotent") {
      o.verify_idempotent = true;
    } else if (a == "--verify-full-check") {
      o.verify_full_check = true;
    } else if (is("--report")) {
      auto v = value("--report");
      if (!v) return kBadInput;
      o.report = *v;
    } else if (a == "-q" || a == "--quiet") {
      o.quiet = true;
    } else if (a.size() > 1 && a[0] == '-') {
      error("unknown option '" + a + "' (see --help)");
      return kBadInput;
    } else if (o.input.empty()) {
      o.input = a;
    } else {
      error("more than one input given ('" + o.input + "' and '" + a + "')");
      return kBadInput;
    }
  }
  if (o.input.empty()) {
    error("no input model given (see --help)");
    return kBadInput;
  }
  if (o.mode == Mode::Check) {
    const std::pair<bool, const char*> writing[] = {
        {!o.output.empty(), "-o"},
        {o.emit.has_value(), "--emit"},
        {o.inline_policy.has_value(), "--inline"},
        {!o.keep.empty(), "--keep"},
        {o.naming.has_value(), "--naming"},
        {!o.infer, "--no-infer"},
        {!o.infer_options.annotate_functions, "--keep-ir-version"},
        {o.infer_options.debug, "--debug-analysis"},
        {o.verify_roundtrip || o.verify_idempotent || o.verify_full_check, "--verify-*"},
    };
    for (const auto& [given, flag] : writing)
      if (given) {
        error(std::string("--mode check writes nothing and takes no ") + flag);
        return kBadInput;
      }
  }
  if (o.mode == Mode::Annotate && !o.inline_policy && (!o.keep.empty() || o.naming)) {
    error(std::string(o.keep.empty() ? "--naming" : "--keep") + " applies to --mode specialize or inline");
    return kBadInput;
  }
  return std::nullopt;
}

// Whether the run rewrites the model (specialize, inline) rather than annotating it, and
// how it inlines.
bool transforms(const Options& o) { return o.mode != Mode::Annotate || o.inline_policy; }
shapeprop::InlinePolicy inline_policy(const Options& o) {
  return o.inline_policy.value_or(o.mode == Mode::Inline ? shapeprop::InlinePolicy::All : shapeprop::InlinePolicy::None);
}

// The job itself: annotate, or specialize and inline. Returns the exit code when the run
// must stop. Without `summary` (a second run, to check idempotence) it reports nothing.
std::optional<int> process(const Options& o, onnx::ModelProto& model, std::string* summary) {
  if (!o.infer) return std::nullopt;
  std::string debug;
  shapeprop::Diagnostics diagnostics;
  if (transforms(o)) {
    shapeprop::TransformOptions t;
    t.infer = o.infer_options;
    t.inline_policy = inline_policy(o);
    t.small_limit = o.small_limit;
    t.naming = o.naming.value_or(shapeprop::Naming::Copies);
    t.keep = o.keep;
    for (const auto& id : o.keep)  // (domain, name); clang 14 cannot capture a structured binding
      if (std::none_of(model.functions().begin(), model.functions().end(), [&id](const onnx::FunctionProto& f) {
            return shapeprop::FunctionId::canonical_domain(f.domain()) == id.first && f.name() == id.second;
          })) {
        if (summary)
          report({shapeprop::Diagnostic::error("--keep names " + id.first + "::" + id.second +
                                               ", which the model does not define")
                      .in_file(o.input)});
        return kBadInput;
      }
    auto done = shapeprop::specialize(model, t);
    if (!done) {
      if (summary) report({shapeprop::Diagnostic(done.error()).in_file(o.input)});
      return kBadInput;
    }
    if (summary) {
      *summary = "onnx-infer-shapes: " + shapeprop::summary_line(done->stats) + "\n";
      run_report.add(*done);
      run_report.summary.push_back(shapeprop::summary_line(done->stats));
    }
    diagnostics = std::move(done->diagnostics);
    debug = std::move(done->annotation.debug);
  } else {
    auto inferred = shapeprop::infer_shapes(model, o.infer_options);
    if (!inferred) {
      if (summary) report({shapeprop::Diagnostic(inferred.error()).in_file(o.input)});
      return kBadInput;
    }
    if (summary) {  // before the diagnostics it counts move out
      if (auto from = inferred->stats.ir_version_raised_from)
        *summary = "onnx-infer-shapes: note: ir_version raised from " + std::to_string(from) +
                   " to 10 to hold FunctionProto.value_info (--keep-ir-version keeps it)\n";
      *summary += "onnx-infer-shapes: " + shapeprop::summary_line(*inferred) + "\n";
      run_report.add(*inferred);
      run_report.summary.push_back(shapeprop::summary_line(*inferred));
    }
    diagnostics = std::move(inferred->diagnostics);
    debug = std::move(inferred->debug);
  }
  for (auto& d : diagnostics)
    if (d.file.empty()) d.file = o.input;
  const bool failed = shapeprop::has_errors(diagnostics);
  if (summary) {
    {
      shapeprop::ProgressLine::Pause pause(progress);
      std::cerr << debug;
    }
    record(diagnostics);
    print(o.quiet && !failed ? errors_only(diagnostics) : diagnostics);
    if (o.quiet) summary->clear();
  }
  if (failed) return kCheckFailed;
  return std::nullopt;
}

// --override LIB: LIB's functions replace the model's, checked (shapeprop/override.h).
// Its note goes to `notes`, printed with the summary once the output is written.
std::optional<int> override_functions(const Options& o, const std::string& library, const std::filesystem::path& model_dir,
                                      onnx::ModelProto& model, std::string& notes) {
  auto functions = shapeprop::load_function_library(library);
  if (!functions) {
    report({functions.error()});
    return kBadInput;
  }
  auto done = shapeprop::apply_overrides(model, *functions, library, model_dir, o.infer_options);
  if (!done) {
    report({done.error()});
    return kBadInput;
  }
  record(done->diagnostics);
  if (o.quiet) return std::nullopt;
  print(done->diagnostics);
  if (!done->replaced.empty()) {
    std::string names;
    for (const auto& id : done->replaced) names += (names.empty() ? "" : ", ") + id.str();
    const size_t n = done->contexts_checked;
    notes += "onnx-infer-shapes: note: --override " + library + " replaced " + names + " (" + std::to_string(n) +
             " context" + (n == 1 ? "" : "s") + " checked)\n";
  }
  return std::nullopt;
}

// --mode check: the model is read, never written.
int run_check(const Options& o) {
  shapeprop::PhaseClock loading(run_report.phases, "load", o.infer_options.on_phase);
  auto model = shapeprop::load_model(o.input);
  loading.stop();
  if (!model) {
    report({model.error()});
    return kBadInput;
  }
  shapeprop::CheckOptions options;
  options.origin = o.input;
  options.model_dir = std::filesystem::path(o.input).parent_path();
  options.assume_positive_dims = o.infer_options.assume_positive_dims;
  run_report.count_before(*model);
  shapeprop::PhaseClock clock(run_report.phases, "check", o.infer_options.on_phase);
  const auto found = shapeprop::check_model(*model, options);
  clock.stop();
  run_report.add_check(found);
  run_report.count_after(*model);  // unchanged: the report says so
  const bool failed = shapeprop::has_errors(found);
  report(o.quiet ? errors_only(found) : found);
  return failed ? kCheckFailed : kOk;
}

int run(const Options& o) {
  if (o.mode == Mode::Check) return run_check(o);
  // The input is never modified, not even by naming it as the output.
  std::error_code same_ec;
  if (!o.output.empty() && std::filesystem::equivalent(o.input, o.output, same_ec)) {
    error("the output '" + o.output + "' is the input; write to another file");
    return kBadInput;
  }
  auto& phases = run_report.phases;
  const auto& on_phase = o.infer_options.on_phase;
  shapeprop::PhaseClock loading(phases, "load", on_phase);
  auto model = shapeprop::load_model(o.input);
  if (!model) {
    report({model.error()});
    return kBadInput;
  }
  loading.stop();
  run_report.count_before(*model);
  shapeprop::PhaseClock validating(phases, "validation", on_phase);
  const auto input_dir = std::filesystem::path(o.input).parent_path();
  const shapeprop::OpRules* rules = o.infer_options.op_rules.get();
  auto problems = shapeprop::validate_model(*model, o.input, input_dir, rules);
  record(problems);
  if (shapeprop::has_errors(problems)) {
    print(errors_only(problems));
    return kBadInput;
  }
  if (!o.quiet) print(warnings_only(problems));
  validating.stop();
  std::string notes;
  if (!o.overrides.empty()) {
    shapeprop::PhaseClock overriding(phases, "override", on_phase);
    for (const auto& library : o.overrides)
      if (auto stop = override_functions(o, library, input_dir, *model, notes)) return *stop;
  }

  // Printed last, once the output is written: a failure leaves one line on stderr.
  std::string summary;
  if (auto stop = process(o, *model, &summary)) return *stop;
  summary = notes + summary;

  std::optional<shapeprop::PhaseClock> verifying;
  if (o.verify_idempotent || o.verify_roundtrip || o.verify_full_check) verifying.emplace(phases, "verification", on_phase);
  shapeprop::Diagnostics checks;
  if (o.verify_idempotent && o.infer) {
    onnx::ModelProto again = *model;
    if (auto stop = process(o, again, nullptr); stop || again.SerializeAsString() != model->SerializeAsString())
      checks.push_back(shapeprop::Diagnostic::error("a second run changes the output").in_file(o.input));
  }
  if (o.verify_roundtrip)
    if (auto rt = shapeprop::verify_text_roundtrip(*model); !rt) checks.push_back(rt.error());
  if (o.verify_full_check)
    for (auto& d : shapeprop::run_onnx_checker(*model, /*full_check=*/true, "<output>", input_dir, rules))
      checks.push_back(d);
  if (!checks.empty()) {
    report(checks);
    return kCheckFailed;
  }
  verifying.reset();
  run_report.count_after(*model);

  shapeprop::PhaseClock writing(phases, "write", on_phase);
  if (o.output.empty()) {
    if (o.emit == shapeprop::Format::Binary) {
      auto bytes = shapeprop::serialize_model(*model);
      if (!bytes) {
        report({bytes.error()});
        return kBadInput;
      }
      std::fwrite(bytes->data(), 1, bytes->size(), stdout);
    } else {
      shapeprop::print_model(std::cout, *model);
    }
    std::cout.flush();
    writing.stop();
    finish(o, summary);
    return kOk;
  }
  const auto format = o.emit ? *o.emit : shapeprop::format_for_path(o.output).value_or(shapeprop::Format::Binary);
  if (auto saved = shapeprop::save_model(*model, o.output, format); !saved) {
    report({saved.error()});
    return kBadInput;
  }
  writing.stop();
  finish(o, summary);
  return kOk;
}

// The shipped rules, then those of each --schemas folder.
std::optional<int> load_schemas(Options& o) {
  std::vector<std::filesystem::path> folders;
  if (auto builtin = shapeprop::builtin_schemas_dir()) folders.push_back(*builtin);
  folders.insert(folders.end(), o.schema_dirs.begin(), o.schema_dirs.end());
  auto rules = shapeprop::load_op_rules(folders);
  if (!rules) {
    if (rules.error().file.empty())
      error(rules.error().message);
    else
      report({rules.error()});
    return kBadInput;
  }
  o.infer_options.op_rules = std::move(*rules);
  return std::nullopt;
}

// --report may name neither the input nor the output.
bool report_path_is_free(const Options& o) {
  namespace fs = std::filesystem;
  auto same = [](const fs::path& a, const fs::path& b) {
    std::error_code ec;
    return fs::weakly_canonical(a, ec) == fs::weakly_canonical(b, ec);
  };
  if (same(o.report, o.input) || (!o.output.empty() && same(o.report, o.output))) {
    std::cerr << "onnx-infer-shapes: error: the report '" << o.report << "' would replace the "
              << (same(o.report, o.input) ? "input" : "output") << "; write it to another file\n";
    return false;
  }
  return true;
}

// --report: the report of the run, failed or not. Returns the exit code.
int write_report(const Options& o, int status) {
  run_report.ok = status == kOk;
  if (auto written = shapeprop::write_report(run_report, o.report); !written) {
    print({written.error()});
    return status == kOk ? kBadInput : status;
  }
  return status;
}

void start_report(const Options& o) {
  const auto policy = inline_policy(o);
  run_report.input = o.input;
  run_report.mode = o.mode == Mode::Check ? "check"
                    : !transforms(o)       ? "annotate"
                    : policy == shapeprop::InlinePolicy::None ? "specialize" : "inline";
  run_report.options.infer = o.infer_options;
  run_report.options.inline_policy = policy;
  run_report.options.small_limit = o.small_limit;
}

}  // namespace

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);
  Options options;
  if (auto done = parse_args(argc, argv, options)) return *done;
  if (!options.report.empty() && !report_path_is_free(options)) return kBadInput;
  options.infer_options.describe_contexts = !options.report.empty();
  std::optional<shapeprop::ProgressLine> line;
  if (!options.quiet && isatty(STDERR_FILENO)) {
    line.emplace(stderr, "onnx-infer-shapes");
    progress = &*line;
    options.infer_options.on_phase = [](std::string_view phase) { progress->phase(phase); };
  }
  start_report(options);
  int status;
  try {
    status = load_schemas(options).value_or(kOk);
    if (status == kOk) status = run(options);
  } catch (const std::exception& e) {  // a bug of ours: still one clear line, never a crash
    if (progress) progress->stop();
    error(std::string("internal error: ") + e.what());
    status = kBadInput;
  }
  if (progress) progress->stop();
  return options.report.empty() ? status : write_report(options, status);
}
