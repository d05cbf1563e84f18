// One run of shapeprop (see shapeprop/driver.h): each step records what it finds in the
// report, tells the caller, and stops the run on an error.
#include "shapeprop/driver.h"
#include "shapeprop/version.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <optional>
#include <set>
#include <string>
#include <system_error>
#include <thread>
#include <utility>

#include "shapeprop/check.h"
#include "shapeprop/infer.h"
#include "shapeprop/options.h"
#include "shapeprop/override.h"
#include "shapeprop/schemas.h"
#include "shapeprop/text.h"
#include "shapeprop/validate.h"

namespace shapeprop {

namespace {

namespace fs = std::filesystem;

// "expanded: Attention (2 calls, 2 bodies) into 46 nodes, ...; converted from opset 23 to 20"
std::optional<std::string> lowering_line(const TransformResult& done, const ExpandRequest& asked) {
  if (!asked.any()) return std::nullopt;
  std::string line = "expanded:";
  for (const auto& e : done.expanded) {
    size_t nodes = 0;
    for (const auto& [op, n] : e.nodes) nodes += n;
    line += std::string(line.back() == ':' ? " " : ", ") + e.op + " (" + std::to_string(e.calls) +
            (e.calls == 1 ? " call, " : " calls, ") + std::to_string(e.functions) +
            (e.functions == 1 ? " body" : " bodies") + ") into " + std::to_string(nodes) + " nodes";
  }
  if (done.expanded.empty()) line += " nothing";
  if (done.converted_from_opset)
    line += "; converted from opset " + std::to_string(done.converted_from_opset) + " to " +
            std::to_string(*asked.target_opset);
  return line;
}

class Job {
 public:
  Job(const JobOptions& options, JobOutcome& out) : o_(options), out_(out), options_(options.transform) {
    origin_ = o_.origin.empty() ? o_.input.string() : o_.origin;
    Report& r = out_.report;
    r.input = origin_;
    r.mode = mode_name(o_);
    r.options = o_.transform;
  }

  // The model is read before the rules are: input that is no model (a device, a file of
  // another kind) is refused without loading them.
  JobStatus run() {
    if (o_.kind == JobKind::Check) return check();
    if (o_.output && o_.bytes == std::nullopt && !o_.replace_input) {
      // The input is never modified, not even by naming it as the output.
      std::error_code same;
      if (fs::equivalent(o_.input, *o_.output, same))
        return fail(Step::Write, Diagnostic::error("the output '" + o_.output->string() +
                                                   "' is the input; write to another file"));
    }
    if (!load()) return JobStatus::BadInput;
    if (!load_rules()) return JobStatus::BadInput;
    if (!validate()) return JobStatus::BadInput;
    if (!override_functions()) return JobStatus::BadInput;
    if (!apply_shapes()) return JobStatus::BadInput;
    std::set<std::string> names = o_.infer ? dim_params_of(*out_.model) : std::set<std::string>();
    std::optional<JobStatus> stop;
    try {
      stop = process(*out_.model, /*record=*/true);
    } catch (...) {  // the checker's refusal first, as when it ran before the analysis
      if (!join_checker()) stop = JobStatus::BadInput;
      if (!stop) throw;
    }
    if (stop) {
      out_.model.reset();  // no result; a transform may have moved its initializers out
      return *stop;
    }
    // Whatever the run proved, a result holding a dim_param that no one can read is not
    // written (a defect of ours, reported as one, never a partial or misleading model).
    for (const auto& named : out_.report.output_names) names.insert(named.name);  // --name-dims' own
    if (o_.infer)
      if (auto foreign = foreign_dim_param(*out_.model, names)) {
        out_.model.reset();
        tell(Step::Verification, {Diagnostic::error("internal error, please report it: " + *foreign + "; nothing is written")
                                      .in_file(origin_)});
        return JobStatus::ProblemsFound;
      }
    if (!verify()) return JobStatus::ProblemsFound;
    if (o_.count) out_.report.count_after(*out_.model);
    if (!write()) return JobStatus::BadInput;
    out_.summary.insert(out_.summary.begin(), notes_.begin(), notes_.end());
    return JobStatus::Ok;
  }

