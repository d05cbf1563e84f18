// One run of shapeprop, as onnx-infer-shapes and the Python package both do it: the rules,
// load, validate, override, then annotate, transform (specialize and inline) or check,
// verify, write, with a report of it all. The CLI and the Python module hold no pipeline
// of their own: they fill JobOptions, print (or hand back) what the run tells them, and
// turn JobOutcome::status into an exit code or a return value.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "onnx/onnx_pb.h"
#include "shapeprop/diagnostics.h"
#include "shapeprop/enum_names.h"
#include "shapeprop/input_shapes.h"
#include "shapeprop/io.h"
#include "shapeprop/report.h"
#include "shapeprop/specialize.h"

namespace shapeprop {

enum class JobKind {
  Annotate,   // infer_shapes: value_info written, nothing else changed
  Transform,  // specialize (inlining by transform.inline_policy, passes by transform.passes)
  Check,      // check_model: the model is read, never written
};

// The steps of a run, as JobOptions::on_diagnostics names them.
enum class Step { Rules, Load, Validation, Override, Shapes, Process, Verification, Write };

struct JobOptions {
  JobKind kind = JobKind::Annotate;
  // The model: the file at `input`, or, when `bytes` is set, those serialized bytes (whose
  // external data is then looked up from the working folder).
  std::filesystem::path input;
  std::optional<std::string> bytes;
  // How diagnostics and the report name the model; empty: `input`.
  std::string origin;
  // The transform's options, and in them the analysis's (transform.infer: limits, rules,
  // strict, symbolic dims >= 1), for every job: the check takes its limits, rules and
  // assumption from there too. transform.infer.op_rules is set from the folders below.
  TransformOptions transform;
  // The rules' folders: the shipped ones (empty: builtin_schemas_dir()), then these.
  std::filesystem::path shipped_rules;
  std::vector<std::filesystem::path> schema_dirs;
  // Function libraries whose functions replace the model's (shapeprop/override.h), in order.
  std::vector<std::filesystem::path> overrides;
  // Deployment shapes (shapeprop/input_shapes.h), after the overrides: bindings, input
  // shapes, renames and names written into the model, ranges handed to the analysis
  // (transform.infer.dim_ranges gets them). A name the model lacks or a shape it
  // contradicts stops the run (Step::Shapes). When they bind a dim, the summary and the
  // report say which values of the result stay dynamic. A check takes no renames or names.
  InputShapes shapes;
  // false: load, validate and write only (--no-infer).
  bool infer = true;
  // Checks of the result: it prints as text that parses back unchanged; a second run on it
  // changes nothing; ONNX's full checker accepts it.
  bool verify_roundtrip = false;
  bool verify_idempotent = false;
  bool verify_full_check = false;
  // Where the result goes (a regular file atomically; a device or FIFO in place), in
  // `format` (default: from the extension, binary); none: where `sink` says.
  std::optional<std::filesystem::path> output;
  std::optional<Format> format;
  // Without `output`: the result stays in JobOutcome::model only (None), or is also
  // written on standard output (Stdout, in `format`, default text; the CLI without -o),
  // or serialized into JobOutcome::bytes (Bytes; the Python package).
  enum class Sink { None, Stdout, Bytes };
  Sink sink = Sink::None;
  // The output may name the input, which it then replaces (atomically, after the run
  // succeeded), as the Python package's infer_shapes_path does like ONNX's. Otherwise
  // that is an error: the CLI never modifies its input.
  bool replace_input = false;
  // Count what the model holds before and after (JobOutcome::report.before and .after).
  bool count = false;
  // ONNX's checker, validation's last and longest step (about a third of loading and
  // validating), runs on a second thread while the first analysis reads the model; the
  // run waits for it before it writes anything (InferOptions::before_writing), and a model
  // it refuses ends the run as before, with the same diagnostics and no output. Only
  // where nothing changes the model before the analysis: not with overrides, shapes,
  // --expand-ops or --target-opset, --passes or --print-after. false: it runs before the
  // analysis, on the calling thread.
  bool check_alongside = true;
  // Told, as each step ends, what it found (what it found is also in the report), so
  // that a driver can print as the run goes; `process`'s debug text (--debug-analysis)
  // comes just before its diagnostics. Either may be empty.
  std::function<void(Step, const Diagnostics&)> on_diagnostics;
  std::function<void(const std::string&)> on_debug;
};

enum class JobStatus {
  Ok = 0,
  ProblemsFound = 1,  // the check found false declarations, --strict errors, a --verify-* check failed
  BadInput = 2,       // the model, a rule or a library could not be read, or is malformed; the output was not written
};

struct JobOutcome {
  JobStatus status = JobStatus::BadInput;
  // The result (annotate and transform, when they succeeded), written to
  // JobOptions::output already if one was given.
  std::optional<onnx::ModelProto> model;
  // The result serialized, for JobOptions::Sink::Bytes.
  std::optional<std::string> bytes;
  // Lines for the end of the run, after the result is written (the CLI prints each
  // after "onnx-infer-shapes: "): --override's notes, a raised IR version, the summary.
  std::vector<std::string> summary;
  // Everything else: the diagnostics of every step (each naming the model's file where
  // it names none), counts, statistics, phases. ok is set.
  Report report;
};

// Checks the options themselves (the error names the option); then runs the job. Every
// problem of the model or of the files it names is in the outcome, never an error here.
Result<JobOutcome> run(const JobOptions& options);

// The mode these options run in, and its name in the report ("annotate", "specialize",
// "inline" or "check"; shapeprop/enum_names.h).
Mode job_mode(const JobOptions& options);
const char* mode_name(const JobOptions& options);

}  // namespace shapeprop
