#include "infer/analysis_record.h"

#include "infer/declared_type.h"

#include <algorithm>
#include <set>
#include <unordered_map>
#include <unordered_set>

namespace shapeprop::infer {

std::vector<FunctionContexts> describe_contexts(const Analyzer& analysis) {
  // The call nodes that call each context, from every walk the final analysis keeps.
  std::unordered_map<const CallContext*, std::unordered_set<const onnx::NodeProto*>> callers;
  std::vector<const BodyFacts*> work{&analysis.graph().facts};
  for (const auto& [f, contexts] : analysis.live_contexts())
    for (const CallContext* c : contexts) work.push_back(&analysis.summary(*c).facts);
  while (!work.empty()) {
    const BodyFacts* facts = work.back();
    work.pop_back();
    const auto nodes = facts->body().nodes();
    for (size_t i = 0; i < nodes.size(); ++i)
      if (const CallContext* c = facts->call_of(i); c && nodes[i].kind == ir::NodeKind::Call)
        callers[c].insert(nodes[i].proto);
    for (const auto& s : facts->subgraphs()) work.push_back(s.get());
  }
  std::vector<FunctionContexts> out;
  for (const auto& [f, contexts] : analysis.live_contexts()) {
    FunctionContexts entry;
    entry.function = FunctionId::of(*f).str();
    for (const CallContext* c : contexts) {
      auto it = callers.find(c);
      entry.contexts.push_back({c->str(), it == callers.end() ? 0 : it->second.size(), {}});
    }
    out.push_back(std::move(entry));
  }
  return out;
}

namespace {

// The lines of one walk of one body, then those of the subgraphs it entered.
class ShapeLister {
 public:
  ShapeLister(DimTexts& texts, std::vector<ValueShape>& out) : texts_(texts), out_(out) {}

  void body(const BodyFacts& facts, const std::string& scope, const std::string& context) {
    const ir::Body& b = facts.body();
    for (ir::ValueId v : b.inputs()) add(facts, scope, context, "input", "", v);
    for (const auto& node : b.nodes()) {
      const onnx::NodeProto& n = *node.proto;
      const std::string op = n.domain().empty() || n.domain() == "ai.onnx" ? n.op_type() : n.domain() + "." + n.op_type();
      for (ir::ValueId v : b.outputs_of(node))
        if (v != ir::kNoValue) add(facts, scope, context, op, n.name(), v);
    }
    for (const auto& sub : facts.subgraphs()) body(*sub, scope + " / " + owner(b, sub->body().graph()), context);
  }

 private:
  void add(const BodyFacts& facts, const std::string& scope, const std::string& context, const std::string& op,
           const std::string& node, ir::ValueId v) {
    const Fact* fact = facts.fact(v);
    std::string type = "?";
    if (fact) type = type_text(texts_.type_of(*fact));
    out_.push_back({scope, context, op, node, std::string(facts.body().name(v)), std::move(type)});
  }

  // "If 'n' then_branch": the node of `parent` whose attribute holds `g`.
  static std::string owner(const ir::Body& parent, const onnx::GraphProto* g) {
    for (const auto& node : parent.nodes())
      for (const auto& a : node.proto->attribute()) {
        bool holds = a.has_g() && &a.g() == g;
        for (const auto& each : a.graphs()) holds = holds || &each == g;
        if (!holds) continue;
        const std::string& name = node.proto->name();
        return node.proto->op_type() + (name.empty() ? std::string() : " '" + name + "'") + " " + a.name();
      }
    return "graph '" + (g ? g->name() : std::string()) + "'";
  }

  DimTexts& texts_;
  std::vector<ValueShape>& out_;
};

}  // namespace

std::vector<ValueShape> describe_shapes(const Analyzer& analysis, DimTexts& texts) {
  std::vector<ValueShape> out;
  ShapeLister list(texts, out);
  const BodyFacts& main = analysis.graph().facts;
  const onnx::GraphProto* g = main.body().graph();
  list.body(main, "graph '" + (g ? g->name() : std::string()) + "'", "");
  // live_contexts() is bottom-up: callers first reads top-down.
  const auto& live = analysis.live_contexts();
  for (auto it = live.rbegin(); it != live.rend(); ++it)
    for (const CallContext* c : it->second)
      list.body(analysis.summary(*c).facts, "function '" + FunctionId::of(*it->first).str() + "'", c->str());
  return out;
}

void merge_assumptions(std::vector<AssumptionUse>& into, const std::vector<AssumptionUse>& more) {
  std::set<std::pair<std::vector<std::string>, std::string>> places;
  for (const auto& u : into) places.insert({u.call_path, u.condition});
  for (const auto& u : more)
    if (places.insert({u.call_path, u.condition}).second) into.push_back(u);
}

std::vector<std::string> trusted_items(const InferResult& result) {
  std::vector<std::string> items;
  if (!result.declared_uses.empty()) items.push_back(kDeclaredTypesAssumption);
  if (!result.initializer_values_read.empty()) items.push_back(kInitializerValuesAssumption);
  return items;
}

void record_assumptions(onnx::ModelProto& model, const std::vector<AssumptionUse>& uses,
                        const std::map<std::string, DimRange>& ranges, const std::vector<std::string>& trusted) {
  std::vector<std::string> wanted;
  if (!uses.empty()) wanted.push_back(kPositiveDimsAssumption);
  for (const auto& u : uses)  // each condition once, in the order first met
    if (!u.condition.empty() && std::find(wanted.begin(), wanted.end(), u.condition) == wanted.end())
      wanted.push_back(u.condition);
  for (const auto& [name, range] : ranges) wanted.push_back(range_assumption(name, range));
  wanted.insert(wanted.end(), trusted.begin(), trusted.end());
  if (wanted.empty()) return;
  onnx::StringStringEntryProto* entry = nullptr;
  for (auto& e : *model.mutable_metadata_props())
    if (e.key() == kAssumptionsKey) entry = &e;
  if (!entry) {
    entry = model.add_metadata_props();
    entry->set_key(kAssumptionsKey);
  }
  // Each assumption once, as a whole item of the "; "-separated list.
  std::string value = entry->value();
  auto items = [&value] {
    std::vector<std::string> out;
    for (size_t at = 0; at <= value.size();) {
      size_t end = value.find("; ", at);
      if (end == std::string::npos) end = value.size();
      out.push_back(value.substr(at, end - at));
      at = end + 2;
    }
    return out;
  };
  for (const auto& w : wanted) {
    const auto have = items();
    if (std::find(have.begin(), have.end(), w) == have.end()) value += (value.empty() ? "" : "; ") + w;
  }
  entry->set_value(value);
}

}  // namespace shapeprop::infer
