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
#include "analyzer.h"

#include <algorithm>
#include <deque>
#include <set>
#include <sstream>
#include <unordered_set>

#include <range/v3/view/zip.hpp>

#include "eval/fold.h"
#include "onnx/defs/function.h"
#include "declared_type.h"
#include "dim_texts.h"
#include "onnx_bridge.h"
#include "op_memo.h"
#include "schemas/rule_eval.h"
#include "shapeprop/hash_combine.h"
#include "shapeprop/schemas.h"
#include "support/labels.h"
#include "support/subgraphs.h"
#include "support/type_walk.h"

namespace shapeprop::infer {

namespace {

namespace views = ranges::views;
using onnx::AttributeProto;
using onnx::FunctionProto;
using onnx::GraphProto;
using onnx::NodeProto;
using OpsetMap = std::unordered_map<std::string, int>;
using AttrMap = std::unordered_map<std::string, const AttributeProto*>;
// Declared types by value name (the model's value_info, outputs, subgraph inputs).
using TypeMap = std::unordered_map<std::string, const onnx::TypeProto*>;

// Loop and Scan: rounds of generalising loop-carried facts before giving up on shapes.
constexpr int kMaxLoopRounds = 4;
// Unknown dims get fresh symbols up to this rank (a shape input far longer than any real
// rank would otherwise name thousands).
constexpr size_t kMaxNamedRank = 32;

OpsetMap opsets_of(const google::protobuf::RepeatedPtrField<onnx::OperatorSetIdProto>& imports) {
  OpsetMap m;
  for (const auto& o : imports) m[FunctionId::canonical_domain(o.domain())] = static_cast<int>(o.version());
  return m;
}

// One step of a call path: a node, a function entered, a branch, a subgraph. Links live
// on the stack of the walk; the path is spelled out only when a diagnostic needs it.
struct PathLink {
  enum class Kind { Graph, Node, Function, SchemaBody, Text, Subgraph };
  const PathLink* parent = nullptr;
  Kind kind = Kind::Text;
  const NodeProto* node = nullptr;
  const GraphProto* graph = nullptr;
  const FunctionId* function = nullptr;
  const char* text = nullptr;

  std::string str() const {
    switch (kind) {
      case Kind::Graph: return "graph '" + graph->name() + "'";
      case Kind::Node: return node_label(*node);
      case Kind::Function: return "function " + function->str();
      case Kind::SchemaBody: return "body of " + function->str();
      case Kind::Subgraph: return "subgraph '" + graph->name() + "'";
      case Kind::Text: return text;
    }
    return {};
  }
  static std::vector<std::string> spell(const PathLink* leaf) {
    std::vector<std::string> path;
    for (const PathLink* l = leaf; l; l = l->parent) path.push_back(l->str());
    std::reverse(path.begin(), path.end());
    return path;
  }
};

PathLink link(const PathLink* parent, const char* text) {
  PathLink l;
  l.parent = parent;
  l.text = text;
  return l;
}

// One body being walked: the main graph, a function in one context, or a subgraph.
struct Frame {
  const ir::Body* body = nullptr;
  BodyFacts* facts = nullptr;
  const Frame* outer = nullptr;          // the frame of the enclosing body (subgraphs)
  const OpsetMap* opsets = nullptr;
  const AttrMap* attributes = nullptr;   // the function's attribute values; nullptr in the main graph
  const TypeMap* declared = nullptr;     // declared value_info for this body, by name
  DimParams* dim_params = nullptr;       // what the dim_params declared in this scope stand for
  const PathLink* path = nullptr;        // the call path to this body
  std::vector<const CallContext*>* callees = nullptr;
  std::unordered_set<const CallContext*>* callee_set = nullptr;
  bool speculative = false;              // a loop round that may be generalised: report nothing
  bool iterating = false;                // in a body run once per iteration (Loop, Scan, SequenceMap)

  const Frame& at_depth(uint32_t depth) const {
    const Frame* f = this;
    for (uint32_t k = 0; k < depth; ++k) f = f->outer;
    return *f;
  }
};

// The attributes of a node as its op sees them: references to the enclosing function's
// attributes replaced by their values (and dropped when the call does not give one).
struct ResolvedAttributes {
  std::vector<std::unique_ptr<AttributeProto>> owned;
  std::vector<const AttributeProto*> list;

  ResolvedAttributes(const NodeProto& n, const AttrMap* function_attributes) {
    for (const auto& a : n.attribute()) {
      if (!a.has_ref_attr_name()) {
        list.push_back(&a);
        continue;
      }
      if (!function_attributes) continue;
      auto it = function_attributes->find(a.ref_attr_name());
      if (it == function_attributes->end()) continue;
      auto copy = std::make_unique<AttributeProto>(*it->second);
      copy->set_name(a.name());
      list.push_back(copy.get());
      owned.push_back(std::move(copy));
    }
  }
  const AttributeProto* find(const std::string& name) const {
    for (const auto* a : list)
      if (a->name() == name) return a;
    return nullptr;
  }
};

// A graph attribute of the node: its own, or the context's value of the attribute it
// refers to. Either outlives the walk (the model, or a memoised context), unlike the
// copies ResolvedAttributes makes, so that Bodies and facts can be keyed by it.
const GraphProto* graph_attribute(const NodeProto& n, const char* name, const AttrMap* function_attributes) {
  for (const auto& a : n.attribute()) {
    if (a.name() != name) continue;
    if (!a.has_ref_attr_name()) return a.has_g() ? &a.g() : nullptr;
    if (!function_attributes) return nullptr;
    auto it = function_attributes->find(a.ref_attr_name());
    return it != function_attributes->end() && it->second->has_g() ? &it->second->g() : nullptr;
  }
  return nullptr;
}

std::vector<int64_t> ints_attribute(const ResolvedAttributes& attrs, const std::string& name) {
  const AttributeProto* a = attrs.find(name);
  return a ? std::vector<int64_t>(a->ints().begin(), a->ints().end()) : std::vector<int64_t>();
}

Fact without_elements(Fact f) {
  f.ints.reset();
  f.reals.reset();
  return f;
}

Fact scalar_of(int32_t elem_type) { return Fact::tensor(elem_type, {}); }

}  // namespace

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
      call_of_(body.nodes().size(), nullptr),
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

struct Analyzer::Impl {
  const onnx::ModelProto& model;
  const CallGraph& calls;
  InferOptions options;
  Diagnostics diagnostics;
  ir::BodyIndex bodies;
  OnnxBridge bridge{options.limits.max_elements};
  OpMemo op_memo;  // outcomes of op nodes answered by ONNX's inference functions