 private:
  const JobOptions& o_;
  JobOutcome& out_;
  TransformOptions options_;  // with the rules loaded
  std::string origin_;
  std::vector<std::string> notes_;  // --override's, for the summary
  // ONNX's checker running alongside the analysis (start_checker) and what it found, read
  // once it is joined. The thread is last, so that it is joined (on an exception out of
  // the run) before what it writes goes.
  Diagnostics validation_found_;  // what validate() found before it, told with what it finds
  Diagnostics checker_found_;
  std::jthread checker_;

  const Limits& limits() const { return options_.infer.limits; }
  // The call graph validate() built of the model, while the model's functions stay as
  // they were (override_functions drops it).
  std::optional<CallGraph> validated_calls_;
  // validated_calls_ for a run on `model`, once: where `model` is the model validation saw,
  // unchanged since but for declared types (apply_shapes rewrites value_info entries: no
  // node, no function, no depth); none for another (verify_idempotent's copy).
  std::optional<CallGraph> take_validated_calls(const onnx::ModelProto& model) {
    std::optional<CallGraph> calls = &model == &*out_.model ? std::move(validated_calls_) : std::nullopt;
    validated_calls_.reset();
    return calls;
  }
  PhaseClock clock(const char* phase) { return PhaseClock(out_.report.phases, phase, options_.infer.on_phase); }

  // Diagnostics that name no file name the model.
  Diagnostics in_file(Diagnostics found) const {
    for (auto& d : found)
      if (d.file.empty()) d.file = origin_;
    return found;
  }
  // Records `found` and tells the caller.
  void tell(Step step, const Diagnostics& found) {
    out_.report.diagnostics.insert(out_.report.diagnostics.end(), found.begin(), found.end());
    if (o_.on_diagnostics) o_.on_diagnostics(step, found);
  }
  JobStatus fail(Step step, Diagnostic d) {
    tell(step, {std::move(d)});
    return JobStatus::BadInput;
  }

  // The shipped rules, then those of each folder given.
  bool load_rules() {
    std::vector<fs::path> folders;
    if (!o_.shipped_rules.empty())
      folders.push_back(o_.shipped_rules);
    else if (auto builtin = builtin_schemas_dir())
      folders.push_back(*builtin);
    folders.insert(folders.end(), o_.schema_dirs.begin(), o_.schema_dirs.end());
    auto rules = load_op_rules(folders);
    if (!rules) {
      fail(Step::Rules, rules.error());
      return false;
    }
    options_.infer.op_rules = std::move(*rules);
    return true;
  }

  bool load() {
    auto loading = clock("load");
    Result<onnx::ModelProto> model =
        o_.bytes ? parse_model_binary(*o_.bytes, origin_, limits()) : load_model(o_.input, limits());
    if (model && o_.bytes)  // bytes: external data is looked up from the working folder
      if (auto external = check_external_data(*model, ".", origin_); !external) model = external.error();
    if (!model) {
      fail(Step::Load, model.error());
      return false;
    }
    loading.stop();
    out_.model = std::move(*model);
    if (o_.count) out_.report.count_before(*out_.model);
    return true;
  }

  bool validate() {
    // Here, not before the input is read: a file refused there needs no schema.
    register_onnx_schemas_once();
    auto validating = clock("validation");
    const OpRules* rules = options_.infer.op_rules.get();
    const bool alongside = check_alongside();
    const Diagnostics found =
        alongside ? validate_model_but_onnx_checker(*out_.model, origin_, rules, CheckerMode::as_inference, limits(),
                                                    options_.infer.strict, validated_calls_)
                  : validate_model(*out_.model, origin_, rules, CheckerMode::as_inference, limits(),
                                   options_.infer.strict, validated_calls_);
    if (alongside && !has_errors(found)) {
      // Told with the checker's findings, once it has run: validation's one report, as ever.
      validation_found_ = found;
      start_checker();
      return true;
    }
    tell(Step::Validation, found);
    return !has_errors(found);
  }

  // JobOptions::check_alongside, where it applies: the model reaches the first analysis
  // as validation saw it, and nothing before that analysis shows or writes it.
  bool check_alongside() const {
    const TransformOptions& t = o_.transform;
    return o_.check_alongside && o_.infer && o_.overrides.empty() && o_.shapes.empty() && !t.expand.any() &&
           t.passes.empty() && t.print_after.empty();
  }

