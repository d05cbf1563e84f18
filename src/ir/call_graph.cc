#include "shapeprop/call_graph.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

#include "support/subgraphs.h"
#include <utility>

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/strong_components.hpp>

namespace shapeprop {

namespace {

struct Calls {
  std::size_t sites = 0;  // call nodes behind this edge
};

// Vertex 0 is the main graph; vertices 1..n are the functions sorted by FunctionId, so
// vertex order is FunctionId order and every tie below is broken by the smaller vertex.
// Edges are added callee by callee in ascending order, so out-edges iterate in that order.
using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS, boost::no_property, Calls>;
using Vertex = Graph::vertex_descriptor;
constexpr Vertex kMain = 0;

using Nodes = google::protobuf::RepeatedPtrField<onnx::NodeProto>;
using VertexOf = std::unordered_map<FunctionId, Vertex, FunctionId::Hash, FunctionId::Equal>;

std::string plural(std::size_t n, const char* word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

}  // namespace

struct CallGraph::Impl {
  Graph graph;
  std::string main_name;
  std::vector<const onnx::FunctionProto*> function;  // by vertex; [kMain] is kMainGraph
  std::vector<FunctionId> id;                        // by vertex; [kMain] is unused
  VertexOf vertex_of;
  std::unordered_map<const onnx::FunctionProto*, Vertex> vertex_of_proto;
  std::vector<bool> reachable;   // by vertex, from the main graph
  std::vector<Vertex> bottom_up;  // reachable functions, callees first
  std::size_t call_sites = 0;
  bool default_domain = false;  // a function is in ONNX's default domain

  // The function a node calls, or none. Asked of every node, most of which are ONNX ops:
  // told apart by their domain before an id is hashed.
  std::optional<Vertex> callee(const onnx::NodeProto& node) const {
    if (!default_domain && FunctionId::is_default_domain(node.domain())) return std::nullopt;
    auto it = vertex_of.find(FunctionId::View::of(node));
    return it == vertex_of.end() ? std::nullopt : std::optional<Vertex>(it->second);
  }
  // Counts, per callee, the calls in `body` and in every subgraph below it, to any depth.
  void count_calls(const Nodes& body, std::map<Vertex, std::size_t>& sites) const;

