// The analysis's calls: a model-local function analysed once per distinct call context
// (memo), the context's fresh symbols renamed to placeholders and back, and fresh
// symbols for data-dependent dims (analyzer_impl.h).
#include "infer/analyzer_impl.h"
#include "support/proto_hash.h"

namespace shapeprop::infer {

namespace {

// Every symbol a fact mentions, in order: those of its shape's dims and of its elements,
// and those of the tensors a non-tensor value holds, repeats included.
void for_each_symbol(const Fact& fact, const std::function<void(const std::string&)>& visit) {
  fact.for_each_tensor([&visit](const Fact& f) {
    for (const std::vector<Dim>* dims : {f.shape ? &*f.shape : nullptr, f.ints ? &*f.ints : nullptr})
      if (dims)
        for (const Dim& d : *dims)
          d.any_symbol([&visit](std::string_view symbol) {
            visit(std::string(symbol));
            return false;  // every symbol
          });
  });
}

}  // namespace

auto Analyzer::Impl::signature_of(const FunctionProto& f) -> Signature {
  Signature sig;
  sig.num_inputs = f.input_size();
  sig.function_defaults = &f.attribute_proto();
  return sig;
}

const std::string& Analyzer::Impl::placeholder(size_t k) {
  while (placeholders.size() <= k) placeholders.push_back(*fresh_symbol().as_symbol());
  return placeholders[k];
}

auto Analyzer::Impl::rename_fresh(std::vector<Fact>& inputs) -> Renaming {
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
    if (!fresh_names.empty()) for_each_symbol(f, note);  // only fresh symbols are renamed
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

void Analyzer::Impl::rename_symbols(Fact& fact, const Dim::SymbolMap& to) {
  fact.for_each_tensor([&to](Fact& f) {
    if (f.shape)
      for (Dim& d : *f.shape) d = d.substitute(to);
    if (f.ints)
      for (Dim& d : *f.ints) d = d.substitute(to);
  });
}

CallContext Analyzer::Impl::make_context(const FunctionId& id, const Signature& sig, const std::vector<const Fact*>& inputs,
                         const std::vector<bool>& present, const ResolvedAttributes& attrs, Renaming& renaming,
                         std::vector<const AttributeProto*>& chosen_out) {
  CallContext ctx;
  ctx.function = id;
  ctx.present.reserve(static_cast<size_t>(sig.num_inputs));
  ctx.inputs.reserve(static_cast<size_t>(sig.num_inputs));
  for (int i = 0; i < sig.num_inputs; ++i) {
    const size_t k = static_cast<size_t>(i);
    const bool given = k < present.size() && present[k];
    ctx.present.push_back(given);
    ctx.inputs.push_back(given && inputs[k] ? *inputs[k] : Fact());
  }
  renaming = rename_fresh(ctx.inputs);
  // By name, the call's over the defaults; copied only into a context analyze() keeps.
  std::map<std::string_view, const AttributeProto*> chosen;
  for (const auto& a : sig.defaults) chosen[a.name()] = &a;
  if (sig.function_defaults)
    for (const auto& a : *sig.function_defaults) chosen[a.name()] = &a;
  // Every attribute the call gives, declared by the function or not (which is warned):
  // ONNX's inliner and ONNX Runtime bind a body's @name to the call's attribute of that
  // name either way (a fuzz finding: a mutated function declaring no `keepdim` whose body's
  // ArgMax reads @keepdim; ONNX Runtime took the call's keepdim = 0 where the analysis took
  // ArgMax's default 1, and wrote a rank too many).
  for (const auto* a : attrs.list) chosen[a->name()] = a;
  chosen_out.clear();
  chosen_out.reserve(chosen.size());
  for (const auto& [name, given] : chosen) {
    chosen_out.push_back(given);
    if (given->has_doc_string()) {  // serialized without it, as the kept copy is
      AttributeProto a = *given;
      a.clear_doc_string();
      append_serialized(ctx.attribute_key, a, a.ByteSizeLong());
    } else {
      append_serialized(ctx.attribute_key, *given, given->ByteSizeLong());
    }
    ctx.attribute_key += '\0';
  }
  size_t h = FunctionId::Hash()(id);
  for (size_t i = 0; i < ctx.inputs.size(); ++i) hash_combine(h, ctx.present[i] ? ctx.inputs[i].hash() : 7);
  hash_combine(h, std::hash<std::string>()(ctx.attribute_key));
  ctx.hash_value = h;
  return ctx;
}

std::vector<Fact> Analyzer::Impl::call_function(const NodeProto& n, size_t index, const FunctionProto& f,
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
  std::vector<const AttributeProto*> chosen;  // views `sig`'s, `f`'s and the call's
  const Signature sig = signature_of(f);
  const CallContext ctx = make_context(id, sig, inputs, present, attrs, renaming, chosen);
  const CallContext* key = nullptr;
  PathLink entered;
  entered.parent = path;
  entered.kind = PathLink::Kind::Function;
  entered.function = &id;
  const Summary& s = analyze(ctx, chosen, f, &entered, &key);
  frame.facts->set_call(index, key, &s.facts);
  if (frame.callee_set->insert(key).second) frame.callees->push_back(key);
  return instantiate(s.outputs, *key, renaming, frame);
}

const Summary& Analyzer::Impl::analyze(const CallContext& ctx, const std::vector<const AttributeProto*>& chosen,
                                       const FunctionProto& f, const PathLink* path, const CallContext** key_out) {
  auto found = memo.find(ctx);
  if (found != memo.end()) {
    *key_out = &found->first;
    return *found->second;
  }
  const ir::Body& body = bodies.of(f);
  CallContext kept = ctx;
  kept.attributes.reserve(chosen.size());
  for (const AttributeProto* given : chosen) kept.attributes.emplace_back(*given).clear_doc_string();
  auto [it, _] = memo.emplace(std::move(kept), std::make_unique<Summary>(body));
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

Dim Analyzer::Impl::fresh_symbol() {
  for (;;) {
    std::string name = "dyn__" + std::to_string(next_fresh++);
    if (model_names.count(name)) continue;
    fresh_names.insert(name);
    return Dim::symbol(std::move(name));
  }
}

void Analyzer::Impl::name_data_dependent(const NodeProto& n, const std::vector<const Fact*>& inputs, const ResolvedAttributes& attrs,
                         std::vector<Fact>& outputs, const Frame& frame) {
  // The places (output, axis) that hold the one data-dependent size of the node.
  std::vector<std::pair<size_t, int64_t>> places;
  auto axis_or = [&attrs](int64_t fallback) {
    const AttributeProto* a = attrs.find("axis");
    return a ? a->i() : fallback;
  };
  const std::string_view op = n.op_type();  // compared as views: lengths first
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

std::vector<Fact> Analyzer::Impl::instantiate(const std::vector<Fact>& outputs, const CallContext& ctx, const Renaming& renaming,
                              const Frame& frame) {
  if (fresh_names.empty()) return outputs;
  // The symbols of the context's inputs, gathered on the first fresh symbol met (most
  // outputs mention none).
  std::optional<std::unordered_set<std::string>> bound;
  auto is_bound = [&](const std::string& symbol) {
    if (!bound) {
      bound.emplace();
      for (const Fact& f : ctx.inputs) for_each_symbol(f, [&bound](const std::string& s) { bound->insert(s); });
    }
    return bound->count(symbol) > 0;
  };
  std::unordered_map<std::string, Dim> renamed(renaming.begin(), renaming.end());
  const Dim::SymbolMap to = [&](const std::string& symbol) -> std::optional<Dim> {
    if (auto back = renamed.find(symbol); back != renamed.end()) return back->second;
    if (!fresh_names.count(symbol) || is_bound(symbol)) return std::nullopt;
    auto [it, first] = renamed.try_emplace(symbol);
    if (first) it->second = frame.iterating ? Dim::unknown() : fresh_symbol();
    return it->second;
  };
  std::vector<Fact> out = outputs;
  for (Fact& f : out) rename_symbols(f, to);
  return out;
}

void Analyzer::Impl::name_unknown_dims(std::vector<Fact>& outputs, const Frame& frame) {
  if (frame.iterating) return;
  for (Fact& f : outputs) {
    if (f.other || !f.shape || f.shape->size() > kMaxNamedRank) continue;
    for (Dim& d : *f.shape)
      if (d.is_unknown()) d = fresh_symbol();
  }
}

}  // namespace shapeprop::infer
