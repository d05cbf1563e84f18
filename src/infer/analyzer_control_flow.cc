// The analysis's control flow: If (only the taken branch when the condition is known),
// Loop and Scan (loop-carried facts generalised until stable) (analyzer_impl.h).
#include <algorithm>
#include <span>
#include <unordered_map>

#include "infer/analyzer_impl.h"
#include "support/subgraphs.h"

namespace shapeprop::infer {

std::vector<Fact> Analyzer::Impl::call_if(const NodeProto& n, size_t index, const std::vector<const Fact*>& inputs, Frame& frame,
                          const PathLink* path) {
  const GraphProto* then_graph = graph_attribute(n, "then_branch", frame.attributes);
  const GraphProto* else_graph = graph_attribute(n, "else_branch", frame.attributes);
  if (!then_graph || !else_graph) {
    report(frame, path, Severity::Error, "If needs then_branch and else_branch graphs");
    return {};
  }
  std::optional<int64_t> cond = !inputs.empty() && inputs[0] ? inputs[0]->scalar_int() : std::nullopt;
  if (cond) {
    const bool take_then = *cond != 0;
    frame.facts->set_branch(index, take_then ? 0 : 1);
    const PathLink branch = link(path, take_then ? "then_branch" : "else_branch");
    auto out = walk_subgraph(take_then ? *then_graph : *else_graph, frame, {}, &branch);
    if (frame.failed) {
      // Within a dead branch's walk (withhold_dead_branch_reads), as ONNX's checker infers
      // it: both branches of an If, decided or not (a fuzz finding: a Concat of scalars two
      // decided Ifs deep in a dead branch).
      const PathLink untaken = link(path, take_then ? "else_branch" : "then_branch");
      (void)walk_subgraph(take_then ? *else_graph : *then_graph, frame, {}, &untaken);
    } else if (!frame.speculative && frame.declared == &declared_graph) {
      const PathLink untaken = link(path, take_then ? "else_branch" : "then_branch");
      withhold_dead_branch_reads(take_then ? *else_graph : *then_graph, frame, &untaken);
    }
    return out;
  }
  const PathLink then_link = link(path, "then_branch");
  const PathLink else_link = link(path, "else_branch");
  auto a = walk_subgraph(*then_graph, frame, {}, &then_link);
  auto b = walk_subgraph(*else_graph, frame, {}, &else_link);
  std::vector<Fact> out;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) out.push_back(join(a[i], b[i]));
  return out;
}

