// The one place that reads infer::Analyzer's results (its Summary maps and live contexts).
#include "facts_view.h"

#include <deque>
#include <unordered_map>

#include "infer/analyzer.h"

namespace shapeprop::check {

struct FactsView::Context {
  const infer::Summary* summary = nullptr;
  const infer::CallContext* call = nullptr;  // nullptr for the main graph
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
        contexts.push_back({&analysis.summary(*call), call});
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
  auto it = c.summary->values.find(name);
  return it == c.summary->values.end() ? nullptr : &it->second;
}

const Fact* FactsView::fact(const Context& c, const onnx::GraphProto& subgraph, const std::string& name) const {
  auto g = c.summary->subgraph_values.find(&subgraph);
  if (g == c.summary->subgraph_values.end()) return nullptr;
  auto it = g->second.find(name);
  return it == g->second.end() ? nullptr : &it->second;
}

const FactsView::Context* FactsView::callee(const Context& c, const onnx::NodeProto& call) const {
  auto it = c.summary->call_of.find(&call);
  if (it == c.summary->call_of.end()) return nullptr;
  auto found = impl_->by_call.find(it->second);
  return found == impl_->by_call.end() ? nullptr : found->second;
}

std::optional<int> FactsView::taken_branch(const Context& c, const onnx::NodeProto& if_node) const {
  auto it = c.summary->branch_of.find(&if_node);
  if (it == c.summary->branch_of.end()) return std::nullopt;
  return it->second;
}

const std::vector<Fact>& FactsView::outputs(const Context& c) const { return c.summary->outputs; }

std::string FactsView::describe(const Context& c) const { return c.call ? c.call->str() : std::string(); }

Diagnostics FactsView::take_diagnostics() { return impl_->analysis.take_diagnostics(); }

}  // namespace shapeprop::check
