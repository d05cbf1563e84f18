// The analysis's op dispatch: ONNX's inference functions (memoised), the folding rules
// of src/eval, the rules of src/schemas, and ONNX ops defined by a function body
// (analyzer_impl.h).
#include "infer/analyzer_impl.h"

namespace shapeprop::infer {

std::optional<std::string> Analyzer::Impl::transpose_perm_mismatch(const ResolvedAttributes& attrs,
                                                          const std::vector<const Fact*>& inputs) {
  const AttributeProto* perm = attrs.find("perm");
  if (!perm || inputs.empty() || !inputs[0] || !inputs[0]->shape) return std::nullopt;
  const auto rank = static_cast<int64_t>(inputs[0]->shape->size());
  if (perm->ints_size() >= rank) return std::nullopt;
  return "Transpose's perm has " + std::to_string(perm->ints_size()) + " entries but its input has rank " +
         std::to_string(rank);
}

std::vector<Fact> Analyzer::Impl::call_op(const NodeProto& n, const std::vector<const Fact*>& inputs, const ResolvedAttributes& attrs,
                          Frame& frame, const PathLink* path, bool* broken, const std::vector<bool>* present) {
  const bool default_domain = FunctionId::is_default_domain(n.domain());
  auto v = frame.opsets->find(default_domain ? std::string() : n.domain());
  if (v == frame.opsets->end()) {
    report(frame, path, Severity::Error, "domain '" + n.domain() + "' is used without an opset import");
    return {};
  }
  const int version = v->second;
  std::vector<Fact> outputs(static_cast<size_t>(n.output_size()));
  const onnx::OpSchema* schema = bridge.find_schema(n.op_type(), v->first, version);
  // A version of an ai.onnx op newer than the linked ONNX's holds: the older schema ONNX's
  // registry answers with only where the node fits it (schemas/older_version.h), so that
  // its facts and folding are those at opset 26; else its rule.
  if (default_domain)
    if (const auto since = newer_onnx::newer_version(n.op_type(), version)) {
      const bool fits = schema && fits_older_version(n, *schema, inputs, attrs);
      if (!fits) {
        if (const schemas::OpRule* rule = rules->find_version(n.op_type(), *since))
          return call_rule(n, *rule, inputs, attrs, frame, path);
        report(frame, path, Severity::Error, newer_onnx::uncovered_message(n.op_type(), *since));
        return outputs;
      }
    }
  if (!schema) {
    if (const schemas::OpRule* rule = rules->find(v->first, n.op_type())) return call_rule(n, *rule, inputs, attrs, frame, path);
    report_soft(frame, path,
                "no schema or rule for " + FunctionId::of(n).str() + " at opset " + std::to_string(version) +
                    " and no model-local function of that name: its outputs are not inferred");
    return outputs;
  }
  // A required input left out: in a function body whose call omits the formal input the
  // node reads (ONNX's checker does not look through calls), or spelled '' in the node. No
  // run passes the node, so its outputs get no fact (a fuzz finding: the inlined model
  // read Shape(''), which ONNX's checker refuses, with a scalar type downstream). So for
  // any input in the variadic tail of an ONNX op (Max, Sum, Concat): only optional inputs
  // may be left out, and ONNX's checker lets '' there through (ONNX Runtime 1.30 crashes on
  // Max(x, ''), whose result ONNX's inference types as a scalar).
  const auto& formals = schema->inputs();
  const bool variadic_tail =
      default_domain && !formals.empty() && formals.back().GetOption() == onnx::OpSchema::Variadic;
  for (size_t i = 0; present && i < present->size() && (i < formals.size() || variadic_tail); ++i) {
    const auto& formal = formals[std::min(i, formals.size() - 1)];
    const bool variadic = variadic_tail && i + 1 >= formals.size();
    if ((*present)[i] || (formal.GetOption() != onnx::OpSchema::Single && !variadic)) continue;
    report_soft(frame, path,
                n.op_type() + "'s input " + std::to_string(i) + " (" + formal.GetName() + ") is " +
                    (variadic ? "variadic" : "required") + ", and " +
                    (n.input(static_cast<int>(i)).empty() ? std::string("the node gives none")
                                                          : "'" + n.input(static_cast<int>(i)) + "' is left out by the call") +
                    ": no run passes this node");
    if (broken) *broken = true;
    return outputs;
  }
  // An input whose type is unknown was reported where it arose; ONNX's rules would only
  // fail again ("Input 0 expected to have type but instead is null") down the line.
  const bool input_unknown = std::any_of(inputs.begin(), inputs.end(),
                                         [](const Fact* f) { return f && f->elem_type == 0 && !f->other; });
  if (input_unknown) {
    // What Shape and Size give does not depend on the input's type: a 1-D and a 0-D
    // int64 tensor of any tensor (as ONNX's own inference types them).
    if (default_domain && std::string_view(n.op_type()) == "Shape" && !outputs.empty())
      outputs[0] = Fact::tensor(onnx::TensorProto::INT64, {Dim::unknown()});
    if (default_domain && std::string_view(n.op_type()) == "Size" && !outputs.empty())
      outputs[0] = Fact::tensor(onnx::TensorProto::INT64, {});
    return outputs;
  }
  if (default_domain && std::string_view(n.op_type()) == "Transpose")
    if (auto wrong = transpose_perm_mismatch(attrs, inputs)) {
      report_soft(frame, path, std::move(*wrong));
      return outputs;
    }
  if (schema->has_type_and_shape_inference_function()) {
    // A node like one analysed before takes its outcome and replays its reports here.
    const auto key = OpMemo::key(*schema, version, outputs.size(), inputs, attrs.list);
    if (key)
      if (const OpMemo::Outcome* seen = op_memo.find(*key)) {
        for (const auto& message : seen->reports) report_soft(frame, path, message);
        if (seen->relied_on_symbol_min || !seen->conditions.empty()) note_symbol_min_relied(n, path, seen->conditions);
        return seen->outputs;
      }
    // Subgraphs ONNX's rule asks about (SequenceMap, Scan-8) are walked for their
    // output types only: ONNX feeds loop-like bodies their first iteration's types,
    // which need not hold for later ones, so nothing inside is recorded.
    auto subgraphs = [&](const GraphProto& g, const std::vector<Fact>& in) {
      SpeculativeFrame scratch(frame);
      Frame& trial = scratch.frame;
      PathLink sub;
      sub.parent = path;
      sub.kind = PathLink::Kind::Subgraph;
      sub.graph = &g;
      return walk_subgraph(g, trial, in, &sub);
    };
    auto r = bridge.infer(*schema, n, inputs, attrs.list, subgraphs);
    if (r.type_error) {
      // No valid execution: whatever ONNX's rule or our folding would make of the inputs
      // (ConstantOfShape of an int32 shape gives float[4,3]) holds of nothing.
      report_soft(frame, path,
                  "type constraint broken: " + *r.type_error +
                      " (the node has no valid execution: its outputs are not inferred)");
      if (broken) *broken = true;
      return outputs;
    }
    if (r.error) {
      report_soft(frame, path, "ONNX inference failed: " + *r.error);
      frame.facts->note_inference_failed();
    }
    // Errors are not kept: ONNX's messages may name the node.
    OpMemo::Outcome outcome;
    outcome.outputs = std::move(r.outputs);
    if (default_domain) fold_outputs(n, version, inputs, attrs, frame, path, outcome);
    if (!key || r.error) return std::move(outcome.outputs);
    op_memo.keep(*key, outcome);
    return std::move(outcome.outputs);
  }
  if (const FunctionProto* body = schema_body(*schema, n, inputs, version))
    outputs = call_schema_body(n, *body, inputs, attrs, *schema, frame, path);
  if (default_domain) {
    OpMemo::Outcome outcome;
    outcome.outputs = std::move(outputs);
    fold_outputs(n, version, inputs, attrs, frame, path, outcome);
    outputs = std::move(outcome.outputs);
  }
  return outputs;
}

void Analyzer::Impl::fold_outputs(const NodeProto& n, int version, const std::vector<const Fact*>& inputs,
                  const ResolvedAttributes& attrs, Frame& frame, const PathLink* path, OpMemo::Outcome& outcome) {
  auto& outputs = outcome.outputs;
  auto report_here = [&](std::string message) {
    outcome.reports.push_back(message);
    report_soft(frame, path, std::move(message));
  };
  eval::FoldInput fi;
  fi.op = n.op_type();
  fi.opset = version;
  fi.inputs = inputs;
  fi.attributes = attrs.list;
  fi.num_outputs = static_cast<size_t>(n.output_size());
  fi.bounds = &symbol_bounds;
  std::optional<std::string> overflow;
  std::vector<Fact> folded;
  bool relied = false;
  fi.relied_on_symbol_min = &relied;
  fi.conditions = &outcome.conditions;
  {
    // The rules compute in 64 bits and leave a value that does not fit a narrower
    // integer type unknown (it wraps at run time); the first one is reported.
    eval::OverflowWatch watch(overflow);
    folded = eval::fold(fi);
  }
  if (overflow) report_here("integer overflow: " + *overflow);
  if (relied) outcome.relied_on_symbol_min = true;
  if (relied || !outcome.conditions.empty()) note_symbol_min_relied(n, path, outcome.conditions);
  for (size_t i = 0; i < folded.size() && i < outputs.size(); ++i) {
    auto refined = Fact::refine(outputs[i], folded[i]);
    if (refined.ok())
      outputs[i] = std::move(*refined);
    else
      report_here("folding contradicts ONNX's inference for output " + std::to_string(i) + ": " +
                  refined.error().message);
  }
}

void Analyzer::Impl::note_symbol_min_relied(const NodeProto& n, const PathLink* path,
                                            const std::vector<std::string>& conditions) {
  const auto where = PathLink::spell(path);
  if (conditions.empty() && assumption_places.insert({where, std::string()}).second)
    assumptions.push_back({n.op_type(), where, {}});
  for (const auto& condition : conditions)
    if (assumption_places.insert({where, condition}).second) assumptions.push_back({n.op_type(), where, condition});
}

const FunctionProto* Analyzer::Impl::schema_body(const onnx::OpSchema& schema, const NodeProto& n, const std::vector<const Fact*>& inputs,
                                 int version) {
  if (schema.HasContextDependentFunction()) {
    std::vector<onnx::TypeProto> types;
    for (const Fact* f : inputs) types.push_back(f ? f->type() : onnx::TypeProto());
    onnx::FunctionBodyBuildContextImpl ctx(n, types);
    FunctionProto body;
    try {
      if (!schema.BuildContextDependentFunction(ctx, body, version)) return nullptr;
    } catch (const std::exception&) {
      return nullptr;
    }
    schema_bodies.push_back(std::move(body));
    return &schema_bodies.back();
  }
  if (!schema.HasFunction()) return nullptr;
  auto key = std::make_tuple(schema.domain(), schema.Name(), version);
  auto it = schema_body_of.find(key);
  if (it != schema_body_of.end()) return it->second;
  const FunctionProto* body = schema.GetFunction(version);
  if (body) {
    schema_bodies.push_back(*body);
    body = &schema_bodies.back();
  }
  schema_body_of[key] = body;
  return body;
}

std::vector<Fact> Analyzer::Impl::call_schema_body(const NodeProto& n, const FunctionProto& body, const std::vector<const Fact*>& inputs,
                                   const ResolvedAttributes& attrs, const onnx::OpSchema& schema, const Frame& frame,
                                   const PathLink* path) {
  // The body refers to the op's attributes; those the node leaves out take the
  // schema's defaults.
  Signature sig;
  sig.num_inputs = body.input_size();
  for (const auto& entry : schema.attributes()) {
    if (entry.second.default_value.type() == AttributeProto::UNDEFINED) continue;
    sig.defaults.push_back(entry.second.default_value);
    sig.defaults.back().set_name(entry.first);
  }
  const FunctionId id(schema.domain(), schema.Name(), "onnx-opset-" + std::to_string(schema.SinceVersion()));
  std::vector<bool> present;
  for (const Fact* f : inputs) present.push_back(f != nullptr);
  for (int i = 0; i < n.input_size(); ++i)
    if (n.input(i).empty()) present[static_cast<size_t>(i)] = false;
  return call_body(body, id, sig, inputs, present, attrs, frame, path);
}

std::vector<Fact> Analyzer::Impl::call_body(const FunctionProto& body, const FunctionId& id, const Signature& sig,
                            const std::vector<const Fact*>& inputs, const std::vector<bool>& present,
                            const ResolvedAttributes& attrs, const Frame& frame, const PathLink* path) {
  Renaming renaming;
  std::vector<const AttributeProto*> chosen;
  const CallContext ctx = make_context(id, sig, inputs, present, attrs, renaming, chosen);
  const CallContext* key = nullptr;
  PathLink entered;
  entered.parent = path;
  entered.kind = PathLink::Kind::SchemaBody;
  entered.function = &id;
  const size_t before = diagnostics.size();
  const Summary& s = analyze(ctx, chosen, body, &entered, &key);
  diagnostics.resize(before);
  return instantiate(s.outputs, *key, renaming, frame);
}

bool Analyzer::Impl::fits_older_version(const NodeProto& n, const onnx::OpSchema& older, const std::vector<const Fact*>& inputs,
                                        const ResolvedAttributes& attrs) {
  std::vector<std::string> names(n.input().begin(), n.input().end());
  std::vector<int32_t> types;
  for (size_t i = 0; i < names.size(); ++i) {
    const Fact* f = i < inputs.size() ? inputs[i] : nullptr;
    types.push_back(f && !f->other ? f->elem_type : 0);
  }
  const auto fit = schemas::fits_older_version(older, n.op_type(), attrs.list, names, types, {}, {});
  // An attribute to drop is one the older schema's inference does not read: the rule, which
  // states it, reads the node instead.
  return fit.why_not.empty() && fit.to_drop.empty();
}

std::vector<Fact> Analyzer::Impl::call_rule(const NodeProto& n, const schemas::OpRule& rule, const std::vector<const Fact*>& inputs,
                            const ResolvedAttributes& attrs, Frame& frame, const PathLink* path) {
  auto shape_function = [&](const FunctionProto& body, const std::vector<const Fact*>& in,
                            const std::vector<AttributeProto>& values) {
    Signature sig;
    sig.num_inputs = body.input_size();
    sig.defaults = values;  // every attribute with a value, the node's or the rule's default
    std::vector<bool> present;
    for (const Fact* f : in) present.push_back(f != nullptr);
    return call_body(body, FunctionId::of(body), sig, in, present, ResolvedAttributes(NodeProto(), nullptr), frame, path);
  };
  auto applied = schemas::apply_rule(rule, static_cast<size_t>(n.output_size()), inputs, attrs.list, shape_function);
  for (auto& problem : applied.problems) report_soft(frame, path, std::move(problem));
  if (options.debug && applied.layout)
    report(frame, path, Severity::Note, "rule layout '" + applied.layout->label + "' at " + applied.layout->where.str());
  return std::move(applied.outputs);
}

}  // namespace shapeprop::infer