void Analyzer::Impl::withhold_dead_branch_reads(const GraphProto& g, Frame& frame, const PathLink* path) {
  bool failed = false;
  {
    SpeculativeFrame scratch(frame);
    scratch.frame.iterating = frame.iterating;
    scratch.frame.failed = &failed;
    walk_subgraph(g, scratch.frame, {}, path);
  }
  if (!failed) return;
  // The values of this body and the bodies around it that the branch, or a subgraph in
  // it, reads (an operand `depth` levels out of a body `level` levels below `frame`), and
  // what they are computed from: left untyped, a value ONNX's inference could type again
  // from a typed input of its node (the fuzz finding's Neg of a Loop's [1]).
  std::vector<std::string> names;
  // The node computing each value of a body, indexed on first use (this runs only where a
  // dead branch fails).
  std::unordered_map<const ir::Body*, std::vector<const ir::Body::Node*>> producers;
  auto producer = [&producers](const ir::Body& body, ir::ValueId id) -> const ir::Body::Node* {
    auto [it, fresh] = producers.try_emplace(&body);
    if (fresh) {
      it->second.assign(body.num_values(), nullptr);
      for (const auto& node : body.nodes())
        for (ir::ValueId v : body.outputs_of(node))
          if (v != ir::kNoValue) it->second[v] = &node;
    }
    return it->second[id];
  };
  // Each value withheld with the node that computes it (nullptr: a formal input).
  std::vector<std::pair<const Frame*, const ir::Body::Node*>> withheld;
  auto withhold = [&](const Frame& owner, ir::ValueId id) {
    if (owner.facts->withheld(id) || !owner.facts->fact(id)) return;
    // A Constant's output ONNX's inference types from its value all the same.
    const ir::Body::Node* made_by = producer(*owner.body, id);
    if (made_by && std::string_view(made_by->proto->op_type()) == "Constant" &&
        FunctionId::is_default_domain(made_by->proto->domain()))
      return;
    // The main graph's inputs are declared, not written: nothing to withhold.
    const auto main_inputs = owner.outer ? std::span<const ir::ValueId>() : owner.body->inputs();
    if (std::find(main_inputs.begin(), main_inputs.end(), id) != main_inputs.end()) return;
    owner.facts->withhold(id);
    names.push_back("'" + std::string(owner.body->name(id)) + "'");
    withheld.emplace_back(&owner, made_by);
  };
  struct Item {
    const GraphProto* graph;
    const ir::Body* parent;
    uint32_t level;
  };
  std::vector<Item> work{{&g, frame.body, 1}};
  auto mark = [&](const ir::Operand& op, uint32_t level) {
    if (!op.resolved() || op.omitted() || op.depth < level) return;
    withhold(frame.at_depth(op.depth - level), op.id);
  };
  while (!work.empty()) {
    const Item item = work.back();
    work.pop_back();
    const ir::Body& body = bodies.of(*item.graph, item.parent);
    for (const auto& node : body.nodes()) {
      for (const ir::Operand& op : body.inputs_of(node)) mark(op, item.level);
      for_each_subgraph(*node.proto, [&](const GraphProto& sg) { work.push_back({&sg, &body, item.level + 1}); });
    }
    for (const ir::Operand& op : body.outputs()) mark(op, item.level);
  }
  // Backwards from each value withheld to the inputs of the node that computes it.
  for (size_t k = 0; k < withheld.size(); ++k) {
    const auto [owner, node] = withheld[k];
    if (node)
      for (const ir::Operand& op : owner->body->inputs_of(*node))
        if (op.resolved() && !op.omitted()) withhold(owner->at_depth(op.depth), op.id);
  }
  if (names.empty()) return;
  std::string list;
  for (const auto& name : names) list += (list.empty() ? "" : ", ") + name;
  report(frame, path,
         Severity::Warning,
         "ONNX's inference fails on this branch, which no run takes, given the types proven around it: " + list +
             " left untyped (ONNX's checker infers both branches of an If from the types written)");
}

std::vector<Fact> Analyzer::Impl::call_loop(const NodeProto& n, const std::vector<const Fact*>& inputs, Frame& frame,
                            const PathLink* path) {
  const GraphProto* body = graph_attribute(n, "body", frame.attributes);
  if (!body) {
    report(frame, path, Severity::Error, "Loop needs a body graph");
    return {};
  }
  const size_t carried = inputs.size() > 2 ? inputs.size() - 2 : 0;
  std::vector<Fact> state;
  for (size_t i = 0; i < carried; ++i) state.push_back(inputs[2 + i] ? *inputs[2 + i] : Fact());
  auto bind = [](const std::vector<Fact>& s) {
    std::vector<Fact> in{scalar_of(onnx::TensorProto::INT64), scalar_of(onnx::TensorProto::BOOL)};
    for (const auto& f : s) in.push_back(without_elements(f));  // values change from one iteration to the next
    return in;
  };
  // The state fed to the body has no elements (bind drops them), so neither does the
  // state the fixpoint compares.
  for (auto& f : state) f = without_elements(f);
  const PathLink body_link = link(path, "body");
  auto [out, stable] = fixpoint(*body, frame, state, 1, bind, &body_link);

  // Scan outputs stack one element per iteration: exactly M when a trip count is
  // given and no condition can stop the loop early.
  Dim trips = Dim::unknown();
  const bool has_cond = n.input_size() > 1 && !n.input(1).empty();
  if (!inputs.empty() && inputs[0] && !has_cond)
    if (auto m = inputs[0]->scalar_int()) trips = Dim::constant(*m);
  std::vector<Fact> results = stable;
  // A value carried in as an optional that the body gives back unwrapped (optional(seq)
  // in, seq out: test_loop16_seq_none) is the Loop's result with the body's type, as in
  // ONNX's Loop inference: the model declares the body's outputs as what the loop yields.
  for (size_t i = 0; i < carried && 1 + i < out.size(); ++i) {
    auto is_optional = [](const Fact& f) { return f.other && f.other->kind == NonTensor::Kind::kOptional; };
    const Fact& body_out = out[1 + i];
    if (is_optional(stable[i]) && body_out.known() && !is_optional(body_out))
      results[i] = without_elements(body_out);
  }
  for (size_t k = 1 + carried; k < out.size(); ++k) {
    Fact f = without_elements(out[k]);
    if (f.shape) f.shape->insert(f.shape->begin(), trips);
    results.push_back(std::move(f));
  }
  return results;
}