  // ONNX's checker on a second thread, reading the model as the analysis does; the run
  // waits for it (join_checker) before it writes the model or reports what it found.
  void start_checker() {
    checker_ = std::jthread([this, rules = options_.infer.op_rules.get()] {
      try {
        checker_found_ = run_onnx_checker(*out_.model, /*full_check=*/false, origin_, rules, CheckerMode::as_inference);
      } catch (...) {  // run_onnx_checker turns what ONNX throws into its diagnostic; anything else is ours
        checker_found_ = {Diagnostic::error("internal error: ONNX's checker stopped").in_file(origin_)};
      }
    });
    options_.infer.before_writing = [this]() -> Status {
      if (join_checker()) return Ok{};
      return Diagnostic::error("ONNX's checker refused the model");  // process() reports the checker's own
    };
  }

  // Waits for the checker started alongside (the first time) and tells what validation
  // found, the checker's findings last. False when it refused the model, which then ends
  // the run (BadInput) with nothing the analysis found told: as if it had run first.
  bool join_checker() {
    if (checker_.joinable()) {
      PhaseClock waiting(out_.report.phases, "validation");
      checker_.join();
      waiting.stop();
      validation_found_.insert(validation_found_.end(), checker_found_.begin(), checker_found_.end());
      tell(Step::Validation, validation_found_);
    }
    return !has_errors(checker_found_);
  }

  // JobOptions::overrides: each library's functions replace the model's (shapeprop/override.h).
  bool override_functions() {
    if (o_.overrides.empty()) return true;
    auto overriding = clock("override");
    for (const auto& library : o_.overrides) {
      auto functions = load_function_library(library, limits());
      if (!functions) {
        fail(Step::Override, functions.error());
        return false;
      }
      validated_calls_.reset();  // the model's functions change
      auto done = apply_overrides(*out_.model, *functions, library.string(), options_.infer);
      if (!done) {
        fail(Step::Override, done.error());
        return false;
      }
      tell(Step::Override, done->diagnostics);
      if (!done->replaced.empty()) {
        std::string names;
        for (const auto& id : done->replaced) names += (names.empty() ? "" : ", ") + id.str();
        const size_t n = done->contexts_checked;
        notes_.push_back("note: --override " + library.string() + " replaced " + names + " (" + std::to_string(n) +
                         " context" + (n == 1 ? "" : "s") + " checked)");
      }
    }
    return true;
  }

  // JobOptions::shapes: into the model's declarations, and the ranges into the analysis's
  // options.
  bool apply_shapes() {
    if (o_.shapes.empty()) return true;
    auto applied = apply_input_shapes(*out_.model, o_.shapes);
    if (!applied) {
      fail(Step::Shapes, Diagnostic(applied.error()).in_file(origin_));
      return false;
    }
    for (const auto& [name, range] : applied->ranges) options_.infer.dim_ranges[name] = range;
    out_.report.options.infer.dim_ranges = options_.infer.dim_ranges;
    out_.report.shapes = std::move(*applied);
    return true;
  }

  // After a run on `model` (when `record`, into the summary and the report): --name-dims
  // names its outputs' dims, and when dims were bound, which values stay dynamic.
  void finish_shapes(onnx::ModelProto& model, const DeclaredOutputDims& declared, bool record) {
    if (o_.shapes.name_dims) {
      auto named = name_output_dims(model, declared);
      if (record) out_.report.output_names = std::move(named);
    }
    if (record && o_.shapes.binds()) {
      StaticShapes found = static_shapes(model);
      out_.summary.push_back(static_shapes_line(found));
      out_.report.summary.push_back(out_.summary.back());
      out_.report.static_shapes = std::move(found);
    }
  }

