// Annotation: writes the analysis into the model. The main graph (one context) gets
// value_info for every intermediate value, and its outputs the inferred types where they
// say more than the declared ones. Each reached function gets FunctionProto.value_info
// for every value, as the join over its live contexts, so that no entry is false for any
// caller: a dim that differs between contexts becomes a fresh symbol unk__N (one per
// distinct combination, shared by every value with that combination) or unknown, a rank
// that differs leaves the shape out, an element type that differs leaves the entry out.
#include "annotate.h"

#include "declared_type.h"

#include <range/v3/view/zip.hpp>

#include "support/name_map.h"
#include "support/subgraphs.h"
#include "support/type_walk.h"

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <unordered_set>

namespace shapeprop::infer {

namespace {

using onnx::GraphProto;
using onnx::ValueInfoProto;

// What an entry needs: an element type, nested ones too (a tensor whose rank is unknown is written as its
// element type alone, as ONNX's own inference writes it). ONNX's checker wants a shape on
// the main graph's outputs; an output is only written without one where the model gave it
// none, so a model that passed the checker still does.
bool writable(const Fact& f) { return f.writable(); }

void collect_dim_params(const onnx::TypeProto& t, std::set<std::string>& out) {
  for_each_shape(t, [&out](const onnx::TensorShapeProto& shape) {
    for (const auto& d : shape.dim())
      if (d.has_dim_param()) out.insert(d.dim_param());
  });
}

// The dim_params of `type` in `names` cleared (the dims become unknown).
void clear_dim_params(onnx::TypeProto& type, const std::set<std::string>& names) {
  if (names.empty()) return;
  for_each_shape(type, [&names](onnx::TensorShapeProto& shape) {
    for (auto& d : *shape.mutable_dim())
      if (d.has_dim_param() && names.count(d.dim_param())) d.clear_dim_param();
  });
}

// What annotation writes for a value the analysis proves `proven` (`written`: the type
// DimTexts gives for it) and the model declares `declared`. Declarations are never facts,
// but what they say where nothing is proven cannot be contradicted: the proof, with the
// declaration's element type, shape or dims where the proof has none. Never a declared
// part beside a proven one that differs (a constant where the graph leaves a symbol: the
// example's size), never a dim_param found naming different sizes (`false_names`), and
// no dim_param inside a function (`in_function`: one names a size within one call). A
// declared dim_param that reads as the very expression proven (torch's "batch*seq") is
// kept as written. A proven dim that mentions a fresh symbol is a size the analysis
// names without knowing it: the declaration's dim stands there too, but for a fresh
// symbol an earlier run wrote (`texts` lists them), which this run names again.
onnx::TypeProto with_declared(onnx::TypeProto written, const Fact& proven, const onnx::TypeProto& declared,
                              const std::set<std::string>& false_names, bool in_function, const DimTexts& texts) {
  if (!written.has_tensor_type() || !declared.has_tensor_type() || proven.other) return written;
  auto& out = *written.mutable_tensor_type();
  const auto& decl = declared.tensor_type();
  if (out.elem_type() == 0) out.set_elem_type(decl.elem_type());
  if (!decl.has_shape() || (decl.elem_type() != 0 && decl.elem_type() != out.elem_type())) return written;
  auto stands = [&](const onnx::TensorShapeProto::Dimension& d) {
    return d.has_dim_value() || (d.has_dim_param() && !in_function && !false_names.count(d.dim_param()) &&
                                 !texts.listed_fresh(d.dim_param()));
  };
  auto declared_dim = [&](const onnx::TensorShapeProto::Dimension& d) {
    onnx::TensorShapeProto::Dimension copy;
    if (stands(d)) {
      if (d.has_dim_value()) copy.set_dim_value(d.dim_value());
      else copy.set_dim_param(d.dim_param());
    }
    return copy;
  };
  if (!proven.shape) {
    auto* shape = out.mutable_shape();
    shape->clear_dim();
    for (const auto& d : decl.shape().dim()) *shape->add_dim() = declared_dim(d);
    return written;
  }
  if (!out.has_shape() || out.shape().dim_size() != decl.shape().dim_size()) return written;
  for (int i = 0; i < decl.shape().dim_size(); ++i) {
    const Dim& p = (*proven.shape)[static_cast<size_t>(i)];
    const auto& d = decl.shape().dim(i);
    auto* w = out.mutable_shape()->mutable_dim(i);
    if (p.is_unknown() || (mentions_fresh(p) && stands(d))) {
      *w = declared_dim(d);
    } else if (!in_function && !p.is_constant() && d.has_dim_param() && w->has_dim_param() &&
               w->dim_param() != d.dim_param() && declared_expression(d.dim_param()) == p) {
      w->set_dim_param(d.dim_param());
    }
  }
  return written;
}

// Rebuilds a value_info list: entries for `names` (in that order) with facts, then the
// existing entries for names not written, as they were but for `kept(entry)`. An existing
// entry of a name written is emptied and reused for it (exporters declare most values,
// so most entries are reused rather than destroyed and built anew).
size_t rewrite_value_info(google::protobuf::RepeatedPtrField<ValueInfoProto>* list,
                          const std::vector<std::string_view>& names,
                          const std::function<std::optional<onnx::TypeProto>(std::string_view)>& type_of,
                          const std::function<void(ValueInfoProto&)>& kept) {
  // The existing entries, taken out of the list without a copy (the model has no arena).
  std::vector<std::unique_ptr<ValueInfoProto>> old(static_cast<size_t>(list->size()));
  for (size_t k = old.size(); k-- > 0;) old[k].reset(list->ReleaseLast());
  NameMap old_index(old.size());  // the first entry of each name; views the entries' names
  for (size_t k = 0; k < old.size(); ++k) old_index.insert(old[k]->name(), static_cast<uint32_t>(k));
  google::protobuf::RepeatedPtrField<ValueInfoProto> out;
  out.Reserve(static_cast<int>(names.size()));
  NameMap written(names.size());  // views of `names`
  for (const std::string_view name : names) {
    if (written.contains(name)) continue;
    auto t = type_of(name);
    if (!t) continue;
    const uint32_t k = old_index.find(name);
    if (k != NameMap::kMissing && old[k]) {
      // Emptied but for its name, whose string stays where old_index views it.
      std::string same = std::move(*old[k]->mutable_name());
      old[k]->Clear();
      *old[k]->mutable_name() = std::move(same);
      *old[k]->mutable_type() = std::move(*t);
      out.AddAllocated(old[k].release());
    } else {
      auto* vi = out.Add();
      vi->set_name(std::string(name));
      *vi->mutable_type() = std::move(*t);
    }
    written.insert(name);
  }
  const size_t count = written.size();
  for (auto& vi : old)
    if (vi && !written.contains(vi->name())) {
      kept(*vi);
      out.AddAllocated(vi.release());
    }
  list->Swap(&out);
  return count;
}

// The values a body defines, in order: inputs, then node outputs, subgraphs in place.
template <class Visit>
void for_each_value(const google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes, Visit&& visit) {
  struct Item {
    const google::protobuf::RepeatedPtrField<onnx::NodeProto>* nodes;
    int next;
  };
  std::vector<Item> stack{{&nodes, 0}};
  while (!stack.empty()) {
    Item& top = stack.back();
    if (top.next >= top.nodes->size()) {
      stack.pop_back();
      continue;
    }
    const auto& n = top.nodes->Get(top.next++);
    std::vector<const GraphProto*> subgraphs;
    for_each_subgraph(n, [&](const GraphProto& g) { subgraphs.push_back(&g); });
    for (const auto& o : n.output())
      if (!o.empty()) visit(o);
    for (auto it = subgraphs.rbegin(); it != subgraphs.rend(); ++it) {
      for (const auto& in : (*it)->input()) visit(in.name());
      stack.push_back({&(*it)->node(), 0});
    }
  }
}

class FunctionJoin {
 public:
  explicit FunctionJoin(std::set<std::string> taken) : taken_(std::move(taken)) {}