  // Dim texts the model lists as expressions shapeprop wrote (dim_texts.h); every other
  // dim_param is a name.
  std::set<std::string> ours;
  OpsetMap model_opsets;
  std::unordered_map<const FunctionProto*, OpsetMap> function_opsets;
  TypeMap declared_graph;
  std::unordered_map<const FunctionProto*, TypeMap> declared_function;
  // Declared types per value of a body (from the body's TypeMap), looked up once per body.
  std::unordered_map<const ir::Body*, std::vector<const onnx::TypeProto*>> declared_by_value;
  // The main graph's declared dim_params, and those of each function found naming
  // different sizes in some call.
  DimParams graph_dim_params;
  std::unordered_map<const FunctionProto*, std::set<std::string>> false_function_dim_params;

  std::unordered_map<CallContext, std::unique_ptr<Summary>, CallContextHash> memo;
  std::unordered_map<const CallContext*, const FunctionProto*> function_of;
  std::deque<FunctionProto> schema_bodies;  // ONNX ops defined by a function body, expanded
  std::map<std::tuple<std::string, std::string, int>, const FunctionProto*> schema_body_of;
  std::shared_ptr<const OpRules> rules;
  std::unique_ptr<Summary> root;
  std::unordered_set<const CallContext*> root_callees;
  size_t analyses = 0;
  Analyzer::LiveContexts live;  // filled once run() is done
  std::vector<AssumptionUse> assumptions;
  std::set<std::vector<std::string>> assumption_places;
  // Fresh symbols for data-dependent dims: dyn__0, dyn__1, ... skipping the model's names.
  std::set<std::string> model_names;    // names_taken: a fresh symbol takes none of them
  std::set<std::string> listed_fresh;   // fresh symbols of an earlier run: read as unknown
  std::unordered_set<std::string> fresh_names;
  size_t next_fresh = 0;
  std::vector<std::string> placeholders;  // of contexts' fresh symbols (rename_fresh)

  Impl(const onnx::ModelProto& m, const CallGraph& c, const InferOptions& o)
      : model(m), calls(c), options(o), bodies(c), ours(listed_expressions(m)),
        rules(o.op_rules ? o.op_rules : builtin_op_rules()), model_names(names_taken(m)),
        listed_fresh(listed_fresh_symbols(m)) {
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

  // Graph value_info, graph outputs and subgraph inputs/outputs are the main graph's
  // declarations, compared with what is proven. Exporters before IR 10 wrote
  // function-internal types into the graph's value_info under qualified names,
  // "domain::function/value"; those go to the function.
  void collect_declared(const GraphProto& main) {
    std::vector<const GraphProto*> work{&main};
    while (!work.empty()) {
      const GraphProto* g = work.back();
      work.pop_back();
      auto add = [&](const onnx::ValueInfoProto& vi) {
        if (!vi.has_type() || vi.type().value_case() == onnx::TypeProto::VALUE_NOT_SET) return;
        if (g == &main && add_legacy(vi)) return;
        declared_graph[vi.name()] = &vi.type();
      };
      for (const auto& vi : g->value_info()) add(vi);
      for (const auto& vi : g->output()) add(vi);
      if (g != &main)
        for (const auto& vi : g->input()) add(vi);
      for (const auto& n : g->node()) for_each_subgraph(n, [&work](const GraphProto& sg) { work.push_back(&sg); });
    }
  }

  bool add_legacy(const onnx::ValueInfoProto& vi) {
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

  const std::vector<const onnx::TypeProto*>* declared_for(const ir::Body& body, const TypeMap* declared) {
    if (!declared || declared->empty()) return nullptr;
    auto [it, fresh] = declared_by_value.try_emplace(&body);
    if (fresh) {
      it->second.resize(body.num_values(), nullptr);
      for (ir::ValueId v = 0; v < body.num_values(); ++v) {
        auto d = declared->find(std::string(body.name(v)));
        if (d != declared->end()) it->second[v] = d->second;
      }
    }
    return &it->second;
  }

  // ------------------------------------------------------------------ diagnostics

  void report(const Frame& frame, const PathLink* path, Severity severity, std::string message) {
    if (frame.speculative) return;
    Diagnostic d = Diagnostic::make(severity, std::move(message));
    d.call_path = PathLink::spell(path);
    diagnostics.push_back(std::move(d));
  }
  // What best effort tolerates and --strict does not.
  void report_soft(const Frame& frame, const PathLink* path, std::string message) {
    report(frame, path, options.strict ? Severity::Error : Severity::Warning, std::move(message));
  }

  // ------------------------------------------------------------------ values

  // Records the fact of a value. What the model declares of it is never a fact (exporters
  // declare the example's sizes): it is compared with the fact, and a declaration some
  // valid input makes false is reported (annotation then writes the fact instead).
  void define(ir::ValueId v, Fact fact, Frame& frame, const PathLink* path) {
    if (v == ir::kNoValue) return;
    if (frame.declared && frame.dim_params && !frame.speculative) {
      const auto* declared = declared_for(*frame.body, frame.declared);
      if (const onnx::TypeProto* d = declared ? (*declared)[v] : nullptr) {
        const std::string name(frame.body->name(v));
        if (auto why = contradiction(*d, fact, *frame.dim_params, "'" + name + "'")) {
          PathLink value = link(path, nullptr);
          const std::string label = "value '" + name + "'";
          value.text = label.c_str();
          report_soft(frame, &value,
                      "declared type " + type_text(*d) + " conflicts with inferred " + fact_text(fact) + ": " + *why);
        }
      }
    }
    frame.facts->define(v, std::move(fact));
  }

  // The fact a node reads through an operand; nullptr (with `present` false) for an
  // omitted or absent input.
  const Fact* read(const ir::Operand& op, const std::string& name, Frame& frame, const PathLink* path, bool& present) {
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
        case BodyFacts::State::Undefined: break;
      }
    }
    report(frame, path, Severity::Error, "input '" + name + "' is not defined before this node");
    return nullptr;
  }

