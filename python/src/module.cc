// shapeprop._native: the compiled half of the Python package (python/shapeprop/ is the
// other). One entry point, run(), over serialized models: the Python side turns
// onnx.ModelProto objects (of whatever onnx version is installed) into bytes and back,
// so that this module never shares protobuf classes with the onnx package. The GIL is
// released while the C++ work runs.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <stdexcept>

#include "run.h"
#include "shapeprop/version.h"

namespace py = pybind11;

namespace {

shapeprop::python::Job job_named(const std::string& name) {
  if (name == "annotate") return shapeprop::python::Job::Annotate;
  if (name == "specialize") return shapeprop::python::Job::Specialize;
  if (name == "check") return shapeprop::python::Job::Check;
  throw std::invalid_argument("job must be 'annotate', 'specialize' or 'check', not '" + name + "'");
}

shapeprop::InlinePolicy policy_named(const std::string& name) {
  if (name == "none") return shapeprop::InlinePolicy::None;
  if (name == "all") return shapeprop::InlinePolicy::All;
  if (name == "small") return shapeprop::InlinePolicy::Small;
  throw std::invalid_argument("inline must be 'none', 'all' or 'small', not '" + name + "'");
}

py::tuple run(const py::bytes& source, bool from_path, const std::string& origin, const std::string& job,
              const std::string& inline_policy, size_t small_limit, bool strict, bool annotate_functions,
              bool assume_positive_dims, const std::vector<std::string>& schemas,
              const std::string& shipped_rules, const std::string& output_path, bool describe_contexts,
              const std::vector<std::pair<std::string, int64_t>>& dims,
              const std::vector<std::pair<std::string, std::vector<std::optional<int64_t>>>>& input_shapes,
              const std::vector<std::tuple<std::string, int64_t, int64_t>>& dim_ranges,
              const std::vector<std::pair<std::string, std::string>>& rename_dims, bool name_dims,
              const std::vector<std::string>& expand_ops, std::optional<int64_t> target_opset) {
  shapeprop::python::Request q;
  q.source = source;  // a copy: the bytes object may change hands while the GIL is released
  q.from_path = from_path;
  q.origin = origin;
  q.job = job_named(job);
  q.options.inline_policy = policy_named(inline_policy);
  q.options.small_limit = small_limit;
  q.options.infer.strict = strict;
  q.options.infer.annotate_functions = annotate_functions;
  q.options.infer.assume_positive_dims = assume_positive_dims;
  q.options.infer.describe_contexts = describe_contexts;
  for (const auto& op : expand_ops) {
    if (op == "all-functions")
      q.options.expand.all_functions = true;
    else if (op.empty())
      throw std::invalid_argument("expand_ops takes ai.onnx op types or 'all-functions', not ''");
    else
      q.options.expand.ops.insert(op);
  }
  if (target_opset && (*target_opset < 1 || *target_opset > shapeprop::onnx_max_opset("")))
    throw std::invalid_argument("target_opset must be an ai.onnx opset from 1 to " +
                                std::to_string(shapeprop::onnx_max_opset("")) + ", not " + std::to_string(*target_opset));
  q.options.expand.target_opset = target_opset;
  q.schemas = schemas;
  q.shapes.dims = dims;
  q.shapes.inputs = input_shapes;
  for (const auto& [name, min, max] : dim_ranges) q.shapes.ranges[name] = shapeprop::DimRange{min, max};
  q.shapes.renames = rename_dims;
  q.shapes.name_dims = name_dims;
  q.shipped_rules = shipped_rules;
  q.output_path = output_path;
  shapeprop::python::Outcome outcome;
  {
    py::gil_scoped_release released;
    outcome = shapeprop::python::run(q);
  }
  py::object model = outcome.model ? py::object(py::bytes(*outcome.model)) : py::object(py::none());
  return py::make_tuple(model, py::str(outcome.report));
}

}  // namespace

PYBIND11_MODULE(_native, m) {
  m.doc() = "The compiled half of shapeprop: run() over serialized models (use the functions of the shapeprop "
            "package instead).";
  m.def("run", &run, py::arg("source"), py::kw_only(), py::arg("from_path"), py::arg("origin"), py::arg("job"),
        py::arg("inline_policy") = "none", py::arg("small_limit") = 8, py::arg("strict") = false,
        py::arg("annotate_functions") = true, py::arg("assume_positive_dims") = true,
        py::arg("schemas") = std::vector<std::string>(), py::arg("shipped_rules") = "", py::arg("output_path") = "",
        py::arg("describe_contexts") = false,
        py::arg("dims") = std::vector<std::pair<std::string, int64_t>>(),
        py::arg("input_shapes") = std::vector<std::pair<std::string, std::vector<std::optional<int64_t>>>>(),
        py::arg("dim_ranges") = std::vector<std::tuple<std::string, int64_t, int64_t>>(),
        py::arg("rename_dims") = std::vector<std::pair<std::string, std::string>>(), py::arg("name_dims") = false,
        py::arg("expand_ops") = std::vector<std::string>(), py::arg("target_opset") = std::nullopt,
        R"(Runs one job on a model and returns (result, report_json).

source: the model's serialized bytes, or its path (UTF-8 bytes) when from_path.
origin: how diagnostics and the report name the model.
job: 'annotate' (infer_shapes), 'specialize' (specialize) or 'check' (check_model: the
checker of onnx-infer-shapes --mode check, with the shipped rules; nothing else applies).
schemas: folders of rules read after the shipped ones, which are in shipped_rules (an
installed package's copy) or, when that is empty, where the library finds them.
result: the resulting model's bytes, or None when the run failed, when job is 'check',
or when output_path was given (the result is saved there, atomically).
report_json: the report of the run (docs/report.schema.json); 'ok' says whether it worked.
describe_contexts: list each function's contexts in the report (a walk more, for return_report).
dims, input_shapes, dim_ranges, rename_dims, name_dims: the deployment shapes (as
--set-dim NAME=VALUE, --input-shape INPUT=D0,..., None for ?, --dim-range NAME=MIN..MAX
as (name, min, max), --rename-dim OLD=NEW and --name-dims).
expand_ops, target_opset: the lowering (as --expand-ops OP,... and --target-opset N; job
'specialize' only).
The GIL is released while the work runs.)");
  m.attr("version") = shapeprop::version();
  m.attr("onnx_version") = shapeprop::onnx_version();
}
