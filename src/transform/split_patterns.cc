// Sequences that only carry tensors from one op to another (torchlib's split, chunk and
// cat build them):
//  - SplitToSequence whose sequence only SequenceAt reads, at constant positions, with
//    sizes the facts know: a Split whose outputs are those SequenceAt's; without a split
//    input, pieces of 1 along a dim the facts know (of at most 256), each squeezed where
//    keepdims is 0 (ONNX ignores keepdims when split is given); with int64 sizes that are
//    data, in a 1-D tensor whose length the facts know (at most 256), a Split reading
//    those sizes: wherever the SplitToSequence is valid (sizes positive, summing to the
//    dim) Split makes the same pieces, and where its sizes are not, it fails (but for
//    sizes of 0, which Split takes, as ONNX Runtime's SplitToSequence does too);
//  - SequenceConstruct read only by ConcatFromSequence: a Concat of the tensors, each
//    unsqueezed at the axis first where new_axis is 1 (a stack);
//  - SequenceAt at a constant position of a SequenceConstruct: that tensor;
//  - ConcatFromSequence of a SplitToSequence's pieces (known sizes that make up the split
//    dim, which the facts know) along the split axis: the input itself where the pieces
//    keep the axis and are joined (new_axis 0), or are pieces of 1 squeezed and stacked
//    (new_axis 1); the input unsqueezed next to the axis where pieces of 1 that keep it
//    are stacked before or after it (onnxscript's folding makes the pair a Split and a
//    Concat).
#include <algorithm>
#include <map>

#include "rewrite_support.h"

namespace shapeprop::transform {

namespace {

using onnx::NodeProto;

constexpr int64_t kSplitWithSizesInput = 13;  // Split's sizes became an input (and Squeeze's axes)
constexpr int64_t kMaxUnitPieces = 256;       // pieces of 1 a SplitToSequence without sizes may become
constexpr int64_t kMaxDataPieces = 256;       // pieces a SplitToSequence of sizes that are data may become

// The pieces a SplitToSequence makes: their sizes when known, else the value holding
// them (`data`), whose length is the count.
struct Pieces {
  int64_t count = 0;
  std::vector<int64_t> sizes = {};
  ValueId data = ir::kNoValue;
};

// What a SplitToSequence becomes: a Split into `pieces`, each position's SequenceAt
// readers reading its piece.
struct SplitMatch {
  Pieces pieces;
  std::map<int64_t, std::vector<NodeId>> at;  // position -> SequenceAt nodes
  std::optional<int64_t> squeeze = {};        // the axis each piece is squeezed on (keepdims 0)
};

// What a SequenceConstruct's readers become: the SequenceAt at known positions read the
// tensors there; else its one reader, a ConcatFromSequence, becomes a Concat on `axis`.
// A ConcatFromSequence reading a SplitToSequence's pieces that makes its input again
// (`unsqueeze` unset), or its input with a dim of 1 inserted at `unsqueeze`.
struct RoundTrip {
  NodeId concat = kNone;
  std::optional<int64_t> unsqueeze = {};
};

struct ConstructMatch {
  std::vector<std::pair<NodeId, ValueId>> positions;
  NodeId concat = kNone;
  int64_t axis = 0;
  bool new_axis = false;  // each tensor unsqueezed at `axis` first
};

class Sequences {
 public:
  Sequences(const MutableBody& body, const RewriteOptions& options) : body_(body), options_(options) {}

  std::optional<SplitMatch> split_to_sequence(NodeId id) const {
    if (options_.onnx_opset < kSplitWithSizesInput) return std::nullopt;
    if (body_.input(id, 0) == ir::kNoValue) return std::nullopt;
    std::optional<int64_t> squeeze;
    auto pieces = piece_sizes(id, squeeze);
    if (!pieces) return std::nullopt;
    const auto readers = direct_readers(body_.output(id, 0));
    if (!readers || readers->empty()) return std::nullopt;
    SplitMatch m{std::move(*pieces), {}, squeeze};
    for (auto r : *readers) {
      auto p = position(r, m.pieces.count);
      if (!p) return std::nullopt;
      m.at[*p].push_back(r);
    }
    return m;
  }

