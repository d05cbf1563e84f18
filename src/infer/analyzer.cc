// The inter-procedural analysis.
//
// The main graph is walked node by node; each body (the graph, a function in one context,
// a subgraph) is walked in a Frame whose facts are a BodyFacts over the body's ValueIds,
// and a subgraph reads outer values through the frames that enclose it. A call of a
// model-local function is analysed in its CallContext, once per distinct context (memo);
// an If whose condition is a known constant analyses only the taken branch; Loop and Scan
// bodies are analysed with loop-carried facts generalised until stable. Other nodes get
// ONNX's own inference function (through onnx_bridge), refined by the folding rules of
// src/eval; declared value_info is compared with the facts, never taken for one. Call
// paths for diagnostics are a chain of links on the stack, spelled out only when
// something is reported.
#include "infer/analyzer_impl.h"

#include <algorithm>
#include <cctype>

namespace shapeprop::infer {

std::string CallContext::str() const {
  std::string s = "(";
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (i > 0) s += ", ";
    s += present[i] ? inputs[i].str() : "<omitted>";
  }
  s += ")";
  if (!attributes.empty()) {
    s += " <";
    for (size_t i = 0; i < attributes.size(); ++i) {
      const auto& a = attributes[i];
      s += (i ? ", " : "") + a.name() + "=";
      switch (a.type()) {
        case AttributeProto::INT: s += std::to_string(a.i()); break;
        case AttributeProto::FLOAT: {
          std::ostringstream os;
          os << a.f();
          s += os.str();
          break;
        }
        case AttributeProto::STRING: s += "\"" + a.s() + "\""; break;
        case AttributeProto::INTS: {
          s += "[";
          for (int k = 0; k < a.ints_size(); ++k) s += (k ? "," : "") + std::to_string(a.ints(k));
          s += "]";
          break;
        }
        default: s += "..."; break;
      }
    }
    s += ">";
  }
  return s;
}

BodyFacts::BodyFacts(const ir::Body& body)
    : body_(&body),
      values_(body.num_values()),
      states_(body.num_values(), State::Undefined),
      call_of_(body.nodes().size(), {nullptr, nullptr}),
      branch_of_(body.nodes().size(), -1) {}

const BodyFacts* BodyFacts::subgraph(const onnx::GraphProto& g) const {
  for (const auto& s : subgraphs_)
    if (s->body().graph() == &g) return s.get();
  return nullptr;
}

BodyFacts& BodyFacts::add_subgraph(const ir::Body& body) {
  subgraphs_.push_back(std::make_unique<BodyFacts>(body));
  return *subgraphs_.back();
}

Analyzer::Impl::Impl(const onnx::ModelProto& m, const CallGraph& c, const InferOptions& o)
    : model(m), calls(c), options(o), bodies(c), ours(listed_expressions(m)),
      rules(o.op_rules ? o.op_rules : builtin_op_rules()), model_names(names_taken(m)),
      listed_fresh(listed_fresh_symbols(m)) {
  if (options.declared == DeclaredTypes::Ignore) options.use_declared_types = false;
  // --dim-range: each range is a fact of its symbol (a graph input's dim name, which the
  // driver checked), in place of "at least 1".
  for (const auto& [symbol, range] : options.dim_ranges) symbol_bounds.set_range(symbol, {range.min, range.max});
  model_opsets = opsets_of(model.opset_import());
  for (const auto& f : model.functions()) {
    function_opsets[&f] = opsets_of(f.opset_import());
    if (!options.use_declared_types) continue;
    auto& declared = declared_function[&f];
    for (const auto& vi : f.value_info())
      if (vi.has_type()) declared[vi.name()] = &vi.type();
  }
  if (options.use_declared_types) collect_declared(model.graph());
}

// The main graph's own declarations (a subgraph's are its own: declared_for()).
void Analyzer::Impl::collect_declared(const GraphProto& main) {
  auto add = [&](const onnx::ValueInfoProto& vi) {
    if (!vi.has_type() || vi.type().value_case() == onnx::TypeProto::VALUE_NOT_SET) return;
    if (add_legacy(vi)) return;
    declared_graph[vi.name()] = &vi.type();
  };
  for (const auto& vi : main.value_info()) add(vi);
  for (const auto& vi : main.output()) add(vi);
}