  // Annotate or transform `model`. With `record`, what it finds goes to the report, the
  // summary and the caller; without (the second run of verify_idempotent) nowhere.
  std::optional<JobStatus> process(onnx::ModelProto& model, bool record) {
    if (!o_.infer) return std::nullopt;
    std::string debug;
    Diagnostics found;
    const DeclaredOutputDims declared = o_.shapes.name_dims ? declared_output_dims(model) : DeclaredOutputDims();
    if (o_.kind == JobKind::Transform) {
      TransformOptions t = options_;
      if (!record) t.after_pass = nullptr;
      // A model the transform failed on is not the job's result (run() drops it below).
      t.consume_input = true;
      std::optional<CallGraph> calls = take_validated_calls(model);
      auto done = calls ? specialize(model, t, std::move(*calls)) : specialize(model, t);
      if (!join_checker()) return JobStatus::BadInput;
      if (!done) {
        if (record) fail(Step::Process, Diagnostic(done.error()).in_file(origin_));
        return JobStatus::BadInput;
      }
      if (record) {
        out_.report.add(*done);
        out_.report.summary.push_back(summary_line(done->stats));
        out_.summary.push_back(summary_line(done->stats));
        if (auto lowered = lowering_line(*done, t.expand)) {
          out_.report.summary.push_back(*lowered);
          out_.summary.push_back(*lowered);
        }
      }
      found = std::move(done->diagnostics);
      debug = std::move(done->annotation.debug);
    } else {
      std::optional<CallGraph> calls = take_validated_calls(model);
      auto inferred = calls ? infer_shapes(model, options_.infer, *calls) : infer_shapes(model, options_.infer);
      if (!join_checker()) return JobStatus::BadInput;
      if (!inferred) {
        if (record) fail(Step::Process, Diagnostic(inferred.error()).in_file(origin_));
        return JobStatus::BadInput;
      }
      if (record) {  // before the diagnostics it counts move out
        if (auto from = inferred->stats.ir_version_raised_from)
          out_.summary.push_back("note: ir_version raised from " + std::to_string(from) +
                                 " to 10 to hold FunctionProto.value_info (--keep-ir-version keeps it)");
        out_.summary.push_back(summary_line(*inferred));
        out_.report.add(*inferred);
        out_.report.summary.push_back(summary_line(*inferred));
      }
      found = std::move(inferred->diagnostics);
      debug = std::move(inferred->debug);
    }
    finish_shapes(model, declared, record);
    found = in_file(std::move(found));
    const bool failed = has_errors(found);
    if (record) {
      if (o_.on_debug) o_.on_debug(debug);
      tell(Step::Process, found);
    }
    if (failed) return JobStatus::ProblemsFound;
    return std::nullopt;
  }

  bool verify() {
    if (!o_.verify_idempotent && !o_.verify_roundtrip && !o_.verify_full_check) return true;
    auto verifying = clock("verification");
    const onnx::ModelProto& model = *out_.model;
    Diagnostics checks;
    if (o_.verify_idempotent && o_.infer) {
      onnx::ModelProto again = model;
      if (process(again, /*record=*/false) || again.SerializeAsString() != model.SerializeAsString())
        checks.push_back(Diagnostic::error("a second run changes the output").in_file(origin_));
    }
    if (o_.verify_roundtrip)
      if (auto rt = verify_text_roundtrip(model, limits()); !rt) checks.push_back(rt.error());
    if (o_.verify_full_check)
      for (auto& d : run_onnx_checker(model, /*full_check=*/true, "<output>", options_.infer.op_rules.get()))
        checks.push_back(d);
    if (checks.empty()) return true;
    tell(Step::Verification, checks);
    return false;
  }

  // The result, wherever it goes: the file named, standard output, or bytes; the one
  // writer of the CLI (-o and stdout) and the Python package (a path and bytes).
  bool write() {
    if (!o_.output && o_.sink == JobOptions::Sink::None) return true;
    auto writing = clock("write");
    Status written = o_.output                               ? write_file(*o_.output)
                     : o_.sink == JobOptions::Sink::Stdout ? write_stdout()
                                                             : write_bytes();
    if (!written) {
      Diagnostic d = written.error();
      if (o_.sink == JobOptions::Sink::Bytes) d.in_file(origin_);
      fail(Step::Write, std::move(d));
      return false;
    }
    return true;
  }

  Status write_file(const fs::path& output) {
    const auto format = o_.format ? *o_.format : format_for_path(output).value_or(Format::Binary);
    // External data is relative to the model's folder (the working folder for bytes).
    auto kept = check_external_data_kept(*out_.model, o_.bytes || o_.input.parent_path().empty() ? "." : o_.input.parent_path(),
                                         output.parent_path().empty() ? "." : output.parent_path(), output.string());
    if (!kept) return kept.error();
    return save_model(*out_.model, output, format, limits());
  }

  // Checking that every byte got there (a full disk, a closed pipe).
  Status write_stdout() {
    if (o_.format == Format::Binary) {
      auto bytes = serialize_model(*out_.model);
      if (!bytes) return bytes.error();
      if (std::fwrite(bytes->data(), 1, bytes->size(), stdout) != bytes->size() || std::fflush(stdout) != 0)
        return Diagnostic::error(std::string("cannot write to standard output: ") + std::strerror(errno));
      return Ok{};
    }
    errno = 0;
    print_model(std::cout, *out_.model);
    std::cout.flush();
    if (!std::cout) {
      const int error = errno;
      return Diagnostic::error(std::string("cannot write to standard output") +
                               (error ? std::string(": ") + std::strerror(error) : std::string()));
    }
    return Ok{};
  }

