// Static nesting depths; see depth.h.
#include "ir/depth.h"

#include <string>
#include <unordered_map>
#include <vector>

#include "shapeprop/function_id.h"
#include "support/labels.h"

namespace shapeprop {

namespace {

using Nodes = google::protobuf::RepeatedPtrField<onnx::NodeProto>;

// A graph or function body, or one subgraph inside it.
struct Place {
  const Nodes* nodes;
  size_t level;                      // subgraph level within the body; 0 for the body
  int parent;                        // the enclosing place; -1 for the body
  const onnx::NodeProto* owner;      // the node holding this subgraph
  const std::string* attribute;      // and its attribute
};

struct CallSite {
  size_t callee;  // body index
  size_t level;   // subgraph level of the calling node
  int place;      // where the calling node stands
  const onnx::NodeProto* node;
};

// One graph or function body with what it nests and calls, and (once measured) its depths
// along the deepest paths that start at it.
struct Body {
  std::string label;
  std::vector<Place> places;
  int deepest = 0;  // the place with the highest level
  std::vector<CallSite> calls;
  Depths depths;
  int subgraphs_via = -1;  // the call the deepest subgraph path goes through; -1: none
  int calls_via = -1;      // the first call of the longest chain; -1: none
};

class DepthMeter {
 public:
  explicit DepthMeter(const onnx::ModelProto& model) {
    Index index;
    bodies_.resize(1 + static_cast<size_t>(model.functions_size()));
    for (int i = 0; i < model.functions_size(); ++i) {
      auto id = FunctionId::of(model.functions(i));
      index.default_domain = index.default_domain || id.domain.empty();
      index.ids.emplace(std::move(id), static_cast<size_t>(i) + 1);  // the first definition
    }
    bodies_[0].label = "graph '" + model.graph().name() + "'";
    map_places(bodies_[0], model.graph().node(), index);
    for (int i = 0; i < model.functions_size(); ++i) {
      const auto& f = model.functions(i);
      Body& b = bodies_[static_cast<size_t>(i) + 1];
      b.label = "function " + FunctionId::of(f).str();
      map_places(b, f.node(), index);
    }
    measure();
  }

  size_t size() const { return bodies_.size(); }
  const Depths& depths(size_t body) const { return bodies_[body].depths; }

  // The deepest subgraph path from `body`, or its longest call chain: graph and function
  // labels, nodes and attributes, outermost first.
  std::vector<std::string> path(size_t body, bool subgraphs) const {
    std::vector<std::string> out;
    for (size_t at = body;;) {
      const Body& b = bodies_[at];
      out.push_back(b.label);
      const int via = subgraphs ? b.subgraphs_via : b.calls_via;
      if (via < 0) {
        if (subgraphs) append_local(out, b, b.deepest);
        return out;
      }
      const CallSite& c = b.calls[static_cast<size_t>(via)];
      append_local(out, b, c.place);
      out.push_back(node_label(*c.node));
      at = c.callee;
    }
  }

 private:
  enum State { Unseen, Open, Done };
  std::vector<Body> bodies_;

  // The functions by id; most nodes of an exported model are ONNX ops, told apart by
  // their domain before any lookup.
  struct Index {
    std::unordered_map<FunctionId, size_t, FunctionId::Hash, FunctionId::Equal> ids;
    bool default_domain = false;  // a function is in ONNX's default domain
    const size_t* find(const onnx::NodeProto& n) const {
      if (!default_domain && FunctionId::is_default_domain(n.domain())) return nullptr;
      auto it = ids.find(FunctionId::View::of(n));
      return it == ids.end() ? nullptr : &it->second;
    }
  };

  static void map_places(Body& b, const Nodes& nodes, const Index& index) {
    b.places.push_back({&nodes, 0, -1, nullptr, nullptr});
    for (size_t i = 0; i < b.places.size(); ++i) {  // places grows as subgraphs are found
      const Nodes* here = b.places[i].nodes;
      const size_t level = b.places[i].level;
      if (level > b.places[static_cast<size_t>(b.deepest)].level) b.deepest = static_cast<int>(i);
      for (const auto& n : *here) {
        if (const size_t* callee = index.find(n)) b.calls.push_back({*callee, level, static_cast<int>(i), &n});
        for (const auto& a : n.attribute()) {
          if (a.has_g()) b.places.push_back({&a.g().node(), level + 1, static_cast<int>(i), &n, &a.name()});
          for (const auto& g : a.graphs()) b.places.push_back({&g.node(), level + 1, static_cast<int>(i), &n, &a.name()});
        }
      }
    }
  }