  // The fact of a body's result (an output of the graph or function), Fact() when unknown.
  static Fact result(const ir::Operand& op, const Frame& frame) {
    if (!op.resolved() || op.omitted()) return Fact();
    const Fact* f = frame.at_depth(op.depth).facts->fact(op.id);
    return f ? *f : Fact();
  }

  // ------------------------------------------------------------------ walking

  void walk_nodes(Frame& frame) {
    for (const auto& node : frame.body->nodes()) process(node, frame);
  }

  // Walks a subgraph nested in `outer`, with `inputs` bound to its inputs; returns the
  // facts of its outputs. A speculative walk keeps nothing of what it finds.
  std::vector<Fact> walk_subgraph(const GraphProto& g, Frame& outer, const std::vector<Fact>& inputs, const PathLink* path) {
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

  void process(const ir::Body::Node& node, Frame& frame) {
    const NodeProto& n = *node.proto;
    PathLink here;
    here.parent = frame.path;
    here.kind = PathLink::Kind::Node;
    here.node = &n;
    std::vector<const Fact*> inputs;
    std::vector<bool> present;
    for (auto&& [operand, name] : views::zip(frame.body->inputs_of(node), n.input())) {
      bool p;
      inputs.push_back(read(operand, name, frame, &here, p));
      present.push_back(p);
    }
    ResolvedAttributes attrs(n, frame.attributes);

    std::vector<Fact> outputs;
    const size_t index = frame.body->index_of(node);
    switch (node.kind) {
      case ir::NodeKind::Call:
        outputs = call_function(n, index, *node.callee, inputs, present, attrs, frame, &here);
        break;
      case ir::NodeKind::If: outputs = call_if(n, index, inputs, frame, &here); break;
      case ir::NodeKind::Loop: outputs = call_loop(n, inputs, frame, &here); break;
      case ir::NodeKind::Scan: outputs = call_scan(n, inputs, attrs, frame, &here); break;
      case ir::NodeKind::Op:
        outputs = call_op(n, inputs, attrs, frame, &here);
        if (FunctionId::is_default_domain(n.domain())) name_data_dependent(n, inputs, attrs, outputs, frame);
        break;
    }
    outputs.resize(static_cast<size_t>(n.output_size()));
    name_unknown_dims(outputs, frame);
    for (auto&& [v, fact] : views::zip(frame.body->outputs_of(node), outputs)) define(v, std::move(fact), frame, &here);
  }

  // ------------------------------------------------------------------ calls

  // What a context keeps of a callee: its input count, and its attributes (with defaults).
  struct Signature {
    int num_inputs = 0;
    std::set<std::string> attributes;
    std::vector<AttributeProto> defaults;
  };

  static Signature signature_of(const FunctionProto& f) {
    Signature sig;
    sig.num_inputs = f.input_size();
    sig.attributes.insert(f.attribute().begin(), f.attribute().end());
    for (const auto& a : f.attribute_proto()) {
      sig.attributes.insert(a.name());
      sig.defaults.push_back(a);
    }
    return sig;
  }

  // The fresh symbols of a context's inputs, renamed: each placeholder (the k-th one to
  // appear is placeholder(k)) and the caller's symbol it stands for.
  using Renaming = std::vector<std::pair<std::string, Dim>>;

  const std::string& placeholder(size_t k) {
    while (placeholders.size() <= k) placeholders.push_back(*fresh_symbol().as_symbol());
    return placeholders[k];
  }

  // A context names the fresh symbols of its inputs (data-dependent and unknown sizes, each
  // the caller's own) by their order of appearance, and each unknown dim of an input's
  // shape as another one, so that calls whose inputs differ only in which such sizes they
  // carry share one analysis, and the body sees which of its values keep an input's size;
  // instantiate() maps them back (an unknown dim to unknown).
  Renaming rename_fresh(std::vector<Fact>& inputs) {
    Renaming renaming;
    std::unordered_map<std::string, std::string> to_placeholder;
    auto note = [&](const std::string& symbol) {
      if (!fresh_names.count(symbol) || to_placeholder.count(symbol)) return;
      const std::string& name = placeholder(renaming.size());
      to_placeholder.emplace(symbol, name);
      renaming.emplace_back(name, Dim::symbol(symbol));
    };
    bool unknown_dims = false;
    for (const Fact& f : inputs) {
      if (f.shape) unknown_dims = unknown_dims || std::any_of(f.shape->begin(), f.shape->end(), [](const Dim& d) { return d.is_unknown(); });
      for (const std::vector<Dim>* dims : {f.shape ? &*f.shape : nullptr, f.ints ? &*f.ints : nullptr})
        if (dims)
          for (const Dim& d : *dims)
            for (const auto& symbol : d.symbols()) note(symbol);
      if (f.other)
        for_each_shape(*f.other, [&](const onnx::TensorShapeProto& shape) {
          for (const auto& d : shape.dim()) note(d.dim_param());
        });
    }
    if (!renaming.empty()) {
      const Dim::SymbolMap to = [&](const std::string& symbol) -> std::optional<Dim> {
        auto it = to_placeholder.find(symbol);
        return it == to_placeholder.end() ? std::nullopt : std::optional<Dim>(Dim::symbol(it->second));
      };
      for (Fact& f : inputs) rename_symbols(f, to);
    }
    // After the renaming: the placeholders that follow are then apart from every symbol.
    if (unknown_dims)
      for (Fact& f : inputs) {
        if (!f.shape || f.other || f.shape->size() > kMaxNamedRank) continue;
        for (Dim& d : *f.shape) {
          if (!d.is_unknown()) continue;
          const std::string& name = placeholder(renaming.size());
          renaming.emplace_back(name, Dim::unknown());
          d = Dim::symbol(name);
        }
      }
    return renaming;
  }

  // `f` with each symbol `to` maps replaced, in its dims, elements and other types.
  static void rename_symbols(Fact& f, const Dim::SymbolMap& to) {
    if (f.shape)
      for (Dim& d : *f.shape) d = d.substitute(to);
    if (f.ints)
      for (Dim& d : *f.ints) d = d.substitute(to);
    if (f.other)
      for_each_shape(*f.other, [&](onnx::TensorShapeProto& shape) {
        for (auto& d : *shape.mutable_dim()) {
          if (!d.has_dim_param()) continue;
          const auto r = to(d.dim_param());
          if (!r) continue;
          if (auto name = r->as_symbol())
            d.set_dim_param(*name);
          else
            d.clear_dim_param();
        }
      });
  }

  CallContext make_context(const FunctionId& id, const Signature& sig, const std::vector<const Fact*>& inputs,
                           const std::vector<bool>& present, const ResolvedAttributes& attrs, Renaming& renaming) {
    CallContext ctx;
    ctx.function = id;
    for (int i = 0; i < sig.num_inputs; ++i) {
      const size_t k = static_cast<size_t>(i);
      const bool given = k < present.size() && present[k];
      ctx.present.push_back(given);
      ctx.inputs.push_back(given && inputs[k] ? *inputs[k] : Fact());
    }
    renaming = rename_fresh(ctx.inputs);
    std::map<std::string, AttributeProto> chosen;
    for (const auto& a : sig.defaults) chosen[a.name()] = a;
    for (const auto* a : attrs.list)
      if (sig.attributes.count(a->name())) chosen[a->name()] = *a;
    for (auto& [name, a] : chosen) {
      a.clear_doc_string();
      ctx.attribute_key += a.SerializeAsString();
      ctx.attribute_key += '\0';
      ctx.attributes.push_back(std::move(a));
    }
    size_t h = FunctionId::Hash()(id);
    for (size_t i = 0; i < ctx.inputs.size(); ++i) hash_combine(h, ctx.present[i] ? ctx.inputs[i].hash() : 7);
    hash_combine(h, std::hash<std::string>()(ctx.attribute_key));
    ctx.hash_value = h;
    return ctx;
  }

  std::vector<Fact> call_function(const NodeProto& n, size_t index, const FunctionProto& f,
                                  const std::vector<const Fact*>& inputs, const std::vector<bool>& present,
                                  const ResolvedAttributes& attrs, Frame& frame, const PathLink* path) {
    const FunctionId id = FunctionId::of(n);
    if (n.input_size() > f.input_size() || n.output_size() > f.output_size()) {
      report(frame, path, Severity::Error,
             "call has " + counted(n.input_size(), "input") + " and " + counted(n.output_size(), "output") + "; function " +
                 id.str() + " takes " + counted(f.input_size(), "input") + " and " + counted(f.output_size(), "output"));
      return {};
    }
    // Fewer outputs than the function has: what ONNX's strict inference refuses.
    if (options.strict && n.output_size() != f.output_size())
      report(frame, path, Severity::Error,
             "call has " + counted(n.output_size(), "output") + "; function " + id.str() + " has " +
                 counted(f.output_size(), "output"));
    for (const auto* a : attrs.list) {
      const bool known = std::count(f.attribute().begin(), f.attribute().end(), a->name()) > 0 ||
                         std::any_of(f.attribute_proto().begin(), f.attribute_proto().end(),
                                     [&](const AttributeProto& d) { return d.name() == a->name(); });
      if (!known) report_soft(frame, path, "attribute '" + a->name() + "' is not an attribute of function " + id.str());
    }
    Renaming renaming;
    const CallContext ctx = make_context(id, signature_of(f), inputs, present, attrs, renaming);
    const CallContext* key = nullptr;
    PathLink entered;
    entered.parent = path;
    entered.kind = PathLink::Kind::Function;
    entered.function = &id;
    const Summary& s = analyze(ctx, f, &entered, &key);
    frame.facts->set_call(index, key);
    if (frame.callee_set->insert(key).second) frame.callees->push_back(key);
    return instantiate(s.outputs, *key, renaming, frame);
  }

  // The summary of `f` in `ctx`, analysing the body on the first request.
  const Summary& analyze(const CallContext& ctx, const FunctionProto& f, const PathLink* path, const CallContext** key_out) {
    auto found = memo.find(ctx);
    if (found != memo.end()) {
      *key_out = &found->first;
      return *found->second;
    }
    const ir::Body& body = bodies.of(f);
    auto [it, _] = memo.emplace(ctx, std::make_unique<Summary>(body));
    const CallContext* key = &it->first;
    *key_out = key;
    function_of[key] = &f;
    Summary& s = *it->second;
    ++analyses;

    AttrMap attributes;
    for (const auto& a : key->attributes) attributes[a.name()] = &a;
    auto opsets = function_opsets.find(&f);
    if (opsets == function_opsets.end()) opsets = function_opsets.emplace(&f, opsets_of(f.opset_import())).first;
    const auto declared = declared_function.find(&f);
    std::unordered_set<const CallContext*> callee_set;
    DimParams dim_params;  // one call's sizes
    Frame frame;
    frame.body = &body;
    frame.facts = &s.facts;
    frame.opsets = &opsets->second;
    frame.attributes = &attributes;
    frame.declared = declared == declared_function.end() ? nullptr : &declared->second;
    frame.dim_params = &dim_params;
    frame.path = path;
    frame.callees = &s.callees;
    frame.callee_set = &callee_set;

    const auto formal = body.inputs();
    for (size_t k = 0; k < formal.size(); ++k) {
      if (key->present[k])
        define(formal[k], key->inputs[k], frame, path);
      else
        s.facts.mark_absent(formal[k]);
    }
    walk_nodes(frame);
    for (const auto& o : body.outputs()) s.outputs.push_back(result(o, frame));
    if (!dim_params.contradicted().empty())
      false_function_dim_params[&f].insert(dim_params.contradicted().begin(), dim_params.contradicted().end());
    return s;
  }

  // ------------------------------------------------------------------ data-dependent dims

  Dim fresh_symbol() {
    for (;;) {
      std::string name = "dyn__" + std::to_string(next_fresh++);
      if (model_names.count(name)) continue;
      fresh_names.insert(name);
      return Dim::symbol(std::move(name));
    }
  }

  // A dim that depends on the data (how many elements NonZero finds, ...) gets a fresh
  // symbol of its own instead of staying unknown: values derived from one such result
  // then keep one dim that later code can compare, and two results never share one. Not
  // in a body run once per iteration, where the size may differ from one iteration to
  // the next (and the loop's fixpoint would see it change each round).
  void name_data_dependent(const NodeProto& n, const std::vector<const Fact*>& inputs, const ResolvedAttributes& attrs,
                           std::vector<Fact>& outputs, const Frame& frame) {
    // The places (output, axis) that hold the one data-dependent size of the node.
    std::vector<std::pair<size_t, int64_t>> places;
    auto axis_or = [&attrs](int64_t fallback) {
      const AttributeProto* a = attrs.find("axis");
      return a ? a->i() : fallback;
    };
    const std::string& op = n.op_type();
    if (op == "NonZero") {
      places = {{0, 1}};
    } else if (op == "Compress") {
      places = {{0, axis_or(0)}};
    } else if (op == "Unique") {
      places = {{0, axis_or(0)}, {1, 0}, {3, 0}};
    } else if (op == "TopK") {
      const int64_t axis = axis_or(-1);
      places = {{0, axis}, {1, axis}};
    } else if (op == "NonMaxSuppression" || op == "Range") {
      places = {{0, 0}};
    } else {
      return;
    }
    // TopK's K, when the analysis knows it as a dim (a size taken from another shape),
    // is the size itself; ONNX's inference reads K only from a constant.
    Dim size = Dim::unknown();
    if (op == "TopK" && inputs.size() > 1 && inputs[1] && inputs[1]->ints && inputs[1]->ints->size() == 1)
      size = inputs[1]->ints->front();
    if (size.is_unknown() && frame.iterating) return;
    std::vector<Dim*> dims;
    for (auto [k, axis] : places) {
      if (k >= outputs.size() || k >= static_cast<size_t>(n.output_size()) || n.output(static_cast<int>(k)).empty()) continue;
      Fact& f = outputs[k];
      if (!f.shape || f.other) continue;
      const int64_t rank = static_cast<int64_t>(f.shape->size());
      if (axis < 0) axis += rank;
      if (axis < 0 || axis >= rank) continue;
      dims.push_back(&(*f.shape)[static_cast<size_t>(axis)]);
    }
    if (dims.empty()) return;
    for (const Dim* d : dims)
      if (size.is_unknown() && !d->is_unknown()) size = *d;
    if (size.is_unknown()) size = fresh_symbol();
    for (Dim* d : dims)
      if (d->is_unknown()) *d = size;
  }

  // A callee's outputs at one call site. The placeholders of the context's inputs are the
  // caller's symbols again (`renaming`); another fresh symbol of the callee names a size
  // found within one call: each call site takes a fresh symbol of its own for it (unknown
  // in a body run once per iteration), since two calls in one context find their own
  // sizes. The inputs' other symbols stay.
  std::vector<Fact> instantiate(const std::vector<Fact>& outputs, const CallContext& ctx, const Renaming& renaming,
                                const Frame& frame) {
    if (fresh_names.empty()) return outputs;
    std::unordered_set<std::string> bound;
    auto bind = [&bound](const Dim& d) {
      for (auto& s : d.symbols()) bound.insert(std::move(s));
    };
    for (const Fact& f : ctx.inputs) {
      if (f.shape) std::for_each(f.shape->begin(), f.shape->end(), bind);
      if (f.ints) std::for_each(f.ints->begin(), f.ints->end(), bind);
      if (f.other)
        for_each_shape(*f.other, [&bound](const onnx::TensorShapeProto& shape) {
          for (const auto& d : shape.dim()) bound.insert(d.dim_param());
        });
    }
    std::unordered_map<std::string, Dim> renamed(renaming.begin(), renaming.end());
    const Dim::SymbolMap to = [&](const std::string& symbol) -> std::optional<Dim> {
      if (auto back = renamed.find(symbol); back != renamed.end()) return back->second;
      if (!fresh_names.count(symbol) || bound.count(symbol)) return std::nullopt;
      auto [it, first] = renamed.try_emplace(symbol);
      if (first) it->second = frame.iterating ? Dim::unknown() : fresh_symbol();
      return it->second;
    };
    std::vector<Fact> out = outputs;
    for (Fact& f : out) rename_symbols(f, to);
    return out;
  }

  // Every dim a node's output leaves unknown gets a fresh symbol of its own, as ONNX's
  // inference writes unk__N: values computed from it then keep one dim that later code
  // can compare (and a data-dependent size it may be, the symbol is taken to be possibly
  // 0). Not in a body run once per iteration, where the size may differ between
  // iterations.
  void name_unknown_dims(std::vector<Fact>& outputs, const Frame& frame) {
    if (frame.iterating) return;
    for (Fact& f : outputs) {
      if (f.other || !f.shape || f.shape->size() > kMaxNamedRank) continue;
      for (Dim& d : *f.shape)
        if (d.is_unknown()) d = fresh_symbol();
    }
  }

  // ------------------------------------------------------------------ control flow

  std::vector<Fact> call_if(const NodeProto& n, size_t index, const std::vector<const Fact*>& inputs, Frame& frame,
                            const PathLink* path) {
    const GraphProto* then_graph = graph_attribute(n, "then_branch", frame.attributes);
    const GraphProto* else_graph = graph_attribute(n, "else_branch", frame.attributes);
    if (!then_graph || !else_graph) {
      report(frame, path, Severity::Error, "If needs then_branch and else_branch graphs");
      return {};
    }
    std::optional<int64_t> cond = !inputs.empty() && inputs[0] ? inputs[0]->scalar_int() : std::nullopt;
    if (cond) {
      const bool take_then = *cond != 0;
      frame.facts->set_branch(index, take_then ? 0 : 1);
      const PathLink branch = link(path, take_then ? "then_branch" : "else_branch");
      return walk_subgraph(take_then ? *then_graph : *else_graph, frame, {}, &branch);
    }
    const PathLink then_link = link(path, "then_branch");
    const PathLink else_link = link(path, "else_branch");
    auto a = walk_subgraph(*then_graph, frame, {}, &then_link);
    auto b = walk_subgraph(*else_graph, frame, {}, &else_link);
    std::vector<Fact> out;
    for (size_t i = 0; i < a.size() && i < b.size(); ++i) out.push_back(join(a[i], b[i]));
    return out;
  }

  // Analyses a loop body until its loop-carried facts are stable: each round joins the
  // facts carried in with those carried out; after kMaxLoopRounds the shapes of what
  // still changes are dropped. Only the final round's facts are kept.
  // `bind(state)` gives the body's inputs; returns the body outputs of the final round
  // and the stable state.
  template <class Bind>
  std::pair<std::vector<Fact>, std::vector<Fact>> fixpoint(const GraphProto& body, Frame& frame, std::vector<Fact> state,
                                                          size_t state_offset, Bind bind, const PathLink* path) {
    for (int round = 0;; ++round) {
      std::vector<const CallContext*> scratch_callees;
      std::unordered_set<const CallContext*> scratch_set;
      Frame trial = frame;
      trial.callees = &scratch_callees;
      trial.callee_set = &scratch_set;
      trial.speculative = true;
      trial.iterating = true;
      auto out = walk_subgraph(body, trial, bind(state), path);
      std::vector<Fact> next = state;
      for (size_t i = 0; i < state.size() && state_offset + i < out.size(); ++i)
        next[i] = join(state[i], out[state_offset + i]);
      if (next == state) break;
      state = std::move(next);
      if (round + 1 >= kMaxLoopRounds) {
        for (auto& f : state)
          if (f.other)
            f = Fact();  // a sequence or optional whose shapes still change: nothing
          else
            f = Fact::tensor(f.elem_type, {}), f.shape.reset();
        break;
      }
    }
    Frame each = frame;
    each.iterating = true;
    auto out = walk_subgraph(body, each, bind(state), path);
    return {std::move(out), std::move(state)};
  }

  std::vector<Fact> call_loop(const NodeProto& n, const std::vector<const Fact*>& inputs, Frame& frame,
                              const PathLink* path) {
    const GraphProto* body = graph_attribute(n, "body", frame.attributes);
    if (!body) {
      report(frame, path, Severity::Error, "Loop needs a body graph");
      return {};
    }
    const size_t carried = inputs.size() > 2 ? inputs.size() - 2 : 0;
    std::vector<Fact> state;
    for (size_t i = 0; i < carried; ++i) state.push_back(inputs[2 + i] ? *inputs[2 + i] : Fact());
    auto bind = [](const std::vector<Fact>& s) {
      std::vector<Fact> in{scalar_of(onnx::TensorProto::INT64), scalar_of(onnx::TensorProto::BOOL)};
      for (const auto& f : s) in.push_back(without_elements(f));  // values change from one iteration to the next
      return in;
    };
    // The state fed to the body has no elements (bind drops them), so neither does the
    // state the fixpoint compares.
    for (auto& f : state) f = without_elements(f);
    const PathLink body_link = link(path, "body");
    auto [out, stable] = fixpoint(*body, frame, state, 1, bind, &body_link);

    // Scan outputs stack one element per iteration: exactly M when a trip count is
    // given and no condition can stop the loop early.
    Dim trips = Dim::unknown();
    const bool has_cond = n.input_size() > 1 && !n.input(1).empty();
    if (!inputs.empty() && inputs[0] && !has_cond)
      if (auto m = inputs[0]->scalar_int()) trips = Dim::constant(*m);
    std::vector<Fact> results = stable;
    // A value carried in as an optional that the body gives back unwrapped (optional(seq)
    // in, seq out: test_loop16_seq_none) is the Loop's result with the body's type, as in
    // ONNX's Loop inference: the model declares the body's outputs as what the loop yields.
    for (size_t i = 0; i < carried && 1 + i < out.size(); ++i) {
      const bool optional_in = stable[i].other && stable[i].other->has_optional_type();
      const Fact& body_out = out[1 + i];
      if (optional_in && body_out.known() && !(body_out.other && body_out.other->has_optional_type()))
        results[i] = without_elements(body_out);
    }
    for (size_t k = 1 + carried; k < out.size(); ++k) {
      Fact f = without_elements(out[k]);
      if (f.shape) f.shape->insert(f.shape->begin(), trips);
      results.push_back(std::move(f));
    }
    return results;
  }

  std::vector<Fact> call_scan(const NodeProto& n, const std::vector<const Fact*>& inputs, const ResolvedAttributes& attrs,
                              Frame& frame, const PathLink* path) {
    const GraphProto* body = graph_attribute(n, "body", frame.attributes);
    const AttributeProto* num_attr = attrs.find("num_scan_inputs");
    const int opset = frame.opsets->count("") ? frame.opsets->at("") : 0;
    if (!body || !num_attr) {
      report(frame, path, Severity::Error, "Scan needs a body graph and num_scan_inputs");
      return {};
    }
    if (opset < 9) return call_op(n, inputs, attrs, frame, path);  // Scan-8: batch axis, ONNX's rule
    if (num_attr->i() < 0 || static_cast<uint64_t>(num_attr->i()) > inputs.size()) {  // ONNX's checker lets it pass
      report(frame, path, Severity::Error,
             "Scan's num_scan_inputs is " + std::to_string(num_attr->i()) + " but it has " +
                 std::to_string(inputs.size()) + " inputs");
      return {};
    }
    const size_t num_scan = static_cast<size_t>(num_attr->i());
    const size_t num_state = inputs.size() >= num_scan ? inputs.size() - num_scan : 0;
    const auto in_axes = ints_attribute(attrs, "scan_input_axes");
    const auto out_axes = ints_attribute(attrs, "scan_output_axes");

    std::vector<Fact> slices;
    Dim length = Dim::unknown();
    for (size_t j = 0; j < num_scan; ++j) {
      const Fact* f = inputs[num_state + j];
      Fact slice = f ? without_elements(*f) : Fact();
      if (slice.shape) {
        int64_t axis = j < in_axes.size() ? in_axes[j] : 0;
        const int64_t rank = static_cast<int64_t>(slice.shape->size());
        if (axis < 0) axis += rank;
        if (axis >= 0 && axis < rank) {
          const Dim d = (*slice.shape)[static_cast<size_t>(axis)];
          if (length.is_unknown()) length = d;
          slice.shape->erase(slice.shape->begin() + axis);
        } else {
          slice.shape.reset();
        }
      }
      slices.push_back(std::move(slice));
    }
    std::vector<Fact> state;
    for (size_t i = 0; i < num_state; ++i) state.push_back(inputs[i] ? without_elements(*inputs[i]) : Fact());
    auto bind = [&slices](const std::vector<Fact>& s) {
      std::vector<Fact> in = s;
      in.insert(in.end(), slices.begin(), slices.end());
      return in;
    };
    const PathLink body_link = link(path, "body");
    auto [out, stable] = fixpoint(*body, frame, state, 0, bind, &body_link);
    std::vector<Fact> results = stable;
    for (size_t k = num_state; k < out.size(); ++k) {
      Fact f = without_elements(out[k]);
      if (f.shape) {
        const size_t j = k - num_state;
        int64_t axis = j < out_axes.size() ? out_axes[j] : 0;
        const int64_t rank = static_cast<int64_t>(f.shape->size()) + 1;
        if (axis < 0) axis += rank;
        if (axis >= 0 && axis < rank)
          f.shape->insert(f.shape->begin() + axis, length);
        else
          f.shape.reset();
      }
      results.push_back(std::move(f));
    }
    return results;
  }

  // ------------------------------------------------------------------ operators

  // ONNX 1.17's Transpose rule checks each perm entry against the input's rank but not
  // the perm's length: a perm shorter than the rank gives an output of the perm's rank,
  // where run times refuse the node. Ours: that case, when the rank is known (a longer
  // perm has an entry out of range, which ONNX's rule reports).
  static std::optional<std::string> transpose_perm_mismatch(const ResolvedAttributes& attrs,
                                                            const std::vector<const Fact*>& inputs) {
    const AttributeProto* perm = attrs.find("perm");
    if (!perm || inputs.empty() || !inputs[0] || !inputs[0]->shape) return std::nullopt;
    const auto rank = static_cast<int64_t>(inputs[0]->shape->size());
    if (perm->ints_size() >= rank) return std::nullopt;
    return "Transpose's perm has " + std::to_string(perm->ints_size()) + " entries but its input has rank " +
           std::to_string(rank);
  }

  std::vector<Fact> call_op(const NodeProto& n, const std::vector<const Fact*>& inputs, const ResolvedAttributes& attrs,
                            Frame& frame, const PathLink* path) {
    const bool default_domain = FunctionId::is_default_domain(n.domain());
    auto v = frame.opsets->find(default_domain ? std::string() : n.domain());
    if (v == frame.opsets->end()) {
      report(frame, path, Severity::Error, "domain '" + n.domain() + "' is used without an opset import");
      return {};
    }
    const int version = v->second;
    const onnx::OpSchema* schema = bridge.find_schema(n.op_type(), v->first, version);
    std::vector<Fact> outputs(static_cast<size_t>(n.output_size()));
    if (!schema) {
      if (const schemas::OpRule* rule = rules->find(v->first, n.op_type())) return call_rule(n, *rule, inputs, attrs, frame, path);
      report_soft(frame, path,
                  "no schema or rule for " + FunctionId::of(n).str() + " at opset " + std::to_string(version) +
                      " and no model-local function of that name: its outputs are not inferred");
      return outputs;
    }
    // An input whose type is unknown was reported where it arose; ONNX's rules would only
    // fail again ("Input 0 expected to have type but instead is null") down the line.
    const bool input_unknown = std::any_of(inputs.begin(), inputs.end(),
                                           [](const Fact* f) { return f && f->elem_type == 0 && !f->other; });
    if (input_unknown) {
      // What Shape and Size give does not depend on the input's type: a 1-D and a 0-D
      // int64 tensor of any tensor (as ONNX's own inference types them).
      if (default_domain && n.op_type() == "Shape" && !outputs.empty())
        outputs[0] = Fact::tensor(onnx::TensorProto::INT64, {Dim::unknown()});
      if (default_domain && n.op_type() == "Size" && !outputs.empty()) outputs[0] = Fact::tensor(onnx::TensorProto::INT64, {});
      return outputs;
    }
    if (default_domain && n.op_type() == "Transpose")
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
          if (seen->relied_on_symbol_min) note_symbol_min_relied(n, path);
          return seen->outputs;
        }
      // Subgraphs ONNX's rule asks about (SequenceMap, Scan-8) are walked for their
      // output types only: ONNX feeds loop-like bodies their first iteration's types,
      // which need not hold for later ones, so nothing inside is recorded.
      auto subgraphs = [&](const GraphProto& g, const std::vector<Fact>& in) {
        std::vector<const CallContext*> scratch_callees;
        std::unordered_set<const CallContext*> scratch_set;
        Frame trial = frame;
        trial.callees = &scratch_callees;
        trial.callee_set = &scratch_set;
        trial.speculative = true;
        trial.iterating = true;
        PathLink sub;
        sub.parent = path;
        sub.kind = PathLink::Kind::Subgraph;
        sub.graph = &g;
        return walk_subgraph(g, trial, in, &sub);
      };
      auto r = bridge.infer(*schema, n, inputs, attrs.list, subgraphs);
      if (r.type_error) report_soft(frame, path, "type constraint broken: " + *r.type_error);
      if (r.error) report_soft(frame, path, "ONNX inference failed: " + *r.error);
      // Errors are not kept: ONNX's messages may name the node.
      OpMemo::Outcome outcome;
      outcome.outputs = std::move(r.outputs);
      if (default_domain) fold_outputs(n, version, inputs, attrs, frame, path, outcome);
      if (!key || r.type_error || r.error) return std::move(outcome.outputs);
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

  // Refines the outputs of an ONNX-domain op node by our folding rules (src/eval), which
  // compute values ONNX's inference does not; reports what they find, recorded in
  // `outcome` as well.
  void fold_outputs(const NodeProto& n, int version, const std::vector<const Fact*>& inputs,
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
    fi.symbol_min = options.assume_positive_dims ? 1 : 0;
    std::optional<std::string> overflow;
    std::vector<Fact> folded;
    bool relied = false;
    fi.relied_on_symbol_min = &relied;
    {
      // The rules compute in 64 bits and leave a value that does not fit a narrower
      // integer type unknown (it wraps at run time); the first one is reported.
      eval::OverflowWatch watch(overflow);
      folded = eval::fold(fi);
    }
    if (overflow) report_here("integer overflow: " + *overflow);
    if (relied) {
      outcome.relied_on_symbol_min = true;
      note_symbol_min_relied(n, path);
    }
    for (size_t i = 0; i < folded.size() && i < outputs.size(); ++i) {
      auto refined = Fact::refine(outputs[i], folded[i]);
      if (refined.ok())
        outputs[i] = std::move(*refined);
      else
        report_here("folding contradicts ONNX's inference for output " + std::to_string(i) + ": " +
                    refined.error().message);
    }
  }

  // Recorded in every walk, speculative ones too: what they find feeds facts as well.
  void note_symbol_min_relied(const NodeProto& n, const PathLink* path) {
    if (auto where = PathLink::spell(path); assumption_places.insert(where).second)
      assumptions.push_back({n.op_type(), std::move(where)});
  }

  // An ONNX op without an inference function but defined by a function body (e.g.
  // GroupNormalization-21): the body, expanded once per op, version and attributes.
  const FunctionProto* schema_body(const onnx::OpSchema& schema, const NodeProto& n, const std::vector<const Fact*>& inputs,
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

  std::vector<Fact> call_schema_body(const NodeProto& n, const FunctionProto& body, const std::vector<const Fact*>& inputs,
                                     const ResolvedAttributes& attrs, const onnx::OpSchema& schema, const Frame& frame,
                                     const PathLink* path) {
    // The body refers to the op's attributes; those the node leaves out take the
    // schema's defaults.
    Signature sig;
    sig.num_inputs = body.input_size();
    for (const auto& entry : schema.attributes()) {
      sig.attributes.insert(entry.first);
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

  // The outputs of an op's body in the node's context: ONNX's function body of an op, or
  // the shape function of a rule. Problems inside such bodies are ONNX's or the rule's,
  // not the model's: not reported.
  std::vector<Fact> call_body(const FunctionProto& body, const FunctionId& id, const Signature& sig,
                              const std::vector<const Fact*>& inputs, const std::vector<bool>& present,
                              const ResolvedAttributes& attrs, const Frame& frame, const PathLink* path) {
    Renaming renaming;
    const CallContext ctx = make_context(id, sig, inputs, present, attrs, renaming);
    const CallContext* key = nullptr;
    PathLink entered;
    entered.parent = path;
    entered.kind = PathLink::Kind::SchemaBody;
    entered.function = &id;
    const size_t before = diagnostics.size();
    const Summary& s = analyze(ctx, body, &entered, &key);
    diagnostics.resize(before);
    return instantiate(s.outputs, *key, renaming, frame);
  }

  // An op outside ONNX's registry with a rule in schemas/ (src/schemas does the work).
  std::vector<Fact> call_rule(const NodeProto& n, const schemas::OpRule& rule, const std::vector<const Fact*>& inputs,
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
};

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
  for (size_t i = 0; i < inputs.size(); ++i) {
    const auto& in = g.input(static_cast<int>(i));
    Fact fact = in.has_type() ? declared_fact(in.type(), m.ours, m.listed_fresh) : Fact();
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