  // The join of one value's facts over the contexts that computed it; nullopt (with the
  // reason) when nothing can be written.
  std::optional<Fact> join(const std::vector<const Fact*>& facts, std::string& why) {
    const Fact& first = *facts.front();
    if (first.other) {
      Fact joined = first;
      for (const Fact* f : facts) joined = shapeprop::join(joined, *f);
      if (!joined.other) {
        why = "its type differs between contexts";
        return std::nullopt;
      }
      return joined;
    }
    for (const Fact* f : facts) {
      if (f->elem_type == 0 || f->other) {
        why = "no element type is inferred in some context";
        return std::nullopt;
      }
      if (f->elem_type != first.elem_type) {
        why = "its element type differs between contexts (" + elem_type_name(first.elem_type) + ", " +
              elem_type_name(f->elem_type) + ")";
        return std::nullopt;
      }
    }
    Fact joined = Fact::tensor(first.elem_type, {});
    joined.shape.reset();
    bool same_rank = first.shape.has_value();
    for (const Fact* f : facts) same_rank = same_rank && f->shape && f->shape->size() == first.shape->size();
    if (same_rank) {
      std::vector<Dim> dims;
      for (size_t i = 0; i < first.shape->size(); ++i) {
        std::vector<Dim> tuple;
        bool any_unknown = false, all_equal = true;
        for (const Fact* f : facts) {
          const Dim& d = (*f->shape)[i];
          any_unknown = any_unknown || d.is_unknown();
          all_equal = all_equal && d == (*first.shape)[i];
          tuple.push_back(d);
        }
        if (any_unknown)
          dims.push_back(Dim::unknown());
        else if (all_equal)
          dims.push_back(tuple.front());
        else
          dims.push_back(Dim::symbol(symbol_for(tuple)));
      }
      joined.shape = std::move(dims);
    }
    return joined;
  }