bool Analyzer::Impl::add_legacy(const onnx::ValueInfoProto& vi) {
  const std::string& name = vi.name();
  const auto sep = name.find("::");
  const auto slash = name.find('/', sep == std::string::npos ? 0 : sep + 2);
  if (sep == std::string::npos || slash == std::string::npos) return false;
  FunctionId id(name.substr(0, sep), name.substr(sep + 2, slash - sep - 2));
  const FunctionProto* f = calls.find(id);
  if (!f) return false;
  declared_function[f][name.substr(slash + 1)] = &vi.type();
  return true;
}

// A body's declarations by value. A subgraph's are its own value_info, inputs and outputs:
// a name it shares with the main graph (ONNX's scoping lets a branch define a name the
// graph defines after the If) is another value, whose declaration says nothing of it. In
// a function body, what the subgraph does not declare itself the function's declarations
// may (FunctionProto.value_info and the legacy qualified entries name the values of the
// whole body, subgraphs' too).
const std::vector<const onnx::TypeProto*>* Analyzer::Impl::declared_for(const ir::Body& body, const TypeMap* declared) {
  if (!declared || !options.use_declared_types) return nullptr;
  const GraphProto* sub = body.graph() && body.graph() != &model.graph() ? body.graph() : nullptr;
  if (!sub && declared->empty()) return nullptr;
  // Asked at each value a walk defines: mostly of the body asked about last.
  if (&body == last_declared.first) return last_declared.second;
  auto [it, fresh] = declared_by_value.try_emplace(&body);
  last_declared = {&body, &it->second};
  if (fresh) {
    auto& by_value = it->second;
    by_value.resize(body.num_values(), nullptr);
    if (!sub || declared != &declared_graph) {
      if (declared->size() < body.num_values()) {
        // Fewer declarations than values (the main graph's outputs): each looked up by name.
        for (const auto& [name, type] : *declared)
          if (const ir::ValueId v = body.find(name); v != ir::kNoValue) by_value[v] = type;
      } else {
        for (ir::ValueId v = 0; v < body.num_values(); ++v) {
          auto d = declared->find(std::string(body.name(v)));
          if (d != declared->end()) by_value[v] = d->second;
        }
      }
    }
    if (sub) {
      auto add = [&](const onnx::ValueInfoProto& vi) {
        if (!vi.has_type() || vi.type().value_case() == onnx::TypeProto::VALUE_NOT_SET) return;
        if (const ir::ValueId v = body.find(vi.name()); v != ir::kNoValue) by_value[v] = &vi.type();
      };
      for (const auto& vi : sub->value_info()) add(vi);
      for (const auto& vi : sub->output()) add(vi);
      for (const auto& vi : sub->input()) add(vi);
    }
  }
  return &it->second;
}

void Analyzer::Impl::report(const Frame& frame, const PathLink* path, Severity severity, std::string message) {
  if (frame.speculative) {
    if (frame.failed && severity != Severity::Note) *frame.failed = true;
    return;
  }
  Diagnostic d = Diagnostic::make(severity, std::move(message));
  d.call_path = PathLink::spell(path);
  diagnostics.push_back(std::move(d));
}

void Analyzer::Impl::report_soft(const Frame& frame, const PathLink* path, std::string message) {
  report(frame, path, options.strict ? Severity::Error : Severity::Warning, std::move(message));
}

namespace {

// ONNX's contract (--declared use) takes a declared dim that is an expression of sizes, as
// exporters write them ("2*((samples//10)) - 3"), for that expression, not for a name of
// its own: read as a name, the values computed from it would be compared, and found to
// differ, with their declarations of the same expression.
Fact with_declared_expressions(Fact f) {
  if (!f.shape) return f;
  for (Dim& d : *f.shape) {
    const auto symbol = d.as_symbol();
    if (!symbol || std::all_of(symbol->begin(), symbol->end(), [](char c) {
          return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
        }))
      continue;
    if (Dim e = declared_expression(*symbol); !e.is_unknown()) d = e;
  }
  return f;
}

}  // namespace

