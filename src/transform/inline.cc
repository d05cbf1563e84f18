// Inlining, written after ONNX 1.17's onnx/inliner/inliner.cc so that the names it makes
// are exactly the ones ONNX's inliner makes (the tests compare outputs byte for byte with
// runs that used ONNX's inliner), without its copies: ONNX's copies the whole callee per
// call, then each callee node again into the graph, and copies every other node.
#include "transform/inline.h"

#include <algorithm>
#include <iterator>
#include <memory>
#include <stdexcept>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ir/names.h"
#include "shapeprop/function_id.h"
#include "support/repeated_fields.h"

namespace shapeprop::transform {

namespace {

using onnx::AttributeProto;
using onnx::FunctionProto;
using onnx::GraphProto;
using onnx::NodeProto;
using NodeList = google::protobuf::RepeatedPtrField<NodeProto>;
using ValueInfoList = google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>;

// ONNX's function id ("domain::name", or "domain::name::overload", the default domain
// spelled ""), as a view of the function's strings.
FunctionId::View impl_id(const FunctionProto& f) {
  return {FunctionId::canonical_domain_view(f.domain()), f.name(), f.overload()};
}
using FunctionIndex = std::unordered_map<FunctionId::View, const FunctionProto*, FunctionId::Hash, FunctionId::Equal>;

// A call's attributes by name (the last of a name, as a map would keep it): few, searched
// in order.
using AttributeValues = std::vector<const AttributeProto*>;
const AttributeProto* attribute_value(const AttributeValues& values, const std::string& name) {
  for (auto it = values.rbegin(); it != values.rend(); ++it)
    if ((*it)->name() == name) return *it;
  return nullptr;
}

// Every name in one namespace (values and node names), and fresh ones made from a
// suggestion: the suggestion itself if free, else suggestion_K with K one global counter.
// The model's names are views of its strings (kept alive by the Inliner).
class Names {
 public:
  void add(const std::string& name) { names_.insert_lasting(name); }
  std::string create(const std::string& suggested) { return names_.fresh(suggested, index_); }
  void add_graph(const GraphProto& g) {
    for (const auto& x : g.input()) add(x.name());
    for (const auto& x : g.initializer()) add(x.name());
    for (const auto& x : g.output()) add(x.name());
    for (const auto& n : g.node()) add_node(n);
  }
  void add_node(const NodeProto& n) {
    add(n.name());
    for (const auto& x : n.input()) add(x);
    for (const auto& x : n.output()) add(x);
    for (const auto& a : n.attribute()) {
      if (a.has_g()) add_graph(a.g());
      for (const auto& g : a.graphs()) add_graph(g);
    }
  }

 private:
  ir::NameSet names_;
  unsigned index_ = 0;
};

// Attribute references in an inlined body take the call's values, or go when it has none.
void bind_attributes(NodeProto& node, const AttributeValues& values) {
  auto& attributes = *node.mutable_attribute();
  for (auto it = attributes.begin(); it != attributes.end();) {
    if (!it->ref_attr_name().empty()) {
      const AttributeProto* v = attribute_value(values, it->ref_attr_name());
      if (!v) {
        it = attributes.erase(it);
        continue;
      }
      const std::string name = it->name();
      *it = *v;
      it->set_name(name);
    } else {
      if (it->has_g())
        for (auto& n : *it->mutable_g()->mutable_node()) bind_attributes(n, values);
      for (auto& g : *it->mutable_graphs())
        for (auto& n : *g.mutable_node()) bind_attributes(n, values);
    }
    ++it;
  }
}

// The renaming of one inlined call: scoped maps from the callee's names to the graph's.
class Renamer {
 public:
  Renamer(std::string suffix, Names& names) : suffix_(std::move(suffix)), names_(names) {}
  // Room for about `n` names bound in the call's own scope.
  void reserve(size_t n) { renaming_.reserve(n); }