 private:
  std::set<std::string> taken_;
  std::map<std::vector<Dim>, std::string> symbols_;
  int next_ = 0;

  // One fresh symbol per combination of per-context dims: two values whose dims agree in
  // every context share it, which is true of them; ONNX's unk__N spelling.
  const std::string& symbol_for(const std::vector<Dim>& tuple) {
    auto it = symbols_.find(tuple);
    if (it != symbols_.end()) return it->second;
    std::string name;
    do name = "unk__" + std::to_string(next_++);
    while (taken_.count(name));
    return symbols_.emplace(tuple, name).first->second;
  }
};

// Exporters before IR 10 wrote function-internal types into the graph's value_info as
// "domain::function/value"; once the function's own value_info holds the facts, those
// entries (read as declared facts, and possibly contradicted) go.
void remove_legacy_entries(onnx::ModelProto& model, const std::unordered_set<const onnx::FunctionProto*>& reached) {
  std::set<std::string> prefixes;
  for (const auto* f : reached) prefixes.insert((f->domain().empty() ? std::string() : f->domain()) + "::" + f->name() + "/");
  auto* list = model.mutable_graph()->mutable_value_info();
  list->erase(std::remove_if(list->begin(), list->end(),
                             [&](const ValueInfoProto& vi) {
                               const auto slash = vi.name().find('/');
                               return slash != std::string::npos && prefixes.count(vi.name().substr(0, slash + 1)) > 0;
                             }),
              list->end());
}

// Every value a walk defined, in this body and the subgraphs it entered, by name; values
// of one name join.
std::unordered_map<std::string_view, Fact> facts_by_name(const BodyFacts& top) {
  std::unordered_map<std::string_view, Fact> out;
  std::vector<const BodyFacts*> work{&top};
  while (!work.empty()) {
    const BodyFacts* facts = work.back();
    work.pop_back();
    for (ir::ValueId v = 0; v < facts->body().num_values(); ++v) {
      const Fact* f = facts->fact(v);
      if (!f) continue;
      auto [it, fresh] = out.try_emplace(facts->body().name(v), *f);
      if (!fresh) it->second = join(it->second, *f);
    }
    for (const auto& s : facts->subgraphs()) work.push_back(s.get());
  }
  return out;
}

// The dim_params the main graph's scope (the graph and its subgraphs) declares that no
// written type may keep. A declared name other than a graph input's size is no fact: where
// the analysis proves a dim, the proof is written; where it proves two dims of one name to
// differ, the analysis found the name false (`contradicted`, reported there); and where it
// proves nothing, the name may stand only where it claims nothing, declared for one dim
// alone. A name declared for several dims (values, or axes of one value) stands only if
// the analysis proves all of them one size (the same fresh symbol, say); otherwise it
// would say that sizes are equal which nothing shows (TorchScript names the outputs of two
// calls of one module after the first, whatever their sizes).
std::vector<DroppedDimParam> dropped_dim_params(const onnx::GraphProto& main, const BodyFacts& facts,
                                                const std::set<std::string>& contradicted, const DimTexts& texts) {
  std::set<std::string> sizes;  // the graph inputs' dim_params
  for (const auto& vi : main.input()) collect_dim_params(vi.type(), sizes);
  struct Declared {
    std::vector<std::string> values;
    std::set<std::pair<std::string, int>> dims;  // (value, axis)
    std::optional<Dim> proven;                    // the one size proven for all so far
    bool one_size = true;
  };
  std::map<std::string, Declared> names;
  std::vector<std::string> order;  // names as first declared
  // `fact`: what the analysis proves of the value (nullptr in subgraphs: nothing is
  // compared there, so nothing proves their dims equal to another's).
  auto declare = [&](const onnx::ValueInfoProto& vi, const Fact* fact) {
    if (!vi.type().has_tensor_type() || !vi.type().tensor_type().has_shape()) return;
    const auto& shape = vi.type().tensor_type().shape();
    for (int i = 0; i < shape.dim_size(); ++i) {
      const auto& d = shape.dim(i);
      if (!d.has_dim_param() || d.dim_param().empty() || sizes.count(d.dim_param()) || texts.listed_fresh(d.dim_param()))
        continue;
      auto [it, fresh] = names.try_emplace(d.dim_param());
      Declared& n = it->second;
      if (fresh) order.push_back(d.dim_param());
      if (!n.dims.emplace(vi.name(), i).second) continue;
      if (std::find(n.values.begin(), n.values.end(), vi.name()) == n.values.end()) n.values.push_back(vi.name());
      const Dim* p = fact && fact->shape && fact->shape->size() == static_cast<size_t>(shape.dim_size())
                         ? &(*fact->shape)[static_cast<size_t>(i)] : nullptr;
      if (!p || p->is_unknown()) n.one_size = false;
      else if (!n.proven) n.proven = *p;
      else if (!(*n.proven == *p)) n.one_size = false;
    }
  };
  auto fact_of = [&facts](const std::string& name) -> const Fact* {
    const ir::ValueId v = facts.body().find(name);
    return v == ir::kNoValue ? nullptr : facts.fact(v);
  };
  for (const auto& vi : main.value_info()) declare(vi, fact_of(vi.name()));
  for (const auto& vi : main.output()) declare(vi, fact_of(vi.name()));
  std::vector<const GraphProto*> work;
  for (const auto& n : main.node()) for_each_subgraph(n, [&work](const GraphProto& g) { work.push_back(&g); });
  while (!work.empty()) {
    const GraphProto* g = work.back();
    work.pop_back();
    for (const auto& vi : g->input()) declare(vi, nullptr);
    for (const auto& vi : g->value_info()) declare(vi, nullptr);
    for (const auto& vi : g->output()) declare(vi, nullptr);
    for (const auto& n : g->node()) for_each_subgraph(n, [&work](const GraphProto& s) { work.push_back(&s); });
  }
  std::vector<DroppedDimParam> dropped;
  for (const auto& name : order) {
    const Declared& n = names[name];
    if (contradicted.count(name))
      dropped.push_back({name, n.values, "the graph proves it stands for different sizes"});
    else if (n.dims.size() > 1 && !n.one_size)
      dropped.push_back({name, n.values, "declared for " + std::to_string(n.dims.size()) +
                                             " dims that the graph does not prove one size"});
  }
  return dropped;
}

}  // namespace

size_t annotate_graph(onnx::ModelProto& model, const Analyzer& analysis, DimTexts& texts,
                      std::vector<DroppedDimParam>& dropped) {
  size_t written = 0;
  const Summary& root = analysis.graph();
  std::set<std::string> false_names = analysis.false_dim_params(nullptr);  // an input's size too
  dropped = dropped_dim_params(model.graph(), root.facts, false_names, texts);
  for (const auto& d : dropped) false_names.insert(d.name);
  // A graph, its Body, the facts of its walk (nullptr where the analysis did not enter
  // it) and the facts of the graphs around it (for outer values a subgraph returns).
  struct Item {
    GraphProto* graph;
    const ir::Body* body;
    const BodyFacts* facts;
    std::vector<const BodyFacts*> outer;  // innermost first
  };
  std::vector<Item> work{{model.mutable_graph(), &root.facts.body(), &root.facts, {}}};
  while (!work.empty()) {
    Item item = std::move(work.back());
    work.pop_back();
    GraphProto* g = item.graph;
    const bool main = item.outer.empty();
    // A subgraph where ONNX's inference failed on a node gets no types from the analysis,
    // nor do the subgraphs in it (BodyFacts::note_inference_failed; a fuzz finding: ONNX
    // Runtime refused at load an If whose never-taken branch Concats scalars, once the
    // scalars were typed).
    if (!main && item.facts && item.facts->inference_failed()) item.facts = nullptr;
    NameMap boundary;
    for (const auto& vi : g->input()) boundary.insert(vi.name());
    for (const auto& vi : g->output()) boundary.insert(vi.name());
    // The names the nodes define (views of their outputs), and each name's fact, as an
    // index into `facts` (the map views the same strings).
    std::vector<std::string_view> names;
    names.reserve(static_cast<size_t>(g->node_size()));
    NameMap index_of(static_cast<size_t>(g->node_size()));
    std::vector<const Fact*> facts;
    const ir::Body* body = item.body;
    std::vector<const BodyFacts*> chain{item.facts};
    chain.insert(chain.end(), item.outer.begin(), item.outer.end());
    for (int i = 0; i < g->node_size(); ++i) {
      auto& n = *g->mutable_node(i);
      for (auto&& [o, v] : ranges::views::zip(n.output(), body->outputs_of(body->nodes()[static_cast<size_t>(i)]))) {
        if (o.empty() || boundary.contains(o)) continue;
        names.push_back(o);
        if (item.facts) {
          if (const Fact* f = item.facts->fact_to_write(v)) {
            if (index_of.insert(o, static_cast<uint32_t>(facts.size())))
              facts.push_back(f);
            else
              facts[index_of.find(o)] = f;  // a name defined again: its last definition
          }
        }
      }
      for_each_subgraph(n, [&](GraphProto& sg) {
        work.push_back({&sg, &analysis.bodies().of(sg, body), item.facts ? item.facts->subgraph(sg) : nullptr, chain});
      });
    }
    // The first typed entry of each name (read before any entry moves).
    NameMap declared(static_cast<size_t>(g->value_info_size()));
    for (int k = 0; k < g->value_info_size(); ++k)
      if (g->value_info(k).has_type()) declared.insert(g->value_info(k).name(), static_cast<uint32_t>(k));
    std::vector<const onnx::TypeProto*> declared_types;
    declared_types.reserve(static_cast<size_t>(g->value_info_size()));
    for (const auto& vi : g->value_info()) declared_types.push_back(&vi.type());
    written += rewrite_value_info(
        g->mutable_value_info(), names,
        [&](std::string_view name) -> std::optional<onnx::TypeProto> {
          const uint32_t k = index_of.find(name);
          if (k == NameMap::kMissing || !writable(*facts[k])) return std::nullopt;
          const uint32_t d = declared.find(name);
          onnx::TypeProto t = texts.type_of(*facts[k]);
          if (d == NameMap::kMissing) return t;  // not ?:, which would copy t
          return with_declared(std::move(t), *facts[k], *declared_types[d], false_names, false, texts);
        },
        [&](ValueInfoProto& vi) { clear_dim_params(*vi.mutable_type(), false_names); });
    // Outputs (and subgraph inputs) get the proof with what their declaration adds to it
    // (the analysis reported a contradiction already: leaving a false declaration next
    // to the true facts written around it would make the model inconsistent). A
    // declaration that would stay as it is is not rewritten.
    auto update = [&](ValueInfoProto& vi, const Fact* fact) {
      if (!fact || !writable(*fact)) {
        if (vi.has_type()) clear_dim_params(*vi.mutable_type(), false_names);
        return;
      }
      onnx::TypeProto t = texts.type_of(*fact);
      if (vi.has_type()) t = with_declared(std::move(t), *fact, vi.type(), false_names, false, texts);
      if (!vi.has_type() || t.SerializeAsString() != vi.type().SerializeAsString()) *vi.mutable_type() = std::move(t);
    };
    const auto results = body->outputs();
    for (int i = 0; i < g->output_size(); ++i) {
      const ir::Operand& op = results[static_cast<size_t>(i)];
      const Fact* fact = nullptr;
      if (op.resolved() && !op.omitted() && op.depth < chain.size() && chain[op.depth])
        fact = chain[op.depth]->fact_to_write(op.id);
      update(*g->mutable_output(i), fact);
    }
    if (!main && item.facts) {
      const auto inputs = body->inputs();
      for (int i = 0; i < g->input_size(); ++i)
        update(*g->mutable_input(i), item.facts->fact_to_write(inputs[static_cast<size_t>(i)]));
    }
  }
  return written;
}

size_t annotate_functions(onnx::ModelProto& model, const Analyzer& analysis, DimTexts& texts, std::string* debug) {
  // Fresh symbols must not collide with a dim_param the model already uses (outside the
  // function value_info this rewrites, so that a second run names them the same).
  std::set<std::string> taken;
  std::vector<const GraphProto*> graphs{&model.graph()};
  auto subgraphs_of = [&graphs](const google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes) {
    for (const auto& n : nodes) for_each_subgraph(n, [&graphs](const GraphProto& g) { graphs.push_back(&g); });
  };
  const auto& live = analysis.live_contexts();
  std::unordered_set<const onnx::FunctionProto*> reached;
  for (const auto& entry : live) reached.insert(entry.first);
  for (const auto& f : model.functions()) {
    subgraphs_of(f.node());
    if (!reached.count(&f))
      for (const auto& vi : f.value_info()) collect_dim_params(vi.type(), taken);
  }
  while (!graphs.empty()) {
    const GraphProto* g = graphs.back();
    graphs.pop_back();
    for (const auto& vi : g->input()) collect_dim_params(vi.type(), taken);
    for (const auto& vi : g->output()) collect_dim_params(vi.type(), taken);
    for (const auto& vi : g->value_info()) collect_dim_params(vi.type(), taken);
    subgraphs_of(g->node());
  }
  remove_legacy_entries(model, reached);

  FunctionJoin joiner(std::move(taken));
  size_t written = 0;
  for (const auto& entry : live) {
    const auto& contexts = entry.second;  // (not a structured binding: the lambda below captures it)
    auto* f = const_cast<onnx::FunctionProto*>(entry.first);  // the analysis holds const views of `model`
    // Per context, each name's fact: FunctionProto.value_info has one namespace, so values
    // of one name in sibling subgraphs join.
    std::vector<std::unordered_map<std::string_view, Fact>> by_name;
    for (const CallContext* c : contexts) by_name.push_back(facts_by_name(analysis.summary(*c).facts));
    std::vector<std::string_view> names(f->input().begin(), f->input().end());
    for_each_value(f->node(), [&](const std::string& name) { names.push_back(name); });
    std::vector<std::string> dropped;
    const std::set<std::string>& false_names = analysis.false_dim_params(f);
    std::unordered_map<std::string_view, const onnx::TypeProto*> declared;  // read before any entry moves
    for (const auto& vi : f->value_info())
      if (vi.has_type()) declared.emplace(vi.name(), &vi.type());
    written += rewrite_value_info(
        f->mutable_value_info(), names,
        [&](std::string_view name) -> std::optional<onnx::TypeProto> {
          std::vector<const Fact*> facts;
          for (const auto& values : by_name) {
            auto it = values.find(name);
            if (it != values.end()) facts.push_back(&it->second);
          }
          std::string why;
          std::optional<Fact> joined;
          if (facts.empty())
            why = "not computed in any context (a branch never taken, or an omitted input)";
          else
            joined = joiner.join(facts, why);
          if (!joined) {
            dropped.push_back("    " + std::string(name) + ": " + why);
            return std::nullopt;
          }
          onnx::TypeProto t = texts.type_of(*joined);
          auto d = declared.find(name);
          if (d == declared.end()) return t;  // not ?:, which would copy t
          return with_declared(std::move(t), *joined, *d->second, false_names, true, texts);
        },
        [&](ValueInfoProto& vi) { clear_dim_params(*vi.mutable_type(), false_names); });
    if (debug && !dropped.empty()) {
      *debug += "no value_info in " + FunctionId::of(*f).str() + " for:\n";
      for (const auto& line : dropped) *debug += line + "\n";
    }
  }
  return written;
}

}  // namespace shapeprop::infer