void Analyzer::Impl::define(ir::ValueId v, Fact fact, Frame& frame, const PathLink* path) {
  if (v == ir::kNoValue) return;
  if (frame.declared && frame.dim_params && !frame.speculative) {
    const auto* declared = declared_for(*frame.body, frame.declared);
    if (const onnx::TypeProto* d = declared ? (*declared)[v] : nullptr) {
      const std::string_view name = frame.body->name(v);
      std::string quoted;  // (one string made, not two)
      quoted.reserve(name.size() + 2);
      quoted.append(1, '\'').append(name).append(1, '\'');
      // The value's place, spelled only for a message or a use recorded.
      const auto at_value = [&](const auto& use) {
        PathLink value = link(path, nullptr);
        const std::string label = "value " + quoted;
        value.text = label.c_str();
        use(value);
      };
      if (auto why = contradiction(*d, fact, *frame.dim_params, quoted)) {
        at_value([&](const PathLink& value) {
          report_soft(frame, &value,
                      "declared type " + type_text(*d) + " conflicts with inferred " + fact_text(fact) + ": " + *why);
        });
      } else if (options.declared == DeclaredTypes::Use && frame.declared == &declared_graph) {
        // The main graph's declarations and its subgraphs' only: a function's (its value_info,
        // which holds for every call) name sizes in the function's own dim_params, which a
        // call's facts would mistake for the caller's symbols of the same name.
        if (auto taken = adopt_declared(fact, with_declared_expressions(declared_fact(*d, ours, listed_fresh)))) {
          fact = std::move(*taken);
          at_value([&](const PathLink& value) {
            if (auto where = PathLink::spell(&value); declared_use_places.insert(where).second)
              declared_uses.push_back({std::string(name), std::move(where)});
          });
        }
      }
    }
  }
  frame.facts->define(v, std::move(fact));
}

const Fact* Analyzer::Impl::read(const ir::Operand& op, const std::string& name, Frame& frame, const PathLink* path, bool& present) {
  present = true;
  if (op.omitted()) {
    present = false;
    return nullptr;
  }
  if (op.resolved()) {
    const Frame& at = frame.at_depth(op.depth);
    switch (at.facts->state(op.id)) {
      case BodyFacts::State::Defined: return at.facts->fact(op.id);
      case BodyFacts::State::Absent: present = false; return nullptr;
      case BodyFacts::State::Invalid: return nullptr;  // reported where it arose
      case BodyFacts::State::Undefined: break;
    }
  }
  report(frame, path, Severity::Error, "input '" + name + "' is not defined before this node");
  return nullptr;
}

Fact Analyzer::Impl::result(const ir::Operand& op, const Frame& frame) {
  if (!op.resolved() || op.omitted()) return Fact();
  const Fact* f = frame.at_depth(op.depth).facts->fact(op.id);
  return f ? *f : Fact();
}

void Analyzer::Impl::walk_nodes(Frame& frame) {
  for (const auto& node : frame.body->nodes()) process(node, frame);
}

std::vector<Fact> Analyzer::Impl::walk_subgraph(const GraphProto& g, Frame& outer, const std::vector<Fact>& inputs, const PathLink* path) {
  const ir::Body& body = bodies.of(g, outer.body);
  std::unique_ptr<BodyFacts> scratch;
  BodyFacts* facts;
  if (outer.speculative) {
    scratch = std::make_unique<BodyFacts>(body);
    facts = scratch.get();
  } else {
    facts = &outer.facts->add_subgraph(body);
  }
  Frame frame = outer;
  frame.body = &body;
  frame.facts = facts;
  frame.outer = &outer;
  frame.path = path;
  const auto body_inputs = body.inputs();
  for (size_t i = 0; i < body_inputs.size(); ++i) define(body_inputs[i], i < inputs.size() ? inputs[i] : Fact(), frame, path);
  const auto initializers = body.initializers();
  size_t k = 0;
  std::unordered_set<std::string> input_names;
  for (const auto& in : g.input()) input_names.insert(in.name());
  for (const auto& t : g.initializer())
    if (!input_names.count(t.name())) define(initializers[k++], Fact::of_tensor(t), frame, path);
  walk_nodes(frame);
  std::vector<Fact> outputs;
  for (const auto& o : body.outputs()) outputs.push_back(result(o, frame));
  return outputs;
}

