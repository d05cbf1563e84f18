#include "run.h"

#include "shapeprop/check.h"
#include "shapeprop/infer.h"
#include "shapeprop/io.h"
#include "shapeprop/report.h"
#include "shapeprop/schemas.h"
#include "shapeprop/validate.h"

namespace shapeprop::python {

namespace {

namespace fs = std::filesystem;

const char* mode_name(const Request& q) {
  switch (q.job) {
    case Job::Annotate: return "annotate";
    case Job::Specialize: return q.options.inline_policy == InlinePolicy::None ? "specialize" : "inline";
    case Job::Check: return "check";
  }
  return "annotate";
}

// One run, recording into its report as it goes; false once it cannot go on.
class Run {
 public:
  explicit Run(const Request& q) : q_(q), options_(q.options) {
    report_.input = q.origin;
    report_.mode = mode_name(q);
    report_.options = q.options;
  }

  Outcome operator()() {
    Outcome out;
    report_.ok = q_.job == Job::Check ? load() && check()
                                      : load_rules() && load() && validate() && process() && finish(out);
    out.report = to_json(report_);
    return out;
  }

 private:
  const Request& q_;
  TransformOptions options_;
  Report report_;
  onnx::ModelProto model_;
  fs::path model_dir_ = ".";

  bool fail(Diagnostic d) {
    if (d.file.empty()) d.file = q_.origin;
    report_.diagnostics.push_back(std::move(d));
    return false;
  }
  // Keeps `diagnostics` (naming the model where they name no file); false if one is an error.
  bool keep(Diagnostics diagnostics) {
    for (auto& d : diagnostics) {
      if (d.file.empty()) d.file = q_.origin;
      report_.diagnostics.push_back(std::move(d));
    }
    return !has_errors(report_.diagnostics);
  }

  bool load_rules() {
    if (q_.schemas.empty() && q_.shipped_rules.empty()) return true;  // the library's own (builtin_op_rules)
    std::vector<fs::path> folders;
    if (!q_.shipped_rules.empty())
      folders.emplace_back(q_.shipped_rules);
    else if (auto builtin = builtin_schemas_dir())
      folders.push_back(*builtin);
    folders.insert(folders.end(), q_.schemas.begin(), q_.schemas.end());
    auto rules = load_op_rules(folders);
    if (!rules) return fail(rules.error());
    options_.infer.op_rules = std::move(*rules);
    return true;
  }

  bool load() {
    PhaseClock clock(report_.phases, "load");
    auto model = q_.from_path ? load_model(q_.source) : parse_model_binary(q_.source, q_.origin);
    if (!model) return fail(model.error());
    model_ = std::move(*model);
    if (q_.from_path) {
      model_dir_ = fs::path(q_.source).parent_path();
    } else if (auto external = check_external_data(model_, model_dir_, q_.origin); !external) {
      return fail(external.error());  // bytes: external data is looked up from the current folder
    }
    report_.count_before(model_);
    return true;
  }

  bool validate() {
    PhaseClock clock(report_.phases, "validation");
    return keep(validate_model(model_, q_.origin, options_.infer.op_rules.get()));
  }

  bool process() {
    if (q_.job == Job::Specialize) {
      auto done = specialize(model_, options_);
      if (!done) return fail(done.error());
      report_.add(*done);
      report_.summary.push_back(summary_line(done->stats));
      return keep(std::move(done->diagnostics));
    }
    auto inferred = infer_shapes(model_, options_.infer);
    if (!inferred) return fail(inferred.error());
    report_.add(*inferred);
    report_.summary.push_back(summary_line(*inferred));
    return keep(std::move(inferred->diagnostics));
  }

  // The checker, as --mode check runs it (its own structural checks, the shipped rules);
  // the model stays as it was loaded.
  bool check() {
    CheckOptions options;
    options.origin = q_.origin;
    options.assume_positive_dims = options_.infer.assume_positive_dims;
    PhaseClock clock(report_.phases, "check");
    auto found = check_model(model_, options);
    clock.stop();
    report_.add_check(found);
    report_.count_after(model_);
    return keep(std::move(found));
  }

  bool finish(Outcome& out) {
    report_.count_after(model_);
    PhaseClock clock(report_.phases, "write");
    if (!q_.output_path.empty()) {
      const auto format = format_for_path(q_.output_path).value_or(Format::Binary);
      if (auto saved = save_model(model_, q_.output_path, format); !saved) return fail(saved.error());
      return true;
    }
    auto bytes = serialize_model(model_);
    if (!bytes) return fail(bytes.error());
    out.model = std::move(*bytes);
    return true;
  }
};

}  // namespace

Outcome run(const Request& request) {
  try {
    return Run(request)();
  } catch (const std::exception& e) {  // a bug of ours: a report that says so, never a crash
    Report report;
    report.input = request.origin;
    report.mode = mode_name(request);
    report.diagnostics.push_back(Diagnostic::error(std::string("internal error: ") + e.what()).in_file(request.origin));
    return {std::nullopt, to_json(report)};
  }
}

}  // namespace shapeprop::python