  // The ConcatFromSequence readers of a SplitToSequence that join its pieces back.
  std::vector<RoundTrip> round_trips(NodeId id) const {
    std::vector<RoundTrip> found;
    if (body_.input(id, 0) == ir::kNoValue) return found;
    std::optional<int64_t> squeeze;
    const auto pieces = piece_sizes(id, squeeze);
    if (!pieces || pieces->data != ir::kNoValue) return found;
    const Fact* x = body_.fact(body_.input(id, 0));
    const auto rank = static_cast<int64_t>(x->shape->size());  // piece_sizes knows it
    int64_t axis = int_attribute(body_.node(id), "axis").value_or(0);
    if (axis < 0) axis += rank;
    // The sizes make up the dim exactly (else the pair fails where the input would not).
    const auto dim = (*x->shape)[static_cast<size_t>(axis)].as_constant();
    int64_t total = 0;
    for (auto s : pieces->sizes) total += s;
    if (!dim || total != *dim) return found;
    const bool units = std::all_of(pieces->sizes.begin(), pieces->sizes.end(), [](int64_t s) { return s == 1; });
    const ValueId seq = body_.output(id, 0);
    for (auto r : body_.readers(seq)) {
      const NodeProto& concat = body_.node(r);
      if (!is_op(concat, "ConcatFromSequence") || body_.num_inputs(r) != 1 || body_.num_outputs(r) != 1 ||
          body_.input(r, 0) != seq || body_.output(r, 0) == ir::kNoValue)
        continue;
      const auto new_axis = int_attribute(concat, "new_axis").value_or(0);
      const auto at = int_attribute(concat, "axis");
      if (!at || (new_axis != 0 && new_axis != 1)) continue;
      // The joined result's rank: the pieces' (rank, or rank - 1 squeezed), + 1 stacked.
      const int64_t out_rank = rank - (squeeze ? 1 : 0) + new_axis;
      const int64_t c = *at < 0 ? *at + out_rank : *at;
      if (c < 0 || c >= out_rank) continue;
      if (squeeze ? new_axis == 1 && c == axis : new_axis == 0 && c == axis) {
        found.push_back({r, std::nullopt});
      } else if (!squeeze && new_axis == 1 && units && (c == axis || c == axis + 1) &&
                 options_.onnx_opset >= kSplitWithSizesInput) {
        // Piece k is x[.., k:k+1, ..]: stacked at the axis, element [.., k, 0, ..] is
        // x[.., k, ..]; stacked after it, [.., 0, k, ..] is.
        found.push_back({r, c == axis ? axis + 1 : axis});
      }
    }
    return found;
  }

  std::optional<ConstructMatch> sequence_construct(NodeId id) const {
    const auto readers = direct_readers(body_.output(id, 0));
    if (!readers || readers->empty()) return std::nullopt;
    const auto count = static_cast<int64_t>(body_.num_inputs(id));
    // Positions first: SequenceAt of a known position is the tensor there.
    ConstructMatch m;
    for (auto r : *readers) {
      auto p = position(r, count);
      const ValueId tensor = p ? body_.input(id, static_cast<size_t>(*p)) : ir::kNoValue;
      if (p && body_.can_forward(r, tensor)) m.positions.emplace_back(r, tensor);
    }
    if (!m.positions.empty()) return m;
    if (readers->size() != 1) return std::nullopt;
    const NodeId r = readers->front();
    const NodeProto& concat = body_.node(r);
    const auto new_axis = int_attribute(concat, "new_axis").value_or(0);
    if (!is_op(concat, "ConcatFromSequence") || body_.num_outputs(r) != 1 || (new_axis != 0 && new_axis != 1))
      return std::nullopt;
    const auto axis = int_attribute(concat, "axis");
    if (!axis || count == 0 || (new_axis == 1 && options_.onnx_opset < kSplitWithSizesInput)) return std::nullopt;
    m.concat = r;
    m.axis = *axis;
    m.new_axis = new_axis == 1;
    return m;
  }

 private:
  const MutableBody& body_;
  const RewriteOptions& options_;

  // The readers of a sequence, when every read is a direct input of its node.
  std::optional<std::vector<NodeId>> direct_readers(ValueId seq) const {
    auto readers = body_.readers(seq);
    if (readers.size() != body_.uses(seq)) return std::nullopt;
    for (auto r : readers) {
      if (body_.num_inputs(r) == 0 || body_.input(r, 0) != seq) return std::nullopt;
      for (size_t k = 1; k < body_.num_inputs(r); ++k)
        if (body_.input(r, k) == seq) return std::nullopt;
    }
    return readers;
  }