  Status write_bytes() {
    auto bytes = serialize_model(*out_.model);
    if (!bytes) return bytes.error();
    out_.bytes = std::move(*bytes);
    return Ok{};
  }

  // JobKind::Check: the model is read, never written. Its findings (declarations proven
  // false) are the report; the last is a note counting what was checked, unless the
  // model was too malformed to check.
  JobStatus check() {
    if (!load() || !load_rules() || !apply_shapes()) return JobStatus::BadInput;
    CheckOptions options;
    static_cast<AnalysisOptions&>(options) = options_.infer;
    options.origin = origin_;
    auto checking = clock("check");
    const Diagnostics found = check_model(*out_.model, options);
    checking.stop();
    out_.report.add_check(found);
    if (o_.count) out_.report.count_after(*out_.model);  // unchanged: the report says so
    tell(Step::Process, found);
    return has_errors(found) ? JobStatus::ProblemsFound : JobStatus::Ok;
  }
};

// The options `options` holds, as find_conflict reads them: each that differs from its
// default counts as given.
OptionUse option_use(const JobOptions& options) {
  const TransformOptions& t = options.transform;
  OptionUse use;
  use.mode = job_mode(options);
  auto set = [&use](OptionId id, bool given) { use.given.set(static_cast<size_t>(id), given); };
  set(OptionId::Inline, options.kind != JobKind::Transform && t.inline_policy != InlinePolicy::None);
  set(OptionId::Keep, !t.keep.empty());
  set(OptionId::Passes, !t.passes.empty());
  set(OptionId::PrintAfter, !t.print_after.empty());
  set(OptionId::PrintShapes, t.infer.describe_shapes);
  set(OptionId::ExpandOps, !t.expand.ops.empty() || t.expand.all_functions);
  set(OptionId::TargetOpset, t.expand.target_opset.has_value());
  set(OptionId::Naming, t.naming != Naming::Copies);
  set(OptionId::Output, options.output.has_value());
  set(OptionId::Emit, options.format.has_value());
  set(OptionId::Override, !options.overrides.empty());
  set(OptionId::KeepIrVersion, !t.infer.annotate_functions);
  set(OptionId::Declared, t.infer.declared != DeclaredTypes::Check);
  set(OptionId::OverridableInitializers, t.infer.overridable_initializers != OverridableInitializers::Type);
  set(OptionId::NoInfer, !options.infer);
  set(OptionId::DebugAnalysis, t.infer.debug);
  set(OptionId::VerifyRoundtrip, options.verify_roundtrip);
  set(OptionId::VerifyIdempotent, options.verify_idempotent);
  set(OptionId::VerifyFullCheck, options.verify_full_check);
  set(OptionId::RenameDim, !options.shapes.renames.empty());
  set(OptionId::NameDims, options.shapes.name_dims);
  use.passes = t.passes;
  use.print_after = t.print_after;
  return use;
}

}  // namespace

Mode job_mode(const JobOptions& options) {
  switch (options.kind) {
    case JobKind::Annotate: return Mode::Annotate;
    case JobKind::Transform: return options.transform.inline_policy == InlinePolicy::None ? Mode::Specialize : Mode::Inline;
    case JobKind::Check: return Mode::Check;
  }
  return Mode::Annotate;
}

const char* mode_name(const JobOptions& options) { return name_of(job_mode(options)).data(); }

Result<JobOutcome> run(const JobOptions& options) {
  if (auto conflict = find_conflict(option_use(options))) return Diagnostic::error(conflict->message(Conflict::Spelling::Keys));
  if (!options.bytes && options.input.empty()) return Diagnostic::error("no input model given");
  JobOutcome out;
  try {
    out.status = Job(options, out).run();
  } catch (const std::exception& e) {  // a bug of ours: still one clear error, never a crash
    Diagnostic d = Diagnostic::error(std::string("internal error: ") + e.what());
    out.report.diagnostics.push_back(d);
    if (options.on_diagnostics) options.on_diagnostics(Step::Process, {d});
    out.status = JobStatus::BadInput;
  }
  out.report.ok = out.status == JobStatus::Ok;
  return out;
}

}  // namespace shapeprop