  // Formal parameters take the actual names; an output the call omits gets a fresh one.
  // An output that is one of the inputs (`Id (x) => (x)`) keeps the input's binding
  // inside the body, and is returned as (input, output) to be copied by an Identity:
  // ONNX's inliner binds it to the output and leaves that output undefined.
  std::vector<std::pair<std::string, std::string>> bind(const google::protobuf::RepeatedPtrField<std::string>& formals,
                                                        const google::protobuf::RepeatedPtrField<std::string>& actuals,
                                                        bool outputs) {
    if (actuals.size() > formals.size())
      throw std::runtime_error("a call has more actual parameters than its function has formal parameters");
    std::vector<std::pair<std::string, std::string>> passed_through;
    for (int i = 0; i < formals.size(); ++i) {
      std::string as = i < actuals.size() ? actuals.Get(i) : std::string();
      if (outputs) {
        if (const std::string* in = renaming_.bound_here(formals.Get(i))) {
          if (!as.empty() && !in->empty()) passed_through.emplace_back(*in, as);
          continue;
        }
        if (as.empty()) as = unique(formals.Get(i));
      }
      renaming_.bind(formals.Get(i), std::move(as));
    }
    return passed_through;
  }

  void node(NodeProto& n) {
    if (!n.name().empty()) n.set_name(unique(n.name()));
    for (auto& x : *n.mutable_input()) lookup_or_rename(x, false);
    for (auto& y : *n.mutable_output()) lookup_or_rename(y, true);
    for (auto& a : *n.mutable_attribute()) {
      if (a.has_g()) graph(*a.mutable_g());
      for (auto& g : *a.mutable_graphs()) graph(g);
    }
  }

  void lookup_or_rename(std::string& name, bool defines) {
    if (name.empty()) return;
    if (const std::string* to = renaming_.find(name)) {
      name = *to;
      return;
    }
    if (defines) rename(name);  // otherwise an outer name, which stays
  }

 private:
  std::string suffix_;
  Names& names_;
  ir::ScopedRenaming renaming_;

  std::string unique(const std::string& name) { return names_.create(name + suffix_); }
  void rename(std::string& name) {
    std::string fresh = unique(name);
    renaming_.bind(name, fresh);
    name = std::move(fresh);
  }
  void graph(GraphProto& g) {
    renaming_.push();
    for (auto& x : *g.mutable_input()) rename(*x.mutable_name());
    for (auto& t : *g.mutable_initializer()) rename(*t.mutable_name());
    for (auto& y : *g.mutable_output()) rename(*y.mutable_name());
    for (auto& n : *g.mutable_node()) node(n);
    renaming_.pop();
  }
};

class Inliner {
 public:
  // `spent`, if given, takes the call nodes inlined, once inlining is done, instead of their
  // being destroyed.
  Inliner(const FunctionIndex& functions, Names& names, std::vector<std::unique_ptr<NodeProto>>* spent)
      : functions_(functions), names_(names), spent_(spent) {
    for (const auto& [id, f] : functions)
      if (std::find(domains_.begin(), domains_.end(), id.domain) == domains_.end()) domains_.push_back(id.domain);
  }
  ~Inliner() {
    if (spent_) std::move(calls_.begin(), calls_.end(), std::back_inserter(*spent_));
  }
  Inliner(const Inliner&) = delete;
  Inliner& operator=(const Inliner&) = delete;

  void into(NodeList& nodes, ValueInfoList& value_info) {
    // The nodes move by pointer, each the same object in its new place: the names seen so
    // far view their strings. A call stays alive (calls_) until the inlining is done.
    // (A list on an arena would hand out heap copies: slower, the same result.)
    std::vector<NodeProto*> taken(static_cast<size_t>(nodes.size()));
    nodes.ExtractSubrange(0, nodes.size(), taken.data());
    for (NodeProto* n : taken) append(std::unique_ptr<NodeProto>(n), nodes, value_info);
  }

 private:
  const FunctionIndex& functions_;
  Names& names_;
  std::vector<std::unique_ptr<NodeProto>>* spent_;
  int count_ = 0;
  std::vector<std::unique_ptr<NodeProto>> calls_;
  std::vector<std::string_view> domains_;  // of the functions inlined, canonical (views of the index's keys): few

  // The function a node calls, among those inlined. Most nodes are ONNX ops, told apart
  // by their domain before a function id is spelled and looked up.
  const FunctionProto* function_called(const NodeProto& node) const {
    const std::string_view domain = FunctionId::canonical_domain_view(node.domain());
    if (std::find(domains_.begin(), domains_.end(), domain) == domains_.end()) return nullptr;
    auto f = functions_.find(FunctionId::View::of(node));
    return f == functions_.end() ? nullptr : f->second;
  }