std::vector<Fact> Analyzer::Impl::call_scan(const NodeProto& n, const std::vector<const Fact*>& inputs, const ResolvedAttributes& attrs,
                            Frame& frame, const PathLink* path) {
  const GraphProto* body = graph_attribute(n, "body", frame.attributes);
  const AttributeProto* num_attr = attrs.find("num_scan_inputs");
  const int opset = frame.opsets->count("") ? frame.opsets->at("") : 0;
  if (!body || !num_attr) {
    report(frame, path, Severity::Error, "Scan needs a body graph and num_scan_inputs");
    return {};
  }
  if (opset < 9) return call_op(n, inputs, attrs, frame, path);  // Scan-8: batch axis, ONNX's rule
  if (num_attr->i() < 0 || static_cast<uint64_t>(num_attr->i()) > inputs.size()) {  // ONNX's checker lets it pass
    report(frame, path, Severity::Error,
           "Scan's num_scan_inputs is " + std::to_string(num_attr->i()) + " but it has " +
               std::to_string(inputs.size()) + " inputs");
    return {};
  }
  const size_t num_scan = static_cast<size_t>(num_attr->i());
  const size_t num_state = inputs.size() >= num_scan ? inputs.size() - num_scan : 0;
  const auto in_axes = ints_attribute(attrs, "scan_input_axes");
  const auto out_axes = ints_attribute(attrs, "scan_output_axes");

  std::vector<Fact> slices;
  Dim length = Dim::unknown();
  for (size_t j = 0; j < num_scan; ++j) {
    const Fact* f = inputs[num_state + j];
    Fact slice = f ? without_elements(*f) : Fact();
    if (slice.shape) {
      int64_t axis = j < in_axes.size() ? in_axes[j] : 0;
      const int64_t rank = static_cast<int64_t>(slice.shape->size());
      if (axis < 0) axis += rank;
      if (axis >= 0 && axis < rank) {
        const Dim d = (*slice.shape)[static_cast<size_t>(axis)];
        if (length.is_unknown()) length = d;
        slice.shape->erase(slice.shape->begin() + axis);
      } else {
        // Every run fails here (ONNX Runtime refuses the input); ONNX's inference too, where
        // it knows the rank, as it does once the facts are written: said, as the bridge
        // says what ONNX's inference refuses.
        report_soft(frame, path,
                    "Scan's scan input " + std::to_string(j) + " has rank " + std::to_string(rank) + ": its scan axis " +
                        std::to_string(j < in_axes.size() ? in_axes[j] : 0) + " is out of range");
        slice.shape.reset();
      }
    }
    slices.push_back(std::move(slice));
  }
  std::vector<Fact> state;
  for (size_t i = 0; i < num_state; ++i) state.push_back(inputs[i] ? without_elements(*inputs[i]) : Fact());
  auto bind = [&slices](const std::vector<Fact>& s) {
    std::vector<Fact> in = s;
    in.insert(in.end(), slices.begin(), slices.end());
    return in;
  };
  const PathLink body_link = link(path, "body");
  auto [out, stable] = fixpoint(*body, frame, state, 0, bind, &body_link);
  std::vector<Fact> results = stable;
  for (size_t k = num_state; k < out.size(); ++k) {
    Fact f = without_elements(out[k]);
    if (f.shape) {
      const size_t j = k - num_state;
      int64_t axis = j < out_axes.size() ? out_axes[j] : 0;
      const int64_t rank = static_cast<int64_t>(f.shape->size()) + 1;
      if (axis < 0) axis += rank;
      if (axis >= 0 && axis < rank)
        f.shape->insert(f.shape->begin() + axis, length);
      else
        f.shape.reset();
    }
    results.push_back(std::move(f));
  }
  return results;
}

}  // namespace shapeprop::infer
