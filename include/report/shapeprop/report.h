// The machine-readable report of a run (onnx-infer-shapes --report FILE.json, and the
// Python package's report object): what the model held before and after, what the
// analysis found per function, what was folded and rewritten by kind, the diagnostics
// with their call paths, the time per phase, and the assumptions the result relies on.
// Its JSON schema is docs/report.schema.json, described in docs/report.md.
#pragma once

#include <cstddef>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "onnx/onnx_pb.h"
#include "shapeprop/diagnostics.h"
#include "shapeprop/infer.h"
#include "shapeprop/input_shapes.h"
#include "shapeprop/phases.h"
#include "shapeprop/specialize.h"

namespace shapeprop {

// What a model holds, counted in the graph, its subgraphs and every function (as
// TransformStats counts nodes).
struct ModelCounts {
  size_t nodes = 0;
  size_t ifs = 0;        // If nodes of the default domain
  size_t castlikes = 0;  // CastLike nodes of the default domain
  size_t functions = 0;  // model-local functions
  size_t calls = 0;      // nodes that call a model-local function
  std::map<std::string, size_t> ops;  // nodes by op, named as FunctionId::str() names them ("Add", "pkg.x.aten_t")
  std::vector<std::string> function_names;  // FunctionId::str() of each function, in the model's order
};

ModelCounts count_model(const onnx::ModelProto& model);

// The report of one run. Drivers fill it as the run goes; to_json() writes it.
struct Report {
  std::string input;               // the model's file, or how it was given ("<bytes>")
  std::string mode = "annotate";   // annotate | specialize | inline | check
  TransformOptions options;        // what the run used (inline policy and limit, inference flags)
  bool ok = false;                 // the run finished, with no error
  std::vector<std::string> summary;  // the summary lines the run printed (or would print)
  std::optional<ModelCounts> before, after;
  std::optional<InferStats> inference;          // the annotation's (in a transform, of the result)
  std::optional<size_t> inference_errors, inference_warnings;  // as the annotate summary line counts them
  std::vector<DroppedDimParam> dropped_dim_params;  // the annotation's: declared dim_params it kept nowhere
  std::optional<TransformStats> transform;      // specialize and inline modes
  std::vector<ExpandedOp> expanded;             // the ONNX ops expanded (options.expand), by op type
  int64_t converted_from_opset = 0;             // the opset --target-opset converted from, else 0
  std::vector<FunctionContexts> functions;      // the input's reached functions
  std::vector<ValueShape> value_shapes;         // every value's type (InferOptions::describe_shapes)
  std::vector<AssumptionUse> assumptions;       // what relied on symbolic dims >= 1
  bool assumption_recorded = false;             // the result's metadata_props records it
  std::vector<DeclaredUse> declared_uses;       // declarations taken as facts (--declared use)
  std::vector<std::string> initializer_values_read;  // inputs read as their initializers (--overridable-initializers value)
  std::optional<AppliedShapes> shapes;          // the deployment shapes the run was given, as applied
  std::vector<AppliedShapes::Named> output_names;  // the result's output dims --name-dims named
  std::optional<StaticShapes> static_shapes;    // when dims were bound: the result's values left dynamic
  Diagnostics diagnostics;                      // everything the run reported, in order
  std::vector<PhaseTime> phases;                // the driver's and the library's, in first-start order
  PassTimes pass_times;                         // a transform's time per pass

  // What the library returned (statistics, functions, assumptions, phases; the
  // diagnostics are the driver's to add, with their files).
  void add(const InferResult& result);
  void add(const TransformResult& result);
  // What check_model found (shapeprop/check.h): its closing note, which counts what was
  // checked, is the summary; the diagnostics are the driver's to add.
  void add_check(const Diagnostics& found);
  // Counts a model before the run, and the result after it.
  void count_before(const onnx::ModelProto& model) { before = count_model(model); }
  void count_after(const onnx::ModelProto& model);

 private:
  void add_inference(const InferResult& result);
};

// --print-shapes's listing: per scope (and function context) a heading, then one line per
// value, "  Add 'n1' -> y: float[batch,7]" ("  input x: float[batch,7]" for an input).
std::string shapes_text(const std::vector<ValueShape>& shapes);

// The report as JSON (UTF-8, two-space indented, keys in a fixed order).
std::string to_json(const Report& report);

// Writes to_json(report) to `path` atomically.
Status write_report(const Report& report, const std::filesystem::path& path);


}  // namespace shapeprop