  std::string label(Vertex v) const { return v == kMain ? "graph '" + main_name + "'" : id[v].str(); }
  std::vector<Call> calls(Vertex v, bool outgoing) const;
  std::vector<Vertex> recursive_cycle() const;
  std::vector<Vertex> topological_order() const;
};

void CallGraph::Impl::count_calls(const Nodes& body, std::map<Vertex, std::size_t>& sites) const {
  std::vector<const Nodes*> work = {&body};
  while (!work.empty()) {
    const Nodes* nodes = work.back();
    work.pop_back();
    for (const auto& node : *nodes) {
      if (auto v = callee(node)) ++sites[*v];
      for_each_subgraph(node, [&work](const onnx::GraphProto& g) { work.push_back(&g.node()); });
    }
  }
}

// The cycle through the smallest recursive function, shortest first and, among equally
// short ones, by smallest next callee (breadth-first search over sorted out-edges).
// Returns it with the start repeated at the end, or nothing if no function is recursive.
std::vector<Vertex> CallGraph::Impl::recursive_cycle() const {
  const std::size_t n = boost::num_vertices(graph);
  std::vector<std::size_t> component(n);
  boost::strong_components(graph, boost::make_iterator_property_map(component.begin(),
                                                                    boost::get(boost::vertex_index, graph)));
  std::vector<std::size_t> component_size(n, 0);
  for (std::size_t c : component) ++component_size[c];

  for (Vertex start = 1; start < n; ++start) {
    if (component_size[component[start]] == 1 && !boost::edge(start, start, graph).second) continue;
    std::vector<Vertex> parent(n, n);  // n: not yet seen
    std::vector<Vertex> queue = {start};
    for (std::size_t i = 0; i < queue.size(); ++i) {
      for (auto e : boost::make_iterator_range(boost::out_edges(queue[i], graph))) {
        Vertex to = boost::target(e, graph);
        if (to == start) {  // closed the cycle: walk the parents back to the start
          std::vector<Vertex> cycle = {start};
          for (Vertex v = queue[i]; v != start; v = parent[v]) cycle.push_back(v);
          cycle.push_back(start);
          std::reverse(cycle.begin(), cycle.end());
          return cycle;
        }
        if (component[to] == component[start] && parent[to] == n) {
          parent[to] = queue[i];
          queue.push_back(to);
        }
      }
    }
  }
  return {};
}

// Kahn's algorithm over the reachable functions, always taking the smallest ready vertex.
// Only called once recursion is ruled out, so every reachable function gets listed.
std::vector<Vertex> CallGraph::Impl::topological_order() const {
  std::vector<std::size_t> pending(boost::num_vertices(graph), 0);  // callees not yet listed
  std::set<Vertex> ready;
  for (Vertex v = 1; v < pending.size(); ++v) {
    if (!reachable[v]) continue;
    pending[v] = boost::out_degree(v, graph);
    if (pending[v] == 0) ready.insert(v);
  }
  std::vector<Vertex> order;
  while (!ready.empty()) {
    Vertex v = *ready.begin();
    ready.erase(ready.begin());
    order.push_back(v);
    for (auto e : boost::make_iterator_range(boost::in_edges(v, graph))) {
      Vertex caller = boost::source(e, graph);
      if (caller != kMain && reachable[caller] && --pending[caller] == 0) ready.insert(caller);
    }
  }
  return order;
}

std::vector<CallGraph::Call> CallGraph::Impl::calls(Vertex v, bool outgoing) const {
  // build() adds edges caller by caller, each caller's callees ascending, so both edge
  // lists are already in vertex (= FunctionId) order.
  std::vector<Call> out;
  if (outgoing) {
    for (auto e : boost::make_iterator_range(boost::out_edges(v, graph)))
      out.push_back({function[boost::target(e, graph)], graph[e].sites});
  } else {
    for (auto e : boost::make_iterator_range(boost::in_edges(v, graph)))
      out.push_back({function[boost::source(e, graph)], graph[e].sites});
  }
  return out;
}

Result<CallGraph> CallGraph::build(const onnx::ModelProto& model) {
  auto impl = std::make_shared<Impl>();
  impl->main_name = model.graph().name();

  // First definitions only (std::map::emplace keeps the first), sorted by id.
  std::map<FunctionId, const onnx::FunctionProto*> defined;
  for (const auto& f : model.functions()) defined.emplace(FunctionId::of(f), &f);
  impl->function = {kMainGraph};
  impl->id = {FunctionId()};
  for (const auto& [id, f] : defined) {
    impl->vertex_of.emplace(id, impl->function.size());
    impl->vertex_of_proto.emplace(f, impl->function.size());
    impl->function.push_back(f);
    impl->id.push_back(id);
  }
  impl->vertex_of_proto.emplace(kMainGraph, kMain);

  for (const auto& [id, f] : defined) impl->default_domain = impl->default_domain || id.domain.empty();
  Graph& graph = impl->graph = Graph(impl->function.size());
  for (Vertex caller = 0; caller < impl->function.size(); ++caller) {
    std::map<Vertex, std::size_t> sites;  // by callee, sorted
    if (caller == kMain) {
      // (A model without functions has no calls: after inlining, the rounds' models.)
      if (!defined.empty()) impl->count_calls(model.graph().node(), sites);
    } else {
      const onnx::FunctionProto& f = *impl->function[caller];
      impl->count_calls(f.node(), sites);
      // Graph-valued attribute defaults are part of the function too.
      for (const auto& a : f.attribute_proto()) {
        if (a.has_g()) impl->count_calls(a.g().node(), sites);
        for (const auto& g : a.graphs()) impl->count_calls(g.node(), sites);
      }
    }
    for (const auto& [callee, count] : sites) {
      boost::add_edge(caller, callee, Calls{count}, graph);
      impl->call_sites += count;
    }
  }

  // Recursion first: nothing else is meaningful on a cyclic graph.
  if (auto cycle = impl->recursive_cycle(); !cycle.empty()) {
    std::string path;
    for (Vertex v : cycle) path += (path.empty() ? "" : " -> ") + impl->id[v].str();
    Diagnostic d = Diagnostic::error("model-local function " + impl->id[cycle.front()].str() +
                                     " is directly or indirectly recursive: " + path);
    d.call_path = {"function " + impl->id[cycle.front()].str()};
    return d;
  }

  impl->reachable.assign(impl->function.size(), false);
  impl->reachable[kMain] = true;
  std::vector<Vertex> work = {kMain};
  while (!work.empty()) {
    Vertex v = work.back();
    work.pop_back();
    for (auto e : boost::make_iterator_range(boost::out_edges(v, graph))) {
      Vertex to = boost::target(e, graph);
      if (!impl->reachable[to]) {
        impl->reachable[to] = true;
        work.push_back(to);
      }
    }
  }
  impl->bottom_up = impl->topological_order();
  return CallGraph(std::move(impl));
}

const onnx::FunctionProto* CallGraph::find(const FunctionId& id) const {
  auto it = impl_->vertex_of.find(id);
  return it == impl_->vertex_of.end() ? nullptr : impl_->function[it->second];
}

const onnx::FunctionProto* CallGraph::find(const onnx::NodeProto& call) const {
  const auto v = impl_->callee(call);
  return v ? impl_->function[*v] : nullptr;
}

std::vector<const onnx::FunctionProto*> CallGraph::bottom_up() const {
  std::vector<const onnx::FunctionProto*> out;
  for (Vertex v : impl_->bottom_up) out.push_back(impl_->function[v]);
  return out;
}

std::vector<const onnx::FunctionProto*> CallGraph::unreachable() const {
  std::vector<const onnx::FunctionProto*> out;
  for (Vertex v = 1; v < impl_->function.size(); ++v)
    if (!impl_->reachable[v]) out.push_back(impl_->function[v]);
  return out;
}

std::size_t CallGraph::size() const { return impl_->function.size() - 1; }

std::size_t CallGraph::call_sites() const { return impl_->call_sites; }

std::vector<CallGraph::Call> CallGraph::callees(const onnx::FunctionProto* caller) const {
  auto it = impl_->vertex_of_proto.find(caller);
  return it == impl_->vertex_of_proto.end() ? std::vector<Call>() : impl_->calls(it->second, /*outgoing=*/true);
}

std::vector<CallGraph::Call> CallGraph::callers(const onnx::FunctionProto& callee) const {
  auto it = impl_->vertex_of_proto.find(&callee);
  return it == impl_->vertex_of_proto.end() ? std::vector<Call>() : impl_->calls(it->second, /*outgoing=*/false);
}

std::string CallGraph::print() const {
  const Impl& g = *impl_;
  const auto lost = unreachable();
  std::string s = "call graph: " + plural(size(), "function") + ", " + std::to_string(size() - lost.size()) +
                  " reachable, " + plural(call_sites(), "call site") + "\n";
  for (Vertex v = 0; v < g.function.size(); ++v) {
    s += "  " + g.label(v) + " ->";
    const auto calls = g.calls(v, /*outgoing=*/true);
    if (calls.empty()) s += " (none)";
    for (std::size_t i = 0; i < calls.size(); ++i)
      s += (i ? ", " : " ") + FunctionId::of(*calls[i].function).str() + " (x" + std::to_string(calls[i].sites) + ")";
    s += "\n";
  }
  if (!lost.empty()) {
    s += "  unreachable:";
    for (std::size_t i = 0; i < lost.size(); ++i) s += (i ? ", " : " ") + FunctionId::of(*lost[i]).str();
    s += "\n";
  }
  return s;
}

}  // namespace shapeprop