void Analyzer::Impl::process(const ir::Body::Node& node, Frame& frame) {
  const NodeProto& n = *node.proto;
  PathLink here;
  here.parent = frame.path;
  here.kind = PathLink::Kind::Node;
  here.node = &n;
  std::vector<const Fact*> inputs;
  std::vector<bool> present;
  inputs.reserve(static_cast<size_t>(n.input_size()));
  present.reserve(static_cast<size_t>(n.input_size()));
  bool from_invalid = false;
  for (auto&& [operand, name] : views::zip(frame.body->inputs_of(node), n.input())) {
    bool p;
    inputs.push_back(read(operand, name, frame, &here, p));
    present.push_back(p);
    from_invalid = from_invalid || invalid(operand, frame);
  }
  const auto results = frame.body->outputs_of(node);
  auto mark_invalid = [&](ir::ValueId v) {
    if (v != ir::kNoValue) frame.facts->mark_invalid(v);
  };
  // A node that reads a value no valid execution defines has none either: its outputs
  // get no fact (nothing is invented downstream of a type error), and nothing is
  // reported again.
  if (from_invalid) {
    std::for_each(results.begin(), results.end(), mark_invalid);
    return;
  }
  ResolvedAttributes attrs(n, frame.attributes);

  std::vector<Fact> outputs;
  const size_t index = frame.body->index_of(node);
  bool broken = false;
  switch (node.kind) {
    case ir::NodeKind::Call:
      outputs = call_function(n, index, *node.callee, inputs, present, attrs, frame, &here);
      break;
    case ir::NodeKind::If: outputs = call_if(n, index, inputs, frame, &here); break;
    case ir::NodeKind::Loop: outputs = call_loop(n, inputs, frame, &here); break;
    case ir::NodeKind::Scan: outputs = call_scan(n, inputs, attrs, frame, &here); break;
    case ir::NodeKind::Op:
      outputs = call_op(n, inputs, attrs, frame, &here, &broken, &present);
      if (!broken && FunctionId::is_default_domain(n.domain())) name_data_dependent(n, inputs, attrs, outputs, frame);
      break;
  }
  if (broken) {
    std::for_each(results.begin(), results.end(), mark_invalid);
    return;
  }
  outputs.resize(static_cast<size_t>(n.output_size()));
  // Only a call's or an If's results may come from a walk that found them invalid.
  const bool walked = node.kind == ir::NodeKind::Call || node.kind == ir::NodeKind::If;
  const std::vector<bool> invalid_out = walked ? invalid_results(node, frame, outputs) : std::vector<bool>();
  name_unknown_dims(outputs, frame);
  for (size_t k = 0; k < results.size(); ++k)
    if (walked && invalid_out[k])
      mark_invalid(results[k]);
    else
      define(results[k], std::move(outputs[k]), frame, &here);
}

bool Analyzer::Impl::invalid(const ir::Operand& op, const Frame& frame) {
  return op.resolved() && !op.omitted() && frame.at_depth(op.depth).facts->state(op.id) == BodyFacts::State::Invalid;
}

std::vector<bool> Analyzer::Impl::invalid_results(const ir::Body::Node& node, const Frame& frame,
                                                  std::vector<Fact>& outputs) const {
  std::vector<bool> out(outputs.size(), false);
  const size_t index = frame.body->index_of(node);
  // A result of a body walked from this node (a callee's, depth 0 only, or a subgraph's,
  // whose depth 1 is this frame): whether it is invalid, and its fact.
  auto result_of = [&frame](const BodyFacts& body, const ir::Operand& op) -> std::pair<bool, const Fact*> {
    if (!op.resolved() || op.omitted()) return {false, nullptr};
    const BodyFacts& at = op.depth == 0 ? body : *frame.at_depth(op.depth - 1).facts;
    return {at.state(op.id) == BodyFacts::State::Invalid, at.fact(op.id)};
  };
  if (node.kind == ir::NodeKind::Call) {
    const BodyFacts* walked = frame.facts->callee_of(index);
    if (!walked) return out;
    const BodyFacts& callee = *walked;
    const auto ends = callee.body().outputs();
    for (size_t k = 0; k < out.size() && k < ends.size(); ++k) out[k] = result_of(callee, ends[k]).first;
    return out;
  }
  if (node.kind != ir::NodeKind::If) return out;
  // The branches this walk entered and kept (a speculative walk keeps none: unknown).
  std::vector<const BodyFacts*> walked;
  const int taken = frame.facts->branch_of(index);
  for (const char* name : {"then_branch", "else_branch"}) {
    if (taken >= 0 && name != std::string_view(taken == 0 ? "then_branch" : "else_branch")) continue;
    const GraphProto* g = graph_attribute(*node.proto, name, frame.attributes);
    const BodyFacts* facts = g ? frame.facts->subgraph(*g) : nullptr;
    if (!facts) return out;
    walked.push_back(facts);
  }
  for (size_t k = 0; k < out.size(); ++k) {
    std::vector<std::pair<bool, const Fact*>> ends;
    for (const BodyFacts* b : walked)
      if (k < b->body().outputs().size()) ends.push_back(result_of(*b, b->body().outputs()[k]));
    if (ends.size() != walked.size()) continue;
    const auto valid = std::find_if(ends.begin(), ends.end(), [](const auto& e) { return !e.first; });
    if (valid == ends.end())
      out[k] = true;
    else if (ends.size() == 2 && (ends[0].first || ends[1].first))
      outputs[k] = valid->second ? *valid->second : Fact();
  }
  return out;
}

