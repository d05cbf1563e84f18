#include "run.h"

#include "shapeprop/driver.h"

namespace shapeprop::python {

namespace {

JobKind kind_of(Job job) {
  switch (job) {
    case Job::Annotate: return JobKind::Annotate;
    case Job::Specialize: return JobKind::Transform;
    case Job::Check: return JobKind::Check;
  }
  return JobKind::Annotate;
}

JobOptions job_options(const Request& q) {
  JobOptions job;
  job.kind = kind_of(q.job);
  if (q.from_path)
    job.input = q.source;
  else
    job.bytes = q.source;  // external data is then looked up from the working folder
  job.origin = q.origin;
  job.transform = q.options;
  job.shapes = q.shapes;
  job.shipped_rules = q.shipped_rules;
  job.schema_dirs.assign(q.schemas.begin(), q.schemas.end());
  if (q.output_path.empty()) {
    if (q.job != Job::Check) job.sink = JobOptions::Sink::Bytes;
  } else {
    job.output = q.output_path;
  }
  job.replace_input = true;  // infer_shapes_path without an output replaces the model, as ONNX's does
  job.count = true;
  return job;
}

}  // namespace

// The run is shapeprop::run's, as the CLI's is; here only its outcome changes form.
Outcome run(const Request& request) {
  const JobOptions options = job_options(request);
  Outcome out;
  auto done = shapeprop::run(options);
  if (!done) {  // the options themselves (not the model): a report that says so
    Report report;
    report.input = request.origin;
    report.mode = mode_name(options);
    report.diagnostics.push_back(Diagnostic(done.error()).in_file(request.origin));
    out.report = to_json(report);
    return out;
  }
  out.model = std::move(done->bytes);
  out.report = to_json(done->report);
  return out;
}

}  // namespace shapeprop::python
