// onnx-infer-shapes: the command-line driver over the shapeprop library.
//
// Loads a model (binary or text), validates it, and writes it (binary or text).
// Exit codes: 0 ok, 1 problems found by a check, 2 bad usage or unreadable input. Every
// failure prints one line on stderr: the first error and a count of the others.
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <optional>
#include <string>

#include "options.h"
#include "shapeprop/infer.h"
#include "shapeprop/io.h"
#include "shapeprop/specialize.h"
#include "shapeprop/text.h"
#include "shapeprop/validate.h"

namespace {

using cli::kBadInput;
using cli::kCheckFailed;
using cli::kOk;
using cli::Mode;
using cli::Options;

// Errors: one line, the first and a count of the rest.
void report_errors(const shapeprop::Diagnostics& diagnostics) {
  if (auto line = shapeprop::first_and_count(diagnostics); !line.empty()) std::cerr << line << '\n';
}

// Warnings and notes: one line each.
void report_others(const shapeprop::Diagnostics& diagnostics) {
  for (const auto& d : diagnostics)
    if (d.severity != shapeprop::Severity::Error) std::cerr << d.str() << '\n';
}

shapeprop::Diagnostics warnings_only(const shapeprop::Diagnostics& all) {
  shapeprop::Diagnostics out;
  for (const auto& d : all)
    if (d.severity == shapeprop::Severity::Warning) out.push_back(d);
  return out;
}

// The job itself: annotate, or specialize and inline. Returns the exit code when the run
// must stop. Without `summary` (a second run, to check idempotence) it reports nothing.
std::optional<int> process(const Options& o, onnx::ModelProto& model, std::string* summary) {
  if (!o.infer) return std::nullopt;
  std::string debug;
  shapeprop::Diagnostics diagnostics;
  if (o.mode != Mode::Annotate || o.inline_policy) {
    shapeprop::TransformOptions t;
    t.infer = o.infer_options;
    t.inline_policy = o.inline_policy.value_or(o.mode == Mode::Inline ? shapeprop::InlinePolicy::All
                                                                      : shapeprop::InlinePolicy::None);
    t.small_limit = o.small_limit;
    auto done = shapeprop::specialize(model, t);
    if (!done) {
      if (summary) report_errors({shapeprop::Diagnostic(done.error()).in_file(o.input)});
      return kBadInput;
    }
    if (summary) *summary = "onnx-infer-shapes: " + shapeprop::summary_line(done->stats) + "\n";
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
    }
    diagnostics = std::move(inferred->diagnostics);
    debug = std::move(inferred->debug);
  }
  for (auto& d : diagnostics)
    if (d.file.empty()) d.file = o.input;
  const bool failed = shapeprop::has_errors(diagnostics);
  if (summary) {
    std::cerr << debug;
    if (!o.quiet) report_others(diagnostics);
    report_errors(diagnostics);
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

int run(const Options& o) {
  // The input is never modified, not even by naming it as the output.
  std::error_code same_ec;
  if (o.output && std::filesystem::equivalent(o.input, *o.output, same_ec)) {
    cli::error("the output '" + *o.output + "' is the input; write to another file");
    return kBadInput;
  }
  auto model = shapeprop::load_model(o.input, o.limits());
  if (!model) {
    report_errors({model.error()});
    return kBadInput;
  }
  const auto input_dir = std::filesystem::path(o.input).parent_path();
  auto problems = shapeprop::validate_model(*model, o.input, input_dir, o.limits());
  if (shapeprop::has_errors(problems)) {
    report_errors(problems);
    return kBadInput;
  }
  if (!o.quiet) report_others(warnings_only(problems));

  // Printed last, once the output is written: a failure leaves one line on stderr.
  std::string summary;
  if (auto stop = process(o, *model, &summary)) return *stop;

  shapeprop::Diagnostics checks;
  if (o.verify_idempotent && o.infer) {
    onnx::ModelProto again = *model;
    if (auto stop = process(o, again, nullptr); stop || again.SerializeAsString() != model->SerializeAsString())
      checks.push_back(shapeprop::Diagnostic::error("a second run changes the output").in_file(o.input));
  }
  if (o.verify_roundtrip)
    if (auto rt = shapeprop::verify_text_roundtrip(*model, o.limits()); !rt) checks.push_back(rt.error());
  if (o.verify_full_check)
    for (auto& d : shapeprop::run_onnx_checker(*model, /*full_check=*/true, "<output>", input_dir)) checks.push_back(d);
  if (!checks.empty()) {
    report_errors(checks);
    return kCheckFailed;
  }

  if (!o.output) {
    if (auto written = write_stdout(o, *model); !written) {
      cli::error(written.error().message);
      return kBadInput;
    }
    std::cerr << summary;
    return kOk;
  }
  const auto format = o.emit ? *o.emit : shapeprop::format_for_path(*o.output).value_or(shapeprop::Format::Binary);
  if (auto saved = shapeprop::save_model(*model, *o.output, format, o.limits()); !saved) {
    report_errors({saved.error()});
    return kBadInput;
  }
  std::cerr << summary;
  return kOk;
}

}  // namespace

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);
  // A reader that goes away (a closed pipe, a FIFO) makes a write fail with EPIPE, which
  // is reported like any failed write, instead of killing the process silently.
  std::signal(SIGPIPE, SIG_IGN);
  Options options;
  if (auto done = cli::parse_args(argc, argv, options)) return *done;
  try {
    return run(options);
  } catch (const std::exception& e) {  // a bug of ours: still one clear line, never a crash
    cli::error(std::string("internal error: ") + e.what());
    return kBadInput;
  }
}
