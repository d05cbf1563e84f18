#include "infer/analysis_record.h"

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

void merge_assumptions(std::vector<AssumptionUse>& into, const std::vector<AssumptionUse>& more) {
  std::set<std::vector<std::string>> places;
  for (const auto& u : into) places.insert(u.call_path);
  for (const auto& u : more)
    if (places.insert(u.call_path).second) into.push_back(u);
}

void record_assumptions(onnx::ModelProto& model, const std::vector<AssumptionUse>& uses,
                        const std::map<std::string, DimRange>& ranges) {
  std::vector<std::string> wanted;
  if (!uses.empty()) wanted.push_back(kPositiveDimsAssumption);
  for (const auto& [name, range] : ranges) wanted.push_back(range_assumption(name, range));
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