Analyzer::Analyzer(const onnx::ModelProto& model, const CallGraph& calls, const InferOptions& options)
    : impl_(std::make_unique<Impl>(model, calls, options)) {}

Analyzer::~Analyzer() = default;

void Analyzer::run() {
  Impl& m = *impl_;
  const GraphProto& g = m.model.graph();
  const ir::Body& body = m.bodies.of(g, nullptr);
  m.root = std::make_unique<Summary>(body);
  PathLink graph_link;
  graph_link.kind = PathLink::Kind::Graph;
  graph_link.graph = &g;
  Frame frame;
  frame.body = &body;
  frame.facts = &m.root->facts;
  frame.opsets = &m.model_opsets;
  frame.declared = &m.declared_graph;
  frame.dim_params = &m.graph_dim_params;
  frame.path = &graph_link;
  frame.callees = &m.root->callees;
  frame.callee_set = &m.root_callees;
  const auto inputs = body.inputs();
  std::unordered_map<std::string_view, const onnx::TensorProto*> initializer_of;
  for (const auto& t : g.initializer()) initializer_of.emplace(t.name(), &t);
  for (size_t i = 0; i < inputs.size(); ++i) {
    const auto& in = g.input(static_cast<int>(i));
    const std::string place = "input '" + in.name() + "'";
    const PathLink input_link = link(&graph_link, place.c_str());
    // What ONNX's strict inference refuses (its shape_inference_test's test_empty_graph,
    // test_concat_missing_shape): nothing that reads such an input can be inferred.
    if (in.type().has_tensor_type() && in.type().tensor_type().elem_type() == onnx::TensorProto::UNDEFINED)
      m.report_soft(frame, &input_link,
                    "graph input '" + in.name() + "' has element type UNDEFINED: what reads it is not inferred");
    // The initializer is the input's default value: its declaration must hold of it (ONNX's
    // test_infer_initializer_input_mismatch). The checker compares it itself, with the
    // other declarations.
    if (auto init = initializer_of.find(in.name()); init != initializer_of.end() && m.options.use_declared_types)
      if (auto wrong = initializer_contradiction(in, *init->second)) m.report_soft(frame, &input_link, std::move(*wrong));
    Fact fact = in.has_type() ? declared_fact(in.type(), m.ours, m.listed_fresh) : Fact();
    // OverridableInitializers::Value (ONNX's inference): the default is read as the value,
    // from IR version 4, as ONNX reads it (before, every initializer had to be an input, and
    // ONNX reads none: its test_infer_with_initializer_without_input_below_ir4).
    if (auto init = initializer_of.find(in.name());
        init != initializer_of.end() && m.options.overridable_initializers == OverridableInitializers::Value &&
        m.model.ir_version() >= 4) {
      fact = Fact::of_tensor(*init->second);
      m.initializer_values_read.push_back(in.name());
    }
    // The inputs' dim_params name the sizes the caller gives: what the graph's other
    // declarations are held to.
    if (in.has_type()) m.graph_dim_params.bind_all(in.type(), fact, "input '" + in.name() + "'");
    m.root->facts.define(inputs[i], std::move(fact));
  }
  // An initializer that is also a graph input is only a default: its value may be
  // overridden at run time, so only its type is a fact.
  const auto initializers = body.initializers();
  size_t k = 0;
  std::unordered_set<std::string> input_names;
  for (const auto& in : g.input()) input_names.insert(in.name());
  for (const auto& t : g.initializer())
    if (!input_names.count(t.name())) m.define(initializers[k++], Fact::of_tensor(t), frame, &graph_link);
  m.walk_nodes(frame);
  for (const auto& o : body.outputs()) m.root->outputs.push_back(Impl::result(o, frame));
  collect_live_contexts();
}

