// The work behind each function of the Python package, with no Python in it (it runs with
// the GIL released): load the model from its path or parse its bytes, validate it,
// annotate, specialize or check it, and give back its bytes (or save it), with the report
// of the run as JSON. Errors end up in the report (ok: false), never as exceptions.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "shapeprop/input_shapes.h"
#include "shapeprop/specialize.h"

namespace shapeprop::python {

enum class Job {
  Annotate,    // infer_shapes, infer_shapes_path
  Specialize,  // specialize (inlining by options.inline_policy)
  Check,       // check_model (shapeprop/check.h, as --mode check): nothing written
};

struct Request {
  std::string source;        // the model's serialized bytes, or its path when from_path
  bool from_path = false;
  std::string origin;        // how diagnostics and the report name the model
  Job job = Job::Annotate;
  TransformOptions options;  // options.infer.op_rules is set from `schemas`
  InputShapes shapes;        // dims, input_shapes, dim_ranges, rename_dims, name_dims
  std::vector<std::string> schemas;  // folders of rules for ops outside ONNX's registry, after the shipped ones
  std::string shipped_rules;         // the shipped rules' folder; empty: where the library finds it
  std::string output_path;   // save the result there (its format from the extension) instead of returning it
};

struct Outcome {
  std::optional<std::string> model;  // the result's bytes (Annotate, Specialize; none when saved or failed)
  std::string report;                // the report, as JSON (docs/report.schema.json)
};

Outcome run(const Request& request);

}  // namespace shapeprop::python
