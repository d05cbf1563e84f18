// The one place that reads infer::Analyzer's results (its BodyFacts trees and live
// contexts). Lookups by name or by node are indexed once per context, on first use.
#include "facts_view.h"

#include <deque>
#include <unordered_map>

#include "infer/analyzer.h"

namespace shapeprop::check {

struct FactsView::Context {
  const infer::Summary* summary = nullptr;
  const infer::CallContext* call = nullptr;  // nullptr for the main graph

  // Indexes of the context's BodyFacts tree, built on first use.
  struct Index {
    std::unordered_map<std::string, Fact> by_name;  // sibling definitions of a name joined
    std::unordered_map<const onnx::GraphProto*, const infer::BodyFacts*> subgraphs;
    std::unordered_map<const onnx::NodeProto*, const infer::CallContext*> calls;
    std::unordered_map<const onnx::NodeProto*, int> branches;
  };
  mutable std::unique_ptr<Index> index;

  const Index& indexed() const {
    if (index) return *index;
    index = std::make_unique<Index>();
    std::vector<const infer::BodyFacts*> work{&summary->facts};
    while (!work.empty()) {
      const infer::BodyFacts* facts = work.back();
      work.pop_back();
      const ir::Body& body = facts->body();
      if (body.graph()) index->subgraphs.emplace(body.graph(), facts);
      for (ir::ValueId v = 0; v < body.num_values(); ++v) {
        const Fact* f = facts->fact(v);
        if (!f) continue;
        auto [it, fresh] = index->by_name.try_emplace(std::string(body.name(v)), *f);
        if (!fresh) it->second = join(it->second, *f);
      }
      const auto nodes = body.nodes();
      for (size_t i = 0; i < nodes.size(); ++i) {
        if (const infer::CallContext* callee = facts->call_of(i)) index->calls.emplace(nodes[i].proto, callee);
        if (facts->branch_of(i) >= 0) index->branches.emplace(nodes[i].proto, facts->branch_of(i));
      }
      for (const auto& s : facts->subgraphs()) work.push_back(s.get());
    }
    return *index;
  }
};

struct FactsView::Impl {
  infer::Analyzer analysis;
  Context main;
  std::deque<Context> contexts;
  std::unordered_map<const infer::CallContext*, const Context*> by_call;
  std::unordered_map<const onnx::FunctionProto*, std::vector<const Context*>> by_function;
  const std::vector<const Context*> none;

  Impl(const onnx::ModelProto& model, const CallGraph& calls, const InferOptions& options)
      : analysis(model, calls, options) {
    analysis.run();
    main.summary = &analysis.graph();
    for (const auto& [function, live] : analysis.live_contexts()) {
      auto& list = by_function[function];
      for (const infer::CallContext* call : live) {
        contexts.push_back({&analysis.summary(*call), call, nullptr});
        by_call[call] = &contexts.back();
        list.push_back(&contexts.back());
      }
    }
  }
};

FactsView::FactsView(const onnx::ModelProto& model, const CallGraph& calls, const InferOptions& options)
    : impl_(std::make_unique<Impl>(model, calls, options)) {}

FactsView::~FactsView() = default;

const FactsView::Context& FactsView::main() const { return impl_->main; }

const std::vector<const FactsView::Context*>& FactsView::contexts_of(const onnx::FunctionProto& f) const {
  auto it = impl_->by_function.find(&f);
  return it == impl_->by_function.end() ? impl_->none : it->second;
}

const Fact* FactsView::fact(const Context& c, const std::string& name) const {
  const auto& by_name = c.indexed().by_name;
  auto it = by_name.find(name);
  return it == by_name.end() ? nullptr : &it->second;
}

const Fact* FactsView::fact(const Context& c, const onnx::GraphProto& subgraph, const std::string& name) const {
  const auto& subgraphs = c.indexed().subgraphs;
  auto g = subgraphs.find(&subgraph);
  if (g == subgraphs.end()) return nullptr;
  const ir::ValueId v = g->second->body().find(name);
  return v == ir::kNoValue ? nullptr : g->second->fact(v);
}

const FactsView::Context* FactsView::callee(const Context& c, const onnx::NodeProto& call) const {
  const auto& calls = c.indexed().calls;
  auto it = calls.find(&call);
  if (it == calls.end()) return nullptr;
  auto found = impl_->by_call.find(it->second);
  return found == impl_->by_call.end() ? nullptr : found->second;
}

std::optional<int> FactsView::taken_branch(const Context& c, const onnx::NodeProto& if_node) const {
  const auto& branches = c.indexed().branches;
  auto it = branches.find(&if_node);
  if (it == branches.end()) return std::nullopt;
  return it->second;
}

const std::vector<Fact>& FactsView::outputs(const Context& c) const { return c.summary->outputs; }

std::string FactsView::describe(const Context& c) const { return c.call ? c.call->str() : std::string(); }

Diagnostics FactsView::take_diagnostics() { return impl_->analysis.take_diagnostics(); }

}  // namespace shapeprop::check