  void append(std::unique_ptr<NodeProto> owned, NodeList& nodes, ValueInfoList& value_info) {
    NodeProto& node = *owned;
    const FunctionProto* f = function_called(node);
    if (!f) {
      for (auto& a : *node.mutable_attribute()) {
        if (a.has_g()) into(*a.mutable_g()->mutable_node(), *a.mutable_g()->mutable_value_info());
        for (auto& g : *a.mutable_graphs()) into(*g.mutable_node(), *g.mutable_value_info());
      }
      nodes.AddAllocated(owned.release());
      return;
    }
    calls_.push_back(std::move(owned));
    const FunctionProto& callee = *f;
    AttributeValues values;
    values.reserve(static_cast<size_t>(node.attribute_size()));
    for (const auto& a : node.attribute()) values.push_back(&a);
    // The whole body is renamed before any of it is appended (a call inside it is
    // numbered after this one, when it is appended), as ONNX's inliner does.
    Renamer renamer("__" + std::to_string(++count_), names_);
    renamer.reserve(static_cast<size_t>(callee.input_size() + callee.output_size() + callee.node_size()));
    renamer.bind(callee.input(), node.input(), /*outputs=*/false);
    const auto passed_through = renamer.bind(callee.output(), node.output(), /*outputs=*/true);
    std::vector<std::unique_ptr<NodeProto>> body;
    body.reserve(static_cast<size_t>(callee.node_size()));
    for (const auto& n : callee.node()) {
      body.push_back(std::make_unique<NodeProto>(n));
      bind_attributes(*body.back(), values);
      renamer.node(*body.back());
    }
    ir::NameSet actual;  // (only where the callee declares value_info: most do not)
    if (callee.value_info_size() > 0) {
      for (const auto& x : node.input()) actual.insert_lasting(x);
      for (const auto& x : node.output()) actual.insert_lasting(x);
    }
    for (const auto& vi : callee.value_info()) {
      onnx::ValueInfoProto renamed = vi;
      renamer.lookup_or_rename(*renamed.mutable_name(), false);
      if (!actual.contains(renamed.name())) *value_info.Add() = std::move(renamed);
    }
    for (auto& n : body) append(std::move(n), nodes, value_info);
    for (const auto& [from, to] : passed_through) {
      NodeProto* copy = nodes.Add();
      copy->set_op_type("Identity");
      copy->add_input(from);
      copy->add_output(to);
    }
  }
};

}  // namespace

void inline_selected_functions(onnx::ModelProto& model, const std::vector<std::pair<std::string, std::string>>& selected,
                               std::vector<std::unique_ptr<onnx::NodeProto>>* spent_calls) {
  // Every function must agree with the model (and the others) on each opset's version.
  std::unordered_map<std::string, int64_t> versions;
  auto agree = [&versions](const google::protobuf::RepeatedPtrField<onnx::OperatorSetIdProto>& imports) {
    for (const auto& o : imports) {
      auto [it, fresh] = versions.emplace(FunctionId::canonical_domain(o.domain()), o.version());
      if (!fresh && it->second != o.version()) return false;
    }
    return true;
  };
  agree(model.opset_import());
  FunctionIndex inlined;  // views the functions' strings: the functions stay put until the end
  std::vector<FunctionProto*> kept;
  for (auto& f : *model.mutable_functions()) {
    if (!agree(f.opset_import())) throw std::runtime_error("Model has functions with incompatible opset versions.");
    if (std::find(selected.begin(), selected.end(), std::make_pair(f.domain(), f.name())) != selected.end())
      inlined[impl_id(f)] = &f;
    else
      kept.push_back(&f);
  }
  {
    Names names;
    names.add_graph(model.graph());
    Inliner inliner(inlined, names, spent_calls);
    inliner.into(*model.mutable_graph()->mutable_node(), *model.mutable_graph()->mutable_value_info());
  }
  for (FunctionProto* f : kept) {
    Names names;
    for (const auto& x : f->input()) names.add(x);
    for (const auto& x : f->output()) names.add(x);
    for (const auto& n : f->node()) names.add_node(n);
    Inliner inliner(inlined, names, spent_calls);
    inliner.into(*f->mutable_node(), *f->mutable_value_info());
  }
  // (Decided before any moves: the index views the functions' strings.)
  std::vector<bool> inlined_away;
  for (const auto& f : model.functions()) inlined_away.push_back(inlined.count(impl_id(f)) > 0);
  keep_in_order(*model.mutable_functions(), [&](const FunctionProto&, int i) { return !inlined_away[static_cast<size_t>(i)]; });
}

}  // namespace shapeprop::transform