const Summary& Analyzer::graph() const { return *impl_->root; }

const Analyzer::LiveContexts& Analyzer::live_contexts() const { return impl_->live; }

ir::BodyIndex& Analyzer::bodies() const { return impl_->bodies; }

// Contexts reached from the main graph's final analysis, transitively; computed once, when
// the analysis is complete.
void Analyzer::collect_live_contexts() {
  std::unordered_map<const FunctionProto*, std::vector<const CallContext*>> per_function;
  std::unordered_set<const CallContext*> seen;
  std::vector<const CallContext*> work(impl_->root->callees.rbegin(), impl_->root->callees.rend());
  std::vector<const CallContext*> order;
  while (!work.empty()) {
    const CallContext* c = work.back();
    work.pop_back();
    if (!seen.insert(c).second) continue;
    order.push_back(c);
    const Summary& s = *impl_->memo.at(*c);
    for (auto it = s.callees.rbegin(); it != s.callees.rend(); ++it) work.push_back(*it);
  }
  for (const CallContext* c : order) per_function[impl_->function_of.at(c)].push_back(c);
  for (const FunctionProto* f : impl_->calls.bottom_up()) {
    auto it = per_function.find(f);
    if (it != per_function.end()) impl_->live.emplace_back(f, it->second);
  }
}

const Summary& Analyzer::summary(const CallContext& context) const { return *impl_->memo.at(context); }

size_t Analyzer::body_analyses() const {
  size_t n = 0;
  for (const auto& [ctx, s] : impl_->memo)
    if (impl_->calls.find(ctx.function)) ++n;
  return n;
}

size_t Analyzer::live_call_sites() const {
  std::unordered_set<const NodeProto*> nodes;
  std::vector<const BodyFacts*> work{&impl_->root->facts};
  for (const auto& [f, contexts] : live_contexts())
    for (const CallContext* c : contexts) work.push_back(&impl_->memo.at(*c)->facts);
  while (!work.empty()) {
    const BodyFacts* facts = work.back();
    work.pop_back();
    const auto body_nodes = facts->body().nodes();
    for (size_t i = 0; i < body_nodes.size(); ++i)
      if (facts->call_of(i) && body_nodes[i].kind == ir::NodeKind::Call) nodes.insert(body_nodes[i].proto);
    for (const auto& s : facts->subgraphs()) work.push_back(s.get());
  }
  return nodes.size();
}

Diagnostics Analyzer::take_diagnostics() { return std::move(impl_->diagnostics); }

const std::vector<AssumptionUse>& Analyzer::assumptions() const { return impl_->assumptions; }

const std::vector<DeclaredUse>& Analyzer::declared_uses() const { return impl_->declared_uses; }

const std::vector<std::string>& Analyzer::initializer_values_read() const { return impl_->initializer_values_read; }

const std::set<std::string>& Analyzer::false_dim_params(const onnx::FunctionProto* f) const {
  static const std::set<std::string> none;
  if (!f) return impl_->graph_dim_params.contradicted();
  auto it = impl_->false_function_dim_params.find(f);
  return it == impl_->false_function_dim_params.end() ? none : it->second;
}

std::string Analyzer::dump() const {
  std::ostringstream os;
  os << impl_->calls.print();
  for (const auto& [f, contexts] : live_contexts()) {
    os << "contexts of " << FunctionId::of(*f).str() << ": " << contexts.size() << '\n';
    for (size_t i = 0; i < contexts.size(); ++i) {
      os << "  #" << i << ' ' << contexts[i]->str() << " -> (";
      const Summary& s = summary(*contexts[i]);
      for (size_t k = 0; k < s.outputs.size(); ++k) os << (k ? ", " : "") << s.outputs[k].str();
      os << ")\n";
    }
  }
  return os.str();
}

}  // namespace shapeprop::infer
