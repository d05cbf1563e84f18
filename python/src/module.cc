// shapeprop._native: the compiled half of the Python package (python/shapeprop/ is the
// other). One entry point, run(), over serialized models: the Python side turns
// onnx.ModelProto objects (of whatever onnx version is installed) into bytes and back,
// so that this module never shares protobuf classes with the onnx package. The GIL is
// released while the C++ work runs.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <stdexcept>

#include "cli.h"
#include "run.h"
#include "shapeprop/enum_names.h"
#include "shapeprop/options.h"
#include "shapeprop/version.h"

namespace py = pybind11;

namespace {

using shapeprop::OptionId;

shapeprop::python::Job job_named(const std::string& name) {
  const auto mode = shapeprop::enum_named<shapeprop::Mode>(name);
  if (mode == shapeprop::Mode::Annotate) return shapeprop::python::Job::Annotate;
  if (mode == shapeprop::Mode::Specialize) return shapeprop::python::Job::Specialize;
  if (mode == shapeprop::Mode::Check) return shapeprop::python::Job::Check;
  throw std::invalid_argument("job must be 'annotate', 'specialize' or 'check', not '" + name + "'");
}

// The value of an enum keyword, named as the option table's enums are.
template <class E>
E named(const std::string& name, const char* keyword) {
  if (auto value = shapeprop::enum_named<E>(name)) return *value;
  throw std::invalid_argument(std::string(keyword) + " must be " + shapeprop::name_choices<E>(true) + ", not '" + name + "'");
}

// The keyword of option `id`, as the option table names it.
py::arg keyword(OptionId id) { return py::arg(shapeprop::option_spec(id).key.data()); }

// The option table for the package's tests: (flag, keyword, whether Python takes it, the
// modes that take it).
py::list option_table() {
  py::list out;
  for (const auto& o : shapeprop::all_options()) {
    py::list modes;
    for (const auto& m : shapeprop::kModeNames)
      if (o.modes & shapeprop::mode_bit(m.value)) modes.append(std::string(m.name));
    out.append(py::make_tuple(std::string(o.flag), std::string(o.key), o.python, modes));
  }
  return out;
}

py::tuple run(const py::bytes& source, bool from_path, const std::string& origin, const std::string& job,
              const std::string& inline_policy, size_t small_limit, bool strict, bool annotate_functions,
              bool assume_positive_dims, const std::vector<std::string>& schemas,
              const std::string& shipped_rules, const std::string& output_path, bool describe_contexts, bool print_shapes,
              const std::vector<std::pair<std::string, int64_t>>& dims,
              const std::vector<std::pair<std::string, std::vector<std::optional<int64_t>>>>& input_shapes,
              const std::vector<std::tuple<std::string, int64_t, int64_t>>& dim_ranges,
              const std::vector<std::pair<std::string, std::string>>& rename_dims, bool name_dims,
              const std::vector<std::string>& expand_ops, std::optional<int64_t> target_opset,
              const std::string& declared, const std::string& overridable_initializers) {
  shapeprop::python::Request q;
  q.source = source;  // a copy: the bytes object may change hands while the GIL is released
  q.from_path = from_path;
  q.origin = origin;
  q.job = job_named(job);
  q.options.inline_policy = named<shapeprop::InlinePolicy>(inline_policy, "inline");
  q.options.small_limit = small_limit;
  q.options.infer.strict = strict;
  q.options.infer.annotate_functions = annotate_functions;
  q.options.infer.assume_positive_dims = assume_positive_dims;
  q.options.infer.describe_contexts = describe_contexts;
  q.options.infer.declared = named<shapeprop::DeclaredTypes>(declared, "declared");
  q.options.infer.overridable_initializers =
      named<shapeprop::OverridableInitializers>(overridable_initializers, "overridable_initializers");
  q.options.infer.describe_shapes = print_shapes;
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

// onnx-infer-shapes ARGS in this process (python -m shapeprop), its exit code returned; its
// messages call it `program`.
int command_line(const std::vector<std::string>& args, const std::string& shipped_rules, const std::string& program) {
  std::vector<std::string> owned{"onnx-infer-shapes"};
  owned.insert(owned.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : owned) argv.push_back(a.data());
  argv.push_back(nullptr);
  py::gil_scoped_release release;
  return cli::run_command_line(static_cast<int>(owned.size()), argv.data(), false, shipped_rules, program);
}

}  // namespace

PYBIND11_MODULE(_native, m) {
  m.doc() = "The compiled half of shapeprop: run() over serialized models (use the functions of the shapeprop "
            "package instead).";
  // The options' keywords are the option table's (shapeprop/options.def); python/shapeprop
  // passes its own functions' keywords through by the same names.
  m.def("run", &run, py::arg("source"), py::kw_only(), py::arg("from_path"), py::arg("origin"), py::arg("job"),
        keyword(OptionId::Inline) = std::string(shapeprop::name_of(shapeprop::InlinePolicy::None)),
        py::arg("small_limit") = shapeprop::TransformOptions{}.small_limit, keyword(OptionId::Strict) = false,
        keyword(OptionId::KeepIrVersion) = true, keyword(OptionId::AllowEmptyDims) = true,
        keyword(OptionId::Schemas) = std::vector<std::string>(), py::arg("shipped_rules") = "",
        py::arg("output_path") = "", py::arg("describe_contexts") = false, keyword(OptionId::PrintShapes) = false,
        keyword(OptionId::SetDim) = std::vector<std::pair<std::string, int64_t>>(),
        keyword(OptionId::InputShape) = std::vector<std::pair<std::string, std::vector<std::optional<int64_t>>>>(),
        keyword(OptionId::DimRange) = std::vector<std::tuple<std::string, int64_t, int64_t>>(),
        keyword(OptionId::RenameDim) = std::vector<std::pair<std::string, std::string>>(),
        keyword(OptionId::NameDims) = false, keyword(OptionId::ExpandOps) = std::vector<std::string>(),
        keyword(OptionId::TargetOpset) = std::nullopt,
        keyword(OptionId::Declared) = std::string(shapeprop::name_of(shapeprop::DeclaredTypes::Check)),
        keyword(OptionId::OverridableInitializers) =
            std::string(shapeprop::name_of(shapeprop::OverridableInitializers::Type)),
        R"(Runs one job on a model and returns (result, report_json).

source: the model's serialized bytes, or its path (UTF-8 bytes) when from_path.
origin: how diagnostics and the report name the model.
The options' keywords are those of the package's functions (the option table's).
job: 'annotate' (infer_shapes), 'specialize' (specialize) or 'check' (check_model: the
checker of onnx-infer-shapes --mode check, with the shipped rules; nothing else applies).
schemas: folders of rules read after the shipped ones, which are in shipped_rules (an
installed package's copy) or, when that is empty, where the library finds them.
result: the resulting model's bytes, or None when the run failed, when job is 'check',
or when output_path was given (the result is saved there, atomically).
report_json: the report of the run (docs/report.schema.json); 'ok' says whether it worked.
describe_contexts: list each function's contexts in the report (a walk more, for return_report).
print_shapes: the report's value_shapes, every value's proven type (--print-shapes).
dims, input_shapes, dim_ranges, rename_dims, name_dims: the deployment shapes (as
--set-dim NAME=VALUE, --input-shape INPUT=D0,..., None for ?, --dim-range NAME=MIN..MAX
as (name, min, max), --rename-dim OLD=NEW and --name-dims).
declared, overridable_initializers: 'check', 'use' or 'ignore' and 'type' or 'value' (as
--declared and --overridable-initializers; job 'annotate' only).
expand_ops, target_opset: the lowering (as --expand-ops OP,... and --target-opset N; job
'specialize' only).
The GIL is released while the work runs.)");
  m.def("command_line", &command_line, py::arg("args"), py::kw_only(), py::arg("shipped_rules") = "",
        py::arg("program") = "onnx-infer-shapes",
        R"(Runs onnx-infer-shapes with these arguments in this process and returns its exit code
(the same options, outputs and exit codes; python -m shapeprop). Writes to file
descriptors 1 and 2: flush Python's streams first. The usage line, the errors and the
summary lines call the program `program`. The GIL is released while it runs.)");
  m.def("option_table", &option_table,
        "The options of onnx-infer-shapes, one tuple each: (flag, keyword, whether the package's functions take "
        "the keyword, the modes that take the option).");
  py::list policies;
  for (const auto& p : shapeprop::kInlinePolicyNames) policies.append(std::string(p.name));
  m.attr("inline_policies") = policies;  // specialize(inline=...)'s names
  m.attr("version") = shapeprop::version();
  m.attr("onnx_version") = shapeprop::onnx_version();
}
