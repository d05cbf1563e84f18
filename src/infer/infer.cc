#include "shapeprop/infer.h"
#include "shapeprop/version.h"

#include "analyzer.h"
#include "ir/depth.h"
#include "annotate.h"
#include "infer/analysis_record.h"
#include "shapeprop/call_graph.h"
#include "shapeprop/dim.h"

namespace shapeprop {

namespace infer {

InferResult annotate_model(onnx::ModelProto& model, const Analyzer& analysis, const InferOptions& options) {
  InferResult result;
  const auto& live = analysis.live_contexts();
  result.stats.call_sites = analysis.live_call_sites();
  for (const auto& [f, contexts] : live) result.stats.distinct_contexts += contexts.size();
  result.stats.body_analyses = analysis.body_analyses();
  if (options.debug) result.debug = analysis.dump();
  if (options.describe_contexts) result.functions = describe_contexts(analysis);
  result.assumptions = analysis.assumptions();
  result.declared_uses = analysis.declared_uses();
  result.initializer_values_read = analysis.initializer_values_read();

  DimTexts texts(model);
  if (options.describe_shapes) {
    // Its own texts: the types listed are not all written, and must not be recorded as such.
    DimTexts listing = texts;
    result.shapes = describe_shapes(analysis, listing);
  }
  result.stats.graph_values = annotate_graph(model, analysis, texts, result.dropped_dim_params);
  // Model-local functions exist from IR version 8; ONNX's checker reads a model's functions
  // only from there. An older model's functions (which the analysis reads, as ONNX's
  // inference does) get no value_info: raising its IR version to hold them would have the
  // checker read bodies it never read (an attribute reference without a type refuses the
  // model; found by fuzz-model_text's checker oracle).
  if (options.annotate_functions && !live.empty() && model.ir_version() >= 8) {
    result.stats.function_values = annotate_functions(model, analysis, texts, options.debug ? &result.debug : nullptr);
    if (result.stats.function_values > 0 && model.ir_version() < 10) {
      // FunctionProto.value_info exists from IR version 10 (ONNX 1.16).
      result.stats.ir_version_raised_from = static_cast<size_t>(model.ir_version());
      model.set_ir_version(10);
    }
  }
  texts.record_in(model);
  return result;
}

}  // namespace infer

Result<InferResult> infer_shapes(onnx::ModelProto& model, const InferOptions& options) {
  // The analysis recurses into subgraphs and calls: within the limits only (validation
  // checks them too, but a library caller may not have validated).
  if (Diagnostics deep = check_depths(model, "", options.limits); !deep.empty()) return deep.front();
  auto calls = CallGraph::build(model);
  if (!calls) return calls.error();
  return infer_shapes(model, options, *calls);
}

Result<InferResult> infer_shapes(onnx::ModelProto& model, const InferOptions& options, const CallGraph& calls) {
  register_onnx_schemas_once();
  const Dim::MaxTerms terms(options.limits.max_dim_terms);
  std::vector<PhaseTime> phases;
  PhaseClock analysing(phases, "analysis", options.on_phase);
  infer::Analyzer analysis(model, calls, options);
  analysis.run();
  Diagnostics diagnostics = analysis.take_diagnostics();
  analysing.stop();
  if (options.before_writing)
    if (Status go_on = options.before_writing(); !go_on) return go_on.error();
  PhaseClock annotating(phases, "annotation", options.on_phase);
  InferResult result = infer::annotate_model(model, analysis, options);
  infer::record_assumptions(model, result.assumptions, options.dim_ranges, infer::trusted_items(result));
  result.diagnostics = std::move(diagnostics);
  annotating.stop();
  result.phases = std::move(phases);
  return result;
}

std::string range_assumption(const std::string& symbol, const DimRange& range) {
  return std::to_string(range.min) + " <= " + symbol + " <= " + std::to_string(range.max);
}

std::string summary_line(const InferResult& r) {
  size_t errors = 0, warnings = 0;
  for (const auto& d : r.diagnostics) {
    if (d.severity == Severity::Error) ++errors;
    if (d.severity == Severity::Warning) ++warnings;
  }
  auto plural = [](size_t n, const char* one, const char* many) { return std::to_string(n) + " " + (n == 1 ? one : many); };
  return plural(r.stats.call_sites, "call site", "call sites") + ", " +
         plural(r.stats.distinct_contexts, "distinct context", "distinct contexts") + " (" +
         plural(r.stats.body_analyses, "body analysed", "bodies analysed") + "), " +
         plural(r.stats.graph_values, "value", "values") + " annotated in the graph, " +
         std::to_string(r.stats.function_values) + " in functions, " + plural(errors, "error", "errors") + ", " +
         plural(warnings, "warning", "warnings");
}

}  // namespace shapeprop
