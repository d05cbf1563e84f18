#include "infer/analysis_record.h"

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

void merge_assumptions(std::vector<AssumptionUse>& into, const std::vector<AssumptionUse>& more) {
  std::set<std::vector<std::string>> places;
  for (const auto& u : into) places.insert(u.call_path);
  for (const auto& u : more)
    if (places.insert(u.call_path).second) into.push_back(u);
}

void record_assumptions(onnx::ModelProto& model, const std::vector<AssumptionUse>& uses) {
  if (uses.empty()) return;
  for (auto& entry : *model.mutable_metadata_props()) {
    if (entry.key() != kAssumptionsKey) continue;
    if (entry.value().find(kPositiveDimsAssumption) == std::string::npos)
      entry.set_value(entry.value().empty() ? kPositiveDimsAssumption : entry.value() + "; " + kPositiveDimsAssumption);
    return;
  }
  auto* entry = model.add_metadata_props();
  entry->set_key(kAssumptionsKey);
  entry->set_value(kPositiveDimsAssumption);
}

}  // namespace shapeprop::infer