  // Bodies after their callees (post-order, with an explicit stack); a call back into a
  // body still being measured (recursion) counts as ending there.
  void measure() {
    std::vector<State> state(bodies_.size(), Unseen);
    for (size_t root = 0; root < bodies_.size(); ++root) {
      if (state[root] != Unseen) continue;
      std::vector<std::pair<size_t, size_t>> stack = {{root, 0}};  // (body, next call to visit)
      state[root] = Open;
      while (!stack.empty()) {
        auto& [at, next] = stack.back();
        Body& b = bodies_[at];
        if (next < b.calls.size()) {
          const size_t callee = b.calls[next++].callee;
          if (state[callee] == Unseen) {
            state[callee] = Open;
            stack.push_back({callee, 0});
          }
          continue;
        }
        finish(b, state);
        state[at] = Done;
        stack.pop_back();
      }
    }
  }

  void finish(Body& b, const std::vector<State>& state) {
    b.depths.subgraphs = b.places[static_cast<size_t>(b.deepest)].level;
    for (size_t k = 0; k < b.calls.size(); ++k) {
      const CallSite& c = b.calls[k];
      // A callee still open is a cycle, which ends here.
      const Depths below = state[c.callee] == Done ? bodies_[c.callee].depths : Depths{};
      if (c.level + below.subgraphs > b.depths.subgraphs) {
        b.depths.subgraphs = c.level + below.subgraphs;
        b.subgraphs_via = static_cast<int>(k);
      }
      if (1 + below.calls > b.depths.calls) {
        b.depths.calls = 1 + below.calls;
        b.calls_via = static_cast<int>(k);
      }
    }
  }

  // The nodes and attributes from a body down to one of its places.
  static void append_local(std::vector<std::string>& out, const Body& b, int place) {
    std::vector<std::string> reversed;
    for (int p = place; p >= 0 && b.places[static_cast<size_t>(p)].owner; p = b.places[static_cast<size_t>(p)].parent) {
      const Place& here = b.places[static_cast<size_t>(p)];
      reversed.push_back("attribute '" + *here.attribute + "'");
      reversed.push_back(node_label(*here.owner));
    }
    out.insert(out.end(), reversed.rbegin(), reversed.rend());
  }
};

}  // namespace

Depths model_depths(const onnx::ModelProto& model) { return DepthMeter(model).depths(0); }

Diagnostics check_depths(const onnx::ModelProto& model, std::string_view origin, const Limits& limits) {
  const DepthMeter meter(model);
  Diagnostics found;
  auto report = [&](size_t body, bool subgraphs, std::string message) {
    Diagnostic d = Diagnostic::error(std::move(message)).in_file(std::string(origin));
    d.call_path = meter.path(body, subgraphs);
    found.push_back(std::move(d));
  };
  // The main graph first, then each function: one error per limit, for the first body
  // (in that order) that passes it.
  for (size_t body = 0; body < meter.size(); ++body) {
    const size_t depth = meter.depths(body).subgraphs;
    if (depth <= limits.max_subgraph_depth) continue;
    report(body, true,
           "subgraphs are nested " + std::to_string(depth) + " deep, counting those in called functions; the limit is " +
               std::to_string(limits.max_subgraph_depth) + " (--max-subgraph-depth)");
    break;
  }
  for (size_t body = 0; body < meter.size(); ++body) {
    const size_t depth = meter.depths(body).calls;
    if (depth <= limits.max_call_depth) continue;
    report(body, false,
           "calls are nested " + std::to_string(depth) + " deep; the limit is " + std::to_string(limits.max_call_depth) +
               " (--max-call-depth)");
    break;
  }
  return found;
}

}  // namespace shapeprop
