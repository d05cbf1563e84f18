// onnx-infer-shapes: the command line over the shapeprop library's driver
// (shapeprop/driver.h), which does the run; what is left here is the command line's own:
// its options, what it prints and when, the result on stdout, the report file. The
// executable (main.cc) and `python -m shapeprop` (the Python module) both run it.
// Exit codes: 0 ok, 1 problems found by a check, 2 bad usage or unreadable input. Every
// failure prints one line on stderr: the first error and a count of the others.
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "heap/huge_pages.h"
#include "cli.h"
#include "options.h"
#include "shapeprop/driver.h"
#include "shapeprop/io.h"
#include "terminal/progress.h"
#include "terminal/table.h"
#include "shapeprop/report.h"
#include "shapeprop/text.h"


namespace {

using cli::kBadInput;
using cli::kOk;
using cli::Mode;
using cli::Options;

// The run's report (written with --report; its counts make the terminal's table) and the
// progress line (on a terminal only), shared by the steps below.
shapeprop::Report run_report;
shapeprop::ProgressLine* progress = nullptr;
std::filesystem::path shipped_rules;  // run_command_line's

// Errors: one line, the first and a count of the rest. One that names no file is the
// tool's own ("onnx-infer-shapes: error: ..." under the program's name), as a usage error is.
void print_errors(const shapeprop::Diagnostics& diagnostics) {
  shapeprop::ProgressLine::Pause pause(progress);
  for (const auto& d : diagnostics)
    if (d.severity == shapeprop::Severity::Error) {
      if (d.file.empty()) std::cerr << cli::program_name() << ": ";
      break;
    }
  if (auto line = shapeprop::first_and_count(diagnostics); !line.empty()) std::cerr << line << '\n';
}

// The diagnostics `which` selects, one line each.
template <class Which>
void print_each(const shapeprop::Diagnostics& diagnostics, Which which) {
  shapeprop::ProgressLine::Pause pause(progress);
  for (const auto& d : diagnostics)
    if (which(d.severity)) std::cerr << d.str() << '\n';
}

void error(const std::string& message) {
  run_report.diagnostics.push_back(shapeprop::Diagnostic::error(message));
  shapeprop::ProgressLine::Pause pause(progress);
  cli::error(message);
}

// What the terminal shows of each step of the run, as it ends: the errors that stop it as
// one line; warnings and notes one line each (validation's warnings only), unless -q.
// --mode check's findings are its output: one line each (-q: the errors only), or, when
// the model was too malformed to check, one line.
void print_step(const Options& o, shapeprop::Step step, const shapeprop::Diagnostics& found) {
  using shapeprop::Severity;
  const bool failed = shapeprop::has_errors(found);
  if (step == shapeprop::Step::Process && o.mode == Mode::Check) {
    if (failed && found.back().severity != Severity::Note) return print_errors(found);
    return print_each(found, [&o](Severity s) { return !o.quiet || s == Severity::Error; });
  }
  if (step == shapeprop::Step::Validation) {
    if (failed) return print_errors(found);
    if (!o.quiet) print_each(found, [](Severity s) { return s == Severity::Warning; });
    return;
  }
  if (!o.quiet && (step == shapeprop::Step::Override || step == shapeprop::Step::Process))
    print_each(found, [](Severity s) { return s != Severity::Error; });
  print_errors(found);
}

// The summary lines (kept in the report, -q or not) and, on a terminal, the table of
// counts before and after.
void finish(const Options& o, const std::vector<std::string>& summary) {
  if (progress) progress->stop();
  if (o.quiet) return;
  for (const auto& line : summary) std::cerr << cli::program_name() << ": " << line << '\n';
  if (!o.infer || !isatty(STDERR_FILENO) || !run_report.before || !run_report.after) return;
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

// The counts before and after feed the report and the terminal's table only: a run that
// writes neither does not count (walking a large model twice is a few percent of a run).
bool counts_wanted(const Options& o) { return !o.report.empty() || (!o.quiet && o.infer && isatty(STDERR_FILENO)); }

// The command line as the driver's options.
shapeprop::JobOptions job_options(const Options& o) {
  shapeprop::JobOptions job;
  job.kind = o.mode == Mode::Check ? shapeprop::JobKind::Check
             : o.transforms()      ? shapeprop::JobKind::Transform
                                   : shapeprop::JobKind::Annotate;
  job.input = o.input;
  job.origin = o.input;
  shapeprop::TransformOptions& t = job.transform;
  t.infer = o.infer_options;
  t.infer.describe_shapes = o.print_shapes;
  t.inline_policy = o.inlining();
  t.small_limit = o.small_limit;
  t.naming = o.naming.value_or(shapeprop::Naming::Copies);
  t.keep = o.keep;
  t.expand = o.expand;
  t.passes = o.passes;
  t.retire = keep_until_exit;
  if (!o.print_after.empty()) {
    t.print_after = o.print_after;
    t.after_pass = [](shapeprop::Pass pass, const onnx::ModelProto& m) {
      shapeprop::ProgressLine::Pause pause(progress);
      std::cerr << "// after " << shapeprop::pass_info(pass).name << '\n';
      shapeprop::print_model(std::cerr, m);
      std::cerr.flush();
    };
  }
  job.shipped_rules = shipped_rules;
  job.schema_dirs.assign(o.schema_dirs.begin(), o.schema_dirs.end());
  job.overrides.assign(o.overrides.begin(), o.overrides.end());
  job.shapes = o.shapes;
  job.infer = o.infer;
  job.verify_roundtrip = o.verify_roundtrip;
  job.verify_idempotent = o.verify_idempotent;
  job.verify_full_check = o.verify_full_check;
  if (o.output) job.output = *o.output;
  job.format = o.emit;
  // Without -o PATH the result goes to stdout, unless the types do (--print-shapes).
  if (!o.output && !o.print_shapes) job.sink = shapeprop::JobOptions::Sink::Stdout;
  job.count = counts_wanted(o);
  job.on_diagnostics = [&o](shapeprop::Step step, const shapeprop::Diagnostics& found) { print_step(o, step, found); };
  job.on_debug = [](const std::string& debug) {
    shapeprop::ProgressLine::Pause pause(progress);
    std::cerr << debug;
  };
  return job;
}

// The run, through the library's driver (which writes the result, to -o or stdout); then
// what is the CLI's own: the types on stdout (--print-shapes), the summary and the table.
// Returns the exit code.
int run(const Options& o) {
  auto outcome = shapeprop::run(job_options(o));
  if (!outcome) {  // options the command line let through and the driver does not take
    error(outcome.error().message);
    return kBadInput;
  }
  run_report = std::move(outcome->report);
  if (outcome->status != shapeprop::JobStatus::Ok) return static_cast<int>(outcome->status);
  if (o.mode == Mode::Check) return kOk;
  if (o.print_shapes) {
    std::cout << shapeprop::shapes_text(run_report.value_shapes);
    std::cout.flush();
    if (!std::cout) {
      error("cannot write to standard output");
      return kBadInput;
    }
  }
  finish(o, outcome->summary);
  keep_until_exit(std::move(*outcome->model));
  return kOk;
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

}  // namespace

int cli::run_command_line(int argc, char** argv, bool own_process, const std::filesystem::path& rules,
                          std::string_view program) {
  shipped_rules = rules;
  cli::set_program_name(program);
  if (own_process) std::ios::sync_with_stdio(false);
  // A reader that goes away (a closed pipe, a FIFO) makes a write fail with EPIPE, which
  // is reported like any failed write, instead of killing the process silently.
  std::signal(SIGPIPE, SIG_IGN);
  Options options;
  if (auto done = cli::parse_args(argc, argv, options)) return *done;
  if (!options.report.empty() && !report_path_is_free(options)) return kBadInput;
  if (own_process) {
    std::error_code ec;
    const auto size = std::filesystem::file_size(options.input, ec);  // none for a pipe
    shapeprop::heap::settle(shapeprop::heap::run_estimate(ec ? 0 : size));
  }
  options.infer_options.describe_contexts = !options.report.empty();
  std::optional<shapeprop::ProgressLine> line;
  if (!options.quiet && isatty(STDERR_FILENO)) {
    line.emplace(stderr, cli::program_name());
    progress = &*line;
    options.infer_options.on_phase = [](std::string_view phase) { progress->phase(phase); };
  }
  int status;
  try {
    status = run(options);
  } catch (const std::exception& e) {  // a bug of ours: still one clear line, never a crash
    if (progress) progress->stop();
    error(std::string("internal error: ") + e.what());
    status = kBadInput;
  }
  if (progress) progress->stop();
  return options.report.empty() ? status : write_report(options, status);
}