  // The position a SequenceAt reads, within [0, size).
  std::optional<int64_t> position(NodeId at, int64_t size) const {
    if (!is_op(body_.node(at), "SequenceAt") || body_.num_inputs(at) != 2 || body_.num_outputs(at) != 1 ||
        body_.output(at, 0) == ir::kNoValue)
      return std::nullopt;
    auto index = constant_ints(body_, body_.input(at, 1));
    const Fact* f = body_.fact(body_.input(at, 1));
    if (!index || index->size() != 1 || !f || !f->shape || !f->shape->empty()) return std::nullopt;
    const int64_t i = (*index)[0] < 0 ? (*index)[0] + size : (*index)[0];
    return i >= 0 && i < size ? std::optional<int64_t>(i) : std::nullopt;
  }

  // The pieces a SplitToSequence makes, when their count is known; `squeeze` the axis
  // they are squeezed on, if they are.
  std::optional<Pieces> piece_sizes(NodeId id, std::optional<int64_t>& squeeze) const {
    const Fact* x = body_.fact(body_.input(id, 0));
    const auto rank = rank_of(x);
    if (!rank || *rank == 0) return std::nullopt;
    int64_t axis = int_attribute(body_.node(id), "axis").value_or(0);
    if (axis < 0) axis += static_cast<int64_t>(*rank);
    if (axis < 0 || axis >= static_cast<int64_t>(*rank)) return std::nullopt;
    const auto dim = (*x->shape)[static_cast<size_t>(axis)].as_constant();
    const ValueId split_input = body_.input(id, 1);
    if (split_input == ir::kNoValue) {  // pieces of 1, squeezed unless keepdims
      if (!dim || *dim <= 0 || *dim > kMaxUnitPieces) return std::nullopt;
      if (int_attribute(body_.node(id), "keepdims").value_or(1) == 0) squeeze = axis;
      return Pieces{*dim, std::vector<int64_t>(static_cast<size_t>(*dim), 1), ir::kNoValue};
    }
    const Fact* sf = body_.fact(split_input);
    if (!sf || !sf->is_tensor() || !sf->shape) return std::nullopt;
    auto split = constant_ints(body_, split_input);
    if (sf->shape->size() == 1) {
      if (split) return Pieces{static_cast<int64_t>(split->size()), std::move(*split), ir::kNoValue};
      // Sizes that are data: Split reads them as they are, so they must be int64.
      const auto length = (*sf->shape)[0].as_constant();
      if (sf->elem_type != onnx::TensorProto::INT64 || !length || *length <= 0 || *length > kMaxDataPieces)
        return std::nullopt;
      return Pieces{*length, {}, split_input};
    }
    if (!split || !sf->shape->empty() || split->size() != 1 || !dim || (*split)[0] <= 0) return std::nullopt;
    const int64_t chunk = (*split)[0];
    std::vector<int64_t> sizes;
    for (int64_t left = *dim; left > 0; left -= chunk) sizes.push_back(std::min(chunk, left));
    if (sizes.empty()) return std::nullopt;
    return Pieces{static_cast<int64_t>(sizes.size()), std::move(sizes), ir::kNoValue};
  }
};

bool split(MutableBody& body, NodeId id, const SplitMatch& m) {
  const ValueId seq = body.output(id, 0);
  NodeProto split;
  split.set_op_type("Split");
  set_int_attribute(split, "axis", int_attribute(body.node(id), "axis").value_or(0));
  const ValueId sizes =
      m.pieces.data != ir::kNoValue ? m.pieces.data : body.add_constant(int64_vector(m.pieces.sizes), "split_sizes");
  const std::vector<ValueId> inputs{body.input(id, 0), sizes};
  // Each position's first reader (by id: any of them would do, as the Split precedes them
  // all) names the piece; the others read it.
  std::vector<ValueId> pieces;
  struct Readers {
    ValueId piece;
    NodeId first;
    std::vector<NodeId> others;
  };
  std::vector<Readers> readers;
  for (int64_t k = 0; k < m.pieces.count; ++k) {
    auto it = m.at.find(k);
    if (it == m.at.end()) {
      pieces.push_back(body.new_value(std::string(body.name(seq)) + "_piece"));
      continue;
    }
    std::vector<NodeId> nodes = it->second;
    std::sort(nodes.begin(), nodes.end());
    pieces.push_back(m.squeeze ? body.new_value(std::string(body.name(seq)) + "_piece")
                               : body.output(nodes.front(), 0));
    readers.push_back({pieces.back(), nodes.front(), std::vector<NodeId>(nodes.begin() + 1, nodes.end())});
  }
  // The Split defines the pieces the first readers defined, which then go (and with the
  // last of them the SplitToSequence); or, squeezed, each first reader becomes the Squeeze
  // of its piece.
  body.insert_before(id, std::move(split), inputs, pieces);
  const ValueId axes = m.squeeze ? body.add_constant(int64_vector({*m.squeeze}), "axes") : ir::kNoValue;
  for (const auto& r : readers) {
    const ValueId out = body.output(r.first, 0);
    if (m.squeeze) {
      NodeProto squeeze;
      squeeze.set_op_type("Squeeze");
      body.replace_node(r.first, std::move(squeeze), {r.piece, axes});
    } else {
      body.erase(r.first);
    }
    for (auto other : r.others) body.forward(other, out);
  }
  body.erase(id);
  return true;
}

bool round_trip(MutableBody& body, ValueId x, const RoundTrip& m) {
  if (!m.unsqueeze) return body.forward(m.concat, x);
  NodeProto unsqueeze;
  unsqueeze.set_op_type("Unsqueeze");
  body.replace_node(m.concat, std::move(unsqueeze), {x, body.add_constant(int64_vector({*m.unsqueeze}), "axes")});
  return true;
}

bool construct(MutableBody& body, NodeId id, const ConstructMatch& m) {
  if (!m.positions.empty()) {
    bool changed = false;
    for (const auto& [r, tensor] : m.positions) changed = body.forward(r, tensor) || changed;
    return changed;
  }
  NodeProto c;
  c.set_op_type("Concat");
  set_int_attribute(c, "axis", m.axis);
  std::vector<ValueId> inputs;
  const ValueId axes = m.new_axis ? body.add_constant(int64_vector({m.axis}), "axes") : ir::kNoValue;
  for (size_t k = 0; k < body.num_inputs(id); ++k) {
    if (!m.new_axis) {
      inputs.push_back(body.input(id, k));
      continue;
    }
    NodeProto unsqueeze;
    unsqueeze.set_op_type("Unsqueeze");
    inputs.push_back(body.new_value(std::string(body.name(body.input(id, k))) + "_stacked"));
    body.insert_before(m.concat, std::move(unsqueeze), {body.input(id, k), axes}, {inputs.back()});
  }
  body.replace_node(m.concat, std::move(c), inputs);
  return true;
}

}  // namespace

bool rewrite_sequences_and_splits(PassContext& ctx) {
  if (!ctx.may_hold({"SplitToSequence", "SequenceConstruct"})) return false;  // each match starts at one of these
  MutableBody& body = ctx.body();
  const Sequences sequences(body, ctx.options());
  for (auto id = body.first(); id != kNone && !ctx.stop(); id = body.next(id)) {
    const NodeProto& n = body.node(id);
    const ValueId out = body.output(id, 0);
    if (body.num_outputs(id) != 1 || out == ir::kNoValue || body.is_interface(out)) continue;
    if (is_op(n, "SplitToSequence")) {
      const ValueId x = body.input(id, 0);
      for (const auto& trip : sequences.round_trips(id))
        ctx.apply(Counter::SequencePatterns, [&] { return round_trip(body, x, trip); });
      if (body.erased(id)) continue;
      if (auto m = sequences.split_to_sequence(id)) ctx.apply(Counter::SequencePatterns, [&] { return split(body, id, *m); });
    } else if (is_op(n, "SequenceConstruct")) {
      if (auto m = sequences.sequence_construct(id))
        ctx.apply([&] {
          const bool changed = construct(body, id, *m);
          // Each SequenceAt read from its tensor counts, as does the Concat.
          for (size_t k = 0; k < std::max<size_t>(m->positions.size(), 1); ++k) ctx.count(Counter::SequencePatterns);
          return changed;
        });
    }
  }
  return ctx.changed();
}

}  // namespace shapeprop::transform
