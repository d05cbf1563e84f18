// onnx-infer-shapes: the command-line driver over the shapeprop library.
//
// Loads a model (binary or text), validates it, and writes it (binary or text).
// Exit codes: 0 ok, 1 problems found by a check, 2 bad usage or unreadable input. Every
// failure prints one line on stderr: the first error and a count of the others.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "options.h"
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

namespace {

using cli::kBadInput;
using cli::kCheckFailed;
using cli::kOk;
using cli::Mode;
using cli::Options;

// The run's report (written with --report; its counts make the terminal's table) and the
// progress line (on a terminal only), shared by the steps below.
shapeprop::Report run_report;
shapeprop::ProgressLine* progress = nullptr;

// Keeps diagnostics for the report, printed or not (-q).
void record(const shapeprop::Diagnostics& diagnostics) {
  run_report.diagnostics.insert(run_report.diagnostics.end(), diagnostics.begin(), diagnostics.end());
}

// Errors: one line, the first and a count of the rest.
void print_errors(const shapeprop::Diagnostics& diagnostics) {
  shapeprop::ProgressLine::Pause pause(progress);
  if (auto line = shapeprop::first_and_count(diagnostics); !line.empty()) std::cerr << line << '\n';
}

// Warnings and notes: one line each.
void print_others(const shapeprop::Diagnostics& diagnostics) {
  shapeprop::ProgressLine::Pause pause(progress);
  for (const auto& d : diagnostics)
    if (d.severity != shapeprop::Severity::Error) std::cerr << d.str() << '\n';
}

// A failure: kept for the report, its errors printed as one line.
void report_errors(const shapeprop::Diagnostics& diagnostics) {
  record(diagnostics);
  print_errors(diagnostics);
}

void error(const std::string& message) {
  run_report.diagnostics.push_back(shapeprop::Diagnostic::error(message));
  shapeprop::ProgressLine::Pause pause(progress);
  cli::error(message);
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

// The counts before and after feed the report and the terminal's table only: a run that
// writes neither does not count (walking a large model twice is a few percent of a run).
bool counts_wanted(const Options& o) { return !o.report.empty() || (!o.quiet && o.infer && isatty(STDERR_FILENO)); }

// The summary lines (kept in the report, -q or not) and, on a terminal, the table of
// counts before and after.
void finish(const Options& o, const std::string& summary) {
  if (progress) progress->stop();
  std::cerr << summary;
  if (o.quiet || !o.infer || !isatty(STDERR_FILENO) || !run_report.before || !run_report.after) return;
  std::cerr << shapeprop::counts_table(*run_report.before, *run_report.after);
}

// Models the run is done with (the written one, the transform's earlier rounds) are not
// destroyed: the process is about to exit, and freeing a large model message by message
// takes a noticeable part of a run (clang's -disable-free does the same). Reachable from a
// global, so that leak checkers do not count them.
auto* const kept_models = new std::vector<std::unique_ptr<onnx::ModelProto>>;
void keep_until_exit(onnx::ModelProto&& model) {
  kept_models->push_back(std::make_unique<onnx::ModelProto>(std::move(model)));
}

// The job itself: annotate, or specialize and inline. Returns the exit code when the run
// must stop. Without `summary` (a second run, to check idempotence) it reports nothing.
std::optional<int> process(const Options& o, onnx::ModelProto& model, std::string* summary) {
  if (!o.infer) return std::nullopt;
  std::string debug;
  shapeprop::Diagnostics diagnostics;
  if (o.transforms()) {
    shapeprop::TransformOptions t;
    t.infer = o.infer_options;
    t.inline_policy = o.inlining();
    t.small_limit = o.small_limit;
    t.naming = o.naming.value_or(shapeprop::Naming::Copies);
    t.keep = o.keep;
    t.passes = o.passes;
    t.retire = keep_until_exit;
    if (summary && o.print_after) {  // not in the second run of --verify-idempotent
      t.print_after = o.print_after;
      t.after_pass = [](shapeprop::Pass pass, const onnx::ModelProto& m) {
        shapeprop::ProgressLine::Pause pause(progress);
        std::cerr << "// after " << shapeprop::pass_info(pass).name << '\n';
        shapeprop::print_model(std::cerr, m);
        std::cerr.flush();
      };
    }
    for (const auto& id : o.keep)  // (domain, name); clang 14 cannot capture a structured binding
      if (std::none_of(model.functions().begin(), model.functions().end(), [&id](const onnx::FunctionProto& f) {
            return shapeprop::FunctionId::canonical_domain(f.domain()) == id.first && f.name() == id.second;
          })) {
        if (summary)
          report_errors({shapeprop::Diagnostic::error("--keep names " + id.first + "::" + id.second +
                                                      ", which the model does not define")
                             .in_file(o.input)});
        return kBadInput;
      }
    auto done = shapeprop::specialize(model, t);
    if (!done) {
      if (summary) report_errors({shapeprop::Diagnostic(done.error()).in_file(o.input)});
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
      if (summary) report_errors({shapeprop::Diagnostic(inferred.error()).in_file(o.input)});
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
    if (!o.quiet) print_others(diagnostics);
    print_errors(diagnostics);
    if (o.quiet) summary->clear();
  }
  if (failed) return kCheckFailed;
  return std::nullopt;
}

// Writes the result on stdout, checking that every byte got there (a full disk, a
// closed pipe).
shapeprop::Status write_stdout(const Options& o, const onnx::ModelProto& model) {
  if (o.emit == shapeprop::Format::Binary) {
    auto bytes = shapeprop::serialize_model(model);
    if (!bytes) return bytes.error();
    if (std::fwrite(bytes->data(), 1, bytes->size(), stdout) != bytes->size() || std::fflush(stdout) != 0)
      return shapeprop::Diagnostic::error(std::string("cannot write to standard output: ") + std::strerror(errno));
    return shapeprop::Ok{};
  }
  errno = 0;
  shapeprop::print_model(std::cout, model);
  std::cout.flush();
  if (!std::cout) {
    const int error = errno;
    return shapeprop::Diagnostic::error(std::string("cannot write to standard output") +
                                        (error ? std::string(": ") + std::strerror(error) : std::string()));
  }
  return shapeprop::Ok{};
}

// --override LIB: LIB's functions replace the model's, checked (shapeprop/override.h).
// Its note goes to `notes`, printed with the summary once the output is written.
std::optional<int> override_functions(const Options& o, const std::string& library, onnx::ModelProto& model,
                                      std::string& notes) {
  auto functions = shapeprop::load_function_library(library, o.limits());
  if (!functions) {
    report_errors({functions.error()});
    return kBadInput;
  }
  auto done = shapeprop::apply_overrides(model, *functions, library, o.infer_options);
  if (!done) {
    report_errors({done.error()});
    return kBadInput;
  }
  record(done->diagnostics);
  if (o.quiet) return std::nullopt;
  print_others(done->diagnostics);
  if (!done->replaced.empty()) {
    std::string names;
    for (const auto& id : done->replaced) names += (names.empty() ? "" : ", ") + id.str();
    const size_t n = done->contexts_checked;
    notes += "onnx-infer-shapes: note: --override " + library + " replaced " + names + " (" + std::to_string(n) +
             " context" + (n == 1 ? "" : "s") + " checked)\n";
  }
  return std::nullopt;
}

// --mode check: the model is read, never written. Its findings (declarations proven
// false) are the report, one line each, each clipped; a model that cannot be read or
// checked (malformed: check_model then stops before its closing note) is one line, the
// first error and a count of the rest.
int run_check(const Options& o) {
  shapeprop::PhaseClock loading(run_report.phases, "load", o.infer_options.on_phase);
  auto model = shapeprop::load_model(o.input, o.limits());
  loading.stop();
  if (!model) {
    report_errors({model.error()});
    return kBadInput;
  }
  shapeprop::CheckOptions options;
  options.origin = o.input;
  options.assume_positive_dims = o.infer_options.assume_positive_dims;
  options.limits = o.limits();
  if (counts_wanted(o)) run_report.count_before(*model);
  shapeprop::PhaseClock clock(run_report.phases, "check", o.infer_options.on_phase);
  const auto found = shapeprop::check_model(*model, options);
  clock.stop();
  run_report.add_check(found);
  if (counts_wanted(o)) run_report.count_after(*model);  // unchanged: the report says so
  record(found);
  const bool failed = shapeprop::has_errors(found);
  if (failed && found.back().severity != shapeprop::Severity::Note) {
    print_errors(found);
    return kCheckFailed;
  }
  shapeprop::ProgressLine::Pause pause(progress);
  for (const auto& d : o.quiet ? errors_only(found) : found) std::cerr << d.str() << '\n';
  return failed ? kCheckFailed : kOk;
}

int run(const Options& o) {
  if (o.mode == Mode::Check) return run_check(o);
  // The input is never modified, not even by naming it as the output.
  std::error_code same_ec;
  if (o.output && std::filesystem::equivalent(o.input, *o.output, same_ec)) {
    error("the output '" + *o.output + "' is the input; write to another file");
    return kBadInput;
  }
  auto& phases = run_report.phases;
  const auto& on_phase = o.infer_options.on_phase;
  shapeprop::PhaseClock loading(phases, "load", on_phase);
  auto model = shapeprop::load_model(o.input, o.limits());
  if (!model) {
    report_errors({model.error()});
    return kBadInput;
  }
  loading.stop();
  if (counts_wanted(o)) run_report.count_before(*model);
  shapeprop::PhaseClock validating(phases, "validation", on_phase);
  const shapeprop::OpRules* rules = o.infer_options.op_rules.get();
  auto problems = shapeprop::validate_model(*model, o.input, rules, shapeprop::CheckerMode::as_inference, o.limits());
  record(problems);
  if (shapeprop::has_errors(problems)) {
    print_errors(problems);
    return kBadInput;
  }
  if (!o.quiet) print_others(warnings_only(problems));
  validating.stop();
  std::string notes;
  if (!o.overrides.empty()) {
    shapeprop::PhaseClock overriding(phases, "override", on_phase);
    for (const auto& library : o.overrides)
      if (auto stop = override_functions(o, library, *model, notes)) return *stop;
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
    if (auto rt = shapeprop::verify_text_roundtrip(*model, o.limits()); !rt) checks.push_back(rt.error());
  if (o.verify_full_check)
    for (auto& d : shapeprop::run_onnx_checker(*model, /*full_check=*/true, "<output>", rules))
      checks.push_back(d);
  if (!checks.empty()) {
    report_errors(checks);
    return kCheckFailed;
  }
  verifying.reset();
  if (counts_wanted(o)) run_report.count_after(*model);

  shapeprop::PhaseClock writing(phases, "write", on_phase);
  if (!o.output) {
    if (auto written = write_stdout(o, *model); !written) {
      error(written.error().message);
      return kBadInput;
    }
    writing.stop();
    finish(o, summary);
    keep_until_exit(std::move(*model));
    return kOk;
  }
  const auto format = o.emit ? *o.emit : shapeprop::format_for_path(*o.output).value_or(shapeprop::Format::Binary);
  if (auto saved = shapeprop::save_model(*model, *o.output, format, o.limits()); !saved) {
    report_errors({saved.error()});
    return kBadInput;
  }
  writing.stop();
  finish(o, summary);
  keep_until_exit(std::move(*model));
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
      report_errors({rules.error()});
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
  if (same(o.report, o.input) || (o.output && same(o.report, *o.output))) {
    cli::error("the report '" + o.report + "' would replace the " + (same(o.report, o.input) ? "input" : "output") +
               "; write it to another file");
    return false;
  }
  return true;
}

// --report: the report of the run, failed or not. Returns the exit code.
int write_report(const Options& o, int status) {
  run_report.ok = status == kOk;
  if (auto written = shapeprop::write_report(run_report, o.report); !written) {
    print_errors({written.error()});
    return status == kOk ? kBadInput : status;
  }
  return status;
}

void start_report(const Options& o) {
  const auto policy = o.inlining();
  run_report.input = o.input;
  run_report.mode = o.mode == Mode::Check                   ? "check"
                    : !o.transforms()                       ? "annotate"
                    : policy == shapeprop::InlinePolicy::None ? "specialize"
                                                              : "inline";
  run_report.options.infer = o.infer_options;
  run_report.options.inline_policy = policy;
  run_report.options.small_limit = o.small_limit;
}

}  // namespace

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);
  // A reader that goes away (a closed pipe, a FIFO) makes a write fail with EPIPE, which
  // is reported like any failed write, instead of killing the process silently.
  std::signal(SIGPIPE, SIG_IGN);
  Options options;
  if (auto done = cli::parse_args(argc, argv, options)) return *done;
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
