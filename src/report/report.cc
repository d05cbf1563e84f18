// Filling the report and writing it as JSON (its schema: docs/report.schema.json).
#include "shapeprop/report.h"

#include "shapeprop/passes.h"

#include <algorithm>
#include <initializer_list>
#include <set>

#include "report/json_writer.h"
#include "shapeprop/enum_names.h"
#include "shapeprop/function_id.h"
#include "shapeprop/io.h"
#include "shapeprop/version.h"
#include "support/subgraphs.h"

namespace shapeprop {

namespace {

using report::JsonWriter;

void count_nodes(const google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes, const std::set<FunctionId>& functions,
                 ModelCounts& counts) {
  for (const auto& n : nodes) {
    const FunctionId id = FunctionId::of(n);
    ++counts.nodes;
    ++counts.ops[id.str()];
    if (id.domain.empty() && id.name == "If") ++counts.ifs;
    if (id.domain.empty() && id.name == "CastLike") ++counts.castlikes;
    if (functions.count(id)) ++counts.calls;
    for_each_subgraph(n, [&](const onnx::GraphProto& g) { count_nodes(g.node(), functions, counts); });
  }
}

std::pair<size_t, size_t> errors_and_warnings(const Diagnostics& diagnostics) {
  size_t errors = 0, warnings = 0;
  for (const auto& d : diagnostics) {
    if (d.severity == Severity::Error) ++errors;
    if (d.severity == Severity::Warning) ++warnings;
  }
  return {errors, warnings};
}

// Counts as fields of the object being written, in order.
void write_count_fields(JsonWriter& w, std::initializer_list<std::pair<const char*, size_t>> fields) {
  for (const auto& [name, n] : fields) w.key(name).count(n);
}

void write_strings(JsonWriter& w, const std::vector<std::string>& strings) {
  w.begin_array();
  for (const auto& s : strings) w.string(s);
  w.end();
}

void write_counts(JsonWriter& w, const std::optional<ModelCounts>& counts) {
  if (!counts) {
    w.null();
    return;
  }
  w.begin_object();
  write_count_fields(w, {{"nodes", counts->nodes},
                         {"ifs", counts->ifs},
                         {"castlikes", counts->castlikes},
                         {"functions", counts->functions},
                         {"calls", counts->calls}});
  w.key("ops").begin_object();
  for (const auto& [op, n] : counts->ops) w.key(op).count(n);
  w.end();
  w.end();
}

void write_inference(JsonWriter& w, const Report& r) {
  if (!r.inference) {
    w.null();
    return;
  }
  const InferStats& s = *r.inference;
  w.begin_object();
  write_count_fields(w, {{"call_sites", s.call_sites},
                         {"distinct_contexts", s.distinct_contexts},
                         {"body_analyses", s.body_analyses},
                         {"graph_values", s.graph_values},
                         {"function_values", s.function_values},
                         {"ir_version_raised_from", s.ir_version_raised_from},
                         {"errors", r.inference_errors.value_or(0)},
                         {"warnings", r.inference_warnings.value_or(0)}});
  w.key("declared_dims_dropped").begin_array();
  for (const auto& d : r.dropped_dim_params) {
    w.begin_object();
    w.key("name").string(d.name);
    w.key("values");
    write_strings(w, d.values);
    w.key("why").string(d.why);
    w.end();
  }
  w.end();
  w.end();
}

void write_transform(JsonWriter& w, const std::optional<TransformStats>& stats) {
  if (!stats) {
    w.null();
    return;
  }
  const TransformStats& s = *stats;
  w.begin_object();
  // Every counter of every pass, by the names passes.def gives them.
  w.key("rewrites").begin_object();
  for (const PassInfo& p : all_passes()) {
    const auto counters = all_counters();
    if (std::none_of(counters.begin(), counters.end(), [&](const CounterInfo& c) { return c.pass == p.id; })) continue;
    w.key(std::string(p.name)).begin_object();
    for (const CounterInfo& c : counters)
      if (c.pass == p.id) w.key(std::string(c.key)).count(s.counters[c.id]);
    w.end();
  }
  w.end();
  write_count_fields(w, {{"calls_kept", s.calls_kept},
                         {"nodes_before", s.nodes_before},
                         {"nodes_after", s.nodes_after},
                         {"functions_before", s.functions_before},
                         {"functions_after", s.functions_after}});
  w.end();
}

// The lowering (options.expand): what was asked, and what each op type became.
void write_lowering(JsonWriter& w, const Report& r) {
  const ExpandRequest& asked = r.options.expand;
  if (!asked.any()) {
    w.null();
    return;
  }
  w.begin_object();
  w.key("expand_ops").begin_array();
  for (const auto& op : asked.ops) w.string(op);
  w.end();
  w.key("all_functions").boolean(asked.all_functions);
  w.key("target_opset");
  asked.target_opset ? w.integer(*asked.target_opset) : w.null();
  w.key("converted_from_opset");
  r.converted_from_opset ? w.integer(r.converted_from_opset) : w.null();
  w.key("expanded").begin_array();
  for (const auto& e : r.expanded) {
    w.begin_object();
    w.key("op").string(e.op);
    w.key("calls").count(e.calls);
    w.key("bodies").count(e.functions);
    w.key("nodes").begin_object();
    for (const auto& [op, n] : e.nodes) w.key(op).count(n);
    w.end();
    w.end();
  }
  w.end();
  w.end();
}

void write_functions(JsonWriter& w, const Report& r) {
  std::set<std::string> in_output;
  if (r.after) in_output.insert(r.after->function_names.begin(), r.after->function_names.end());
  w.begin_array();
  for (const auto& f : r.functions) {
    w.begin_object();
    w.key("function").string(f.function);
    w.key("contexts").begin_array();
    // Specializations in first-use order, each with the contexts it serves.
    std::vector<std::pair<std::string, std::vector<size_t>>> specializations;
    for (size_t i = 0; i < f.contexts.size(); ++i) {
      const auto& c = f.contexts[i];
      w.begin_object();
      w.key("index").count(i);
      w.key("signature").string(c.signature);
      w.key("call_sites").count(c.call_sites);
      w.key("specialization");
      if (c.specialization.empty()) {
        w.null();
      } else {
        w.string(c.specialization);
        auto it = std::find_if(specializations.begin(), specializations.end(),
                               [&](const auto& s) { return s.first == c.specialization; });
        if (it == specializations.end()) it = specializations.insert(specializations.end(), {c.specialization, {}});
        it->second.push_back(i);
      }
      w.end();
    }
    w.end();
    w.key("specializations").begin_array();
    for (const auto& [name, contexts] : specializations) {
      w.begin_object();
      w.key("name").string(name);
      w.key("contexts").begin_array();
      for (size_t i : contexts) w.count(i);
      w.end();
      w.key("in_output").boolean(in_output.count(name) > 0);
      w.end();
    }
    w.end();
    w.end();
  }
  w.end();
}

void write_assumptions(JsonWriter& w, const Report& r) {
  w.begin_object();
  w.key("symbolic_dims_at_least_1").boolean(r.options.infer.assume_positive_dims);
  w.key("relied_on").boolean(!r.assumptions.empty());
  w.key("recorded_in_model").boolean(r.assumption_recorded);
  w.key("decisions").begin_array();
  for (const auto& use : r.assumptions) {
    w.begin_object();
    w.key("op").string(use.op);
    w.key("call_path");
    write_strings(w, use.call_path);
    if (!use.condition.empty()) w.key("condition").string(use.condition);
    w.end();
  }
  w.end();
  w.key("ranges").begin_array();
  for (const auto& [name, range] : r.options.infer.dim_ranges) w.string(range_assumption(name, range));
  w.end();
  // With --declared use and --overridable-initializers value only: what was taken on trust.
  if (r.options.infer.declared == DeclaredTypes::Use) {
    w.key("declared_types_used").begin_array();
    for (const auto& use : r.declared_uses) {
      w.begin_object();
      w.key("value").string(use.value);
      w.key("call_path");
      write_strings(w, use.call_path);
      w.end();
    }
    w.end();
  }
  if (r.options.infer.overridable_initializers == OverridableInitializers::Value) {
    w.key("initializer_values_read");
    write_strings(w, r.initializer_values_read);
  }
  w.end();
}

void write_named(JsonWriter& w, const std::vector<AppliedShapes::Named>& named) {
  w.begin_array();
  for (const auto& n : named) {
    w.begin_object();
    w.key("value").string(n.value);
    w.key("axis").count(n.axis);
    w.key("name").string(n.name);
    w.end();
  }
  w.end();
}

// The deployment shapes: null when the run was given none.
void write_dims(JsonWriter& w, const Report& r) {
  if (!r.shapes) {
    w.null();
    return;
  }
  const AppliedShapes& s = *r.shapes;
  w.begin_object();
  w.key("bound").begin_object();
  for (const auto& [name, value] : s.bound) w.key(name).integer(value);
  w.end();
  w.key("ranges").begin_object();
  for (const auto& [name, range] : s.ranges) {
    w.key(name).begin_object();
    w.key("min").integer(range.min);
    w.key("max").integer(range.max);
    w.end();
  }
  w.end();
  w.key("renamed").begin_object();
  for (const auto& [from, to] : s.renamed) w.key(from).string(to);
  w.end();
  w.key("named_inputs");
  write_named(w, s.named);
  w.key("named_outputs");
  write_named(w, r.output_names);
  w.key("values");
  r.static_shapes ? w.count(r.static_shapes->values) : w.null();
  w.key("dynamic");
  if (!r.static_shapes) {
    w.null();
  } else {
    w.begin_array();
    for (const auto& d : r.static_shapes->dynamic) {
      w.begin_object();
      w.key("value").string(d.value);
      w.key("where").string(d.where);
      w.key("type").string(d.type);
      w.key("cause").string(d.cause);
      w.key("why").string(d.why);
      w.end();
    }
    w.end();
  }
  w.end();
}

void write_diagnostics(JsonWriter& w, const Diagnostics& diagnostics) {
  w.begin_array();
  for (const auto& d : diagnostics) {
    w.begin_object();
    w.key("severity").string(to_string(d.severity));
    w.key("message").string(d.message);
    w.key("file");
    d.file.empty() ? w.null() : w.string(d.file);
    w.key("line");
    d.line > 0 ? w.integer(d.line) : w.null();
    w.key("column");
    d.column > 0 ? w.integer(d.column) : w.null();
    w.key("call_path");
    write_strings(w, d.call_path);
    w.key("text").string(d.str());
    w.end();
  }
  w.end();
}

}  // namespace

ModelCounts count_model(const onnx::ModelProto& model) {
  ModelCounts counts;
  std::set<FunctionId> functions;
  for (const auto& f : model.functions()) {
    functions.insert(FunctionId::of(f));
    counts.function_names.push_back(FunctionId::of(f).str());
  }
  counts.functions = static_cast<size_t>(model.functions_size());
  count_nodes(model.graph().node(), functions, counts);
  for (const auto& f : model.functions()) count_nodes(f.node(), functions, counts);
  return counts;
}

void Report::add_inference(const InferResult& result) {
  inference = result.stats;
  const auto [errors, warnings] = errors_and_warnings(result.diagnostics);
  inference_errors = errors;
  inference_warnings = warnings;
  dropped_dim_params = result.dropped_dim_params;
  value_shapes = result.shapes;
}

void Report::add(const InferResult& result) {
  add_inference(result);
  functions = result.functions;
  assumptions = result.assumptions;
  declared_uses = result.declared_uses;
  initializer_values_read = result.initializer_values_read;
  add_phases(phases, result.phases);
}

void Report::add(const TransformResult& result) {
  add_inference(result.annotation);  // its phases and assumptions are in the result's
  transform = result.stats;
  expanded = result.expanded;
  converted_from_opset = result.converted_from_opset;
  functions = result.functions;
  assumptions = result.assumptions;
  add_phases(phases, result.phases);
  pass_times += result.pass_times;
}

void Report::add_check(const Diagnostics& found) {
  if (!found.empty() && found.back().severity == Severity::Note) summary.push_back(found.back().message);
}

void Report::count_after(const onnx::ModelProto& model) {
  after = count_model(model);
  assumption_recorded = false;
  for (const auto& entry : model.metadata_props())
    if (entry.key() == kAssumptionsKey && entry.value().find(kPositiveDimsAssumption) != std::string::npos)
      assumption_recorded = true;
}

std::string to_json(const Report& r) {
  JsonWriter w;
  w.begin_object();
  w.key("format").string("shapeprop-report");
  w.key("version").integer(1);
  w.key("tool").begin_object();
  w.key("shapeprop").string(version());
  w.key("onnx").string(onnx_version());
  w.end();
  w.key("input").string(r.input);
  w.key("mode").string(r.mode);
  w.key("options").begin_object();
  w.key("inline").string(name_of(r.options.inline_policy));
  w.key("small_limit").count(r.options.small_limit);
  w.key("strict").boolean(r.options.infer.strict);
  w.key("assume_positive_dims").boolean(r.options.infer.assume_positive_dims);
  w.key("annotate_functions").boolean(r.options.infer.annotate_functions);
  // Written when not the default, so that a default run's report is as it was.
  if (r.options.infer.declared != DeclaredTypes::Check) w.key("declared").string(name_of(r.options.infer.declared));
  if (r.options.infer.overridable_initializers != OverridableInitializers::Type)
    w.key("overridable_initializers").string(name_of(r.options.infer.overridable_initializers));
  w.end();
  w.key("ok").boolean(r.ok);
  w.key("summary");
  write_strings(w, r.summary);
  w.key("counts").begin_object();
  w.key("before");
  write_counts(w, r.before);
  w.key("after");
  write_counts(w, r.after);
  w.end();
  w.key("inference");
  write_inference(w, r);
  w.key("transform");
  write_transform(w, r.transform);
  w.key("lowering");
  write_lowering(w, r);
  w.key("functions");
  write_functions(w, r);
  if (r.options.infer.describe_shapes) {  // --print-shapes
    w.key("value_shapes").begin_array();
    for (const auto& v : r.value_shapes) {
      w.begin_object();
      w.key("scope").string(v.scope);
      w.key("context").string(v.context);
      w.key("op").string(v.op);
      w.key("node").string(v.node);
      w.key("value").string(v.value);
      w.key("type").string(v.type);
      w.end();
    }
    w.end();
  }
  w.key("assumptions");
  write_assumptions(w, r);
  w.key("dims");
  write_dims(w, r);
  w.key("diagnostics");
  write_diagnostics(w, r.diagnostics);
  w.key("phases").begin_array();
  for (const auto& p : r.phases) {
    w.begin_object();
    w.key("phase").string(p.phase);
    w.key("seconds").real(p.seconds);
    w.end();
  }
  w.end();
  w.key("pass_times").begin_array();
  for (const PassInfo& p : all_passes()) {
    if (!r.pass_times.ran(p.id)) continue;
    w.begin_object();
    w.key("pass").string(p.name);
    w.key("seconds").real(r.pass_times.seconds(p.id));
    w.end();
  }
  w.end();
  w.end();
  return w.text();
}

std::string shapes_text(const std::vector<ValueShape>& shapes) {
  std::string out;
  const ValueShape* last = nullptr;
  for (const auto& v : shapes) {
    if (!last || last->scope != v.scope || last->context != v.context)
      out += v.scope + (v.context.empty() ? std::string() : ", context " + v.context) + ":\n";
    last = &v;
    if (v.op == "input" && v.node.empty())
      out += "  input " + v.value;
    else
      out += "  " + v.op + (v.node.empty() ? std::string() : " '" + v.node + "'") + " -> " + v.value;
    out += ": " + v.type + "\n";
  }
  return out;
}

Status write_report(const Report& report, const std::filesystem::path& path) {
  return write_file_atomically(path, to_json(report));
}

}  // namespace shapeprop
