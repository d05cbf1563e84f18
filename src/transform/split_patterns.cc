// Sequences that only carry tensors from one op to another (torchlib's split, chunk and
// cat build them):
//  - SplitToSequence whose sequence only SequenceAt reads, at constant positions, with
//    sizes the facts know: a Split whose outputs are those SequenceAt's;
//  - SequenceConstruct read only by ConcatFromSequence (new_axis = 0): a Concat of the
//    tensors;
//  - SequenceAt at a constant position of a SequenceConstruct: that tensor.
#include <map>

#include "rewrite_support.h"

namespace shapeprop::transform {

namespace {

using onnx::NodeProto;

constexpr int64_t kSplitWithSizesInput = 13;  // Split's sizes became an input

class Sequences {
 public:
  explicit Sequences(BodyRewriter& body) : body_(body) {}

  bool run() {
    return body_.rewrite_each([&](BodyRewriter::NodeId id) {
      const NodeProto& n = body_.node(id);
      if (n.output_size() != 1 || n.output(0).empty() || body_.is_protected(n.output(0))) return false;
      if (is_op(n, "SplitToSequence")) return split_to_sequence(id);
      if (is_op(n, "SequenceConstruct")) return sequence_construct(id);
      return false;
    });
  }

 private:
  BodyRewriter& body_;

  // The readers of a sequence, when every read is a direct input of its node.
  std::optional<std::vector<BodyRewriter::NodeId>> direct_readers(const std::string& seq) const {
    auto readers = body_.readers(seq);
    if (readers.size() != body_.uses(seq)) return std::nullopt;
    for (auto r : readers) {
      const NodeProto& n = body_.node(r);
      if (n.input_size() == 0 || n.input(0) != seq) return std::nullopt;
      for (int k = 1; k < n.input_size(); ++k)
        if (n.input(k) == seq) return std::nullopt;
    }
    return readers;
  }

  // The position a SequenceAt reads, within [0, size).
  std::optional<int64_t> position(const NodeProto& at, int64_t size) const {
    if (!is_op(at, "SequenceAt") || at.input_size() != 2 || at.output_size() != 1 || at.output(0).empty())
      return std::nullopt;
    auto index = constant_ints(body_, at.input(1));
    const Fact* f = body_.fact(at.input(1));
    if (!index || index->size() != 1 || !f || !f->shape || !f->shape->empty()) return std::nullopt;
    const int64_t i = (*index)[0] < 0 ? (*index)[0] + size : (*index)[0];
    return i >= 0 && i < size ? std::optional<int64_t>(i) : std::nullopt;
  }

  // The sizes of the pieces a SplitToSequence makes, when they are known.
  std::optional<std::vector<int64_t>> piece_sizes(const NodeProto& n) const {
    const Fact* x = body_.fact(n.input(0));
    const auto rank = rank_of(x);
    if (!rank || *rank == 0) return std::nullopt;
    int64_t axis = int_attribute(n, "axis").value_or(0);
    if (axis < 0) axis += static_cast<int64_t>(*rank);
    if (axis < 0 || axis >= static_cast<int64_t>(*rank)) return std::nullopt;
    const auto dim = (*x->shape)[static_cast<size_t>(axis)].as_constant();
    if (n.input_size() < 2 || n.input(1).empty()) return std::nullopt;  // pieces of 1, squeezed or not: left
    auto split = constant_ints(body_, n.input(1));
    const Fact* sf = body_.fact(n.input(1));
    if (!split || !sf || !sf->shape) return std::nullopt;
    if (sf->shape->size() == 1) return split;
    if (!sf->shape->empty() || split->size() != 1 || !dim || (*split)[0] <= 0) return std::nullopt;
    const int64_t chunk = (*split)[0];
    std::vector<int64_t> sizes;
    for (int64_t left = *dim; left > 0; left -= chunk) sizes.push_back(std::min(chunk, left));
    if (sizes.empty()) return std::nullopt;
    return sizes;
  }

  bool split_to_sequence(BodyRewriter::NodeId id) {
    if (body_.options().onnx_opset < kSplitWithSizesInput) return false;
    const NodeProto& n = body_.node(id);
    if (n.input_size() < 1 || n.input(0).empty()) return false;
    const auto sizes = piece_sizes(n);
    if (!sizes) return false;
    const auto readers = direct_readers(n.output(0));
    if (!readers || readers->empty()) return false;
    const auto count = static_cast<int64_t>(sizes->size());
    std::map<int64_t, std::vector<BodyRewriter::NodeId>> at;  // position -> SequenceAt nodes
    for (auto r : *readers) {
      auto p = position(body_.node(r), count);
      if (!p) return false;
      at[*p].push_back(r);
    }
    if (body_.dry()) return true;
    NodeProto split;
    split.set_op_type("Split");
    split.add_input(n.input(0));
    split.add_input(body_.add_constant(int64_vector(*sizes), id, "split_sizes"));
    set_int_attribute(split, "axis", int_attribute(n, "axis").value_or(0));
    // Each position's first reader (by id: any of them would do, as the Split precedes
    // them all) names the piece; the others read it.
    std::vector<std::pair<BodyRewriter::NodeId, std::vector<BodyRewriter::NodeId>>> pieces;
    for (int64_t k = 0; k < count; ++k) {
      auto it = at.find(k);
      if (it == at.end()) {
        split.add_output(body_.fresh(n.output(0) + "_piece"));
        continue;
      }
      std::vector<BodyRewriter::NodeId> nodes = it->second;
      std::sort(nodes.begin(), nodes.end());
      split.add_output(body_.node(nodes.front()).output(0));
      pieces.emplace_back(nodes.front(), std::vector<BodyRewriter::NodeId>(nodes.begin() + 1, nodes.end()));
    }
    // The Split defines the pieces the first readers defined, which then go.
    body_.replace_node(id, std::move(split));
    for (const auto& [first, others] : pieces) {
      const std::string piece = body_.node(first).output(0);
      body_.erase(first);
      for (auto other : others) body_.forward(other, piece);
    }
    ++body_.stats().sequence_patterns;
    return true;
  }

  bool sequence_construct(BodyRewriter::NodeId id) {
    const NodeProto& n = body_.node(id);
    const auto readers = direct_readers(n.output(0));
    if (!readers || readers->empty()) return false;
    const auto count = static_cast<int64_t>(n.input_size());
    // Positions first: SequenceAt of a known position is the tensor there.
    bool changed = false;
    for (auto r : *readers) {
      auto p = position(body_.node(r), count);
      if (!p) continue;
      if (body_.dry()) return true;
      changed = body_.forward(r, n.input(static_cast<int>(*p))) || changed;
      ++body_.stats().sequence_patterns;
    }
    if (changed || readers->size() != 1) return changed;
    const BodyRewriter::NodeId r = readers->front();
    const NodeProto& concat = body_.node(r);
    if (!is_op(concat, "ConcatFromSequence") || concat.output_size() != 1 || int_attribute(concat, "new_axis").value_or(0) != 0)
      return false;
    const auto axis = int_attribute(concat, "axis");
    if (!axis || count == 0) return false;
    if (body_.dry()) return true;
    NodeProto c;
    c.set_op_type("Concat");
    for (const auto& in : n.input()) c.add_input(in);
    c.add_output(concat.output(0));
    set_int_attribute(c, "axis", *axis);
    body_.replace_node(r, std::move(c));
    ++body_.stats().sequence_patterns;
    return true;
  }
};

}  // namespace

bool rewrite_sequences_and_splits(BodyRewriter& body) { return Sequences(body).run(); }

}  // namespace shapeprop::transform
