// A ScatterND that overwrites all of its data is its updates (issue 25, family 10): its
// indices, of shape [q_0, ..., q_{m-1}, k], list every position of the data's first k dims
// exactly once, in row-major order, so element j of the updates lands at the j-th position
// (PyTorch's exporters write `x[...] = y` over a whole tensor so). The indices are either
// constants, or (k = 1) a column [D, 1] made by Unsqueeze or Reshape of Range(0, D, 1)
// whose limit the facts know as the data's first dim D, symbols included (as
// `x[arange(x.shape[0])] = y` is exported): both keep the Range's order, 0 to D-1. The
// result is then the updates in the data's shape: the updates themselves where their shape
// is the data's, else a Reshape of them to the data's shape where the facts know it whole.
// Only without a reduction (with one, the data's values count), and only for indices that
// are in range as written (a negative one is left alone: a position the runtime would have
// to wrap is not proof of coverage here).
#include "rewrite_support.h"

namespace shapeprop::transform {

namespace {

using onnx::NodeProto;

struct Overwrite {
  ValueId updates;
  std::optional<std::vector<int64_t>> reshape;  // to this shape first
};

// Constant indices of a static shape ending in k that list the positions of the data's
// first k dims (constants) in row-major order.
bool constant_indices_cover(const MutableBody& body, ValueId indices, const std::vector<Dim>& data_dims, size_t k) {
  const auto index_values = constant_ints(body, indices);
  if (!index_values || !eval::detail::static_shape(body.fact(indices))) return false;
  std::vector<int64_t> lead;
  int64_t positions = 1;
  for (size_t i = 0; i < k; ++i) {
    const auto d = data_dims[i].as_constant();
    if (!d || *d <= 0 || __builtin_mul_overflow(positions, *d, &positions)) return false;
    lead.push_back(*d);
  }
  if (static_cast<int64_t>(index_values->size()) != positions * static_cast<int64_t>(k)) return false;
  // Row-major order: the j-th index tuple is j written in the mixed radix of `lead`.
  std::vector<int64_t> expected(k, 0);
  for (int64_t j = 0; j < positions; ++j) {
    for (size_t i = 0; i < k; ++i)
      if ((*index_values)[static_cast<size_t>(j) * k + i] != expected[i]) return false;
    for (size_t i = k; i-- > 0;) {
      if (++expected[i] < lead[i]) break;
      expected[i] = 0;
    }
  }
  return true;
}

// The scalar integral constant `v` is `value`.
bool is_int_scalar(const MutableBody& body, ValueId v, int64_t value) {
  const Fact* f = body.fact(v);
  const auto c = constant_ints(body, v);
  return f && f->shape && f->shape->empty() && c && c->size() == 1 && c->front() == value;
}

// Indices of shape [D, 1] (D the data's first dim) that are Range(0, D, 1) made a column by
// an Unsqueeze or a Reshape: 0, 1, ..., D-1 in order, whatever D is at run time. D is the
// same Dim (an identity of the facts) in the indices' shape, the Range's limit and the
// data's shape; a declared shape is never read.
bool range_indices_cover(const MutableBody& body, ValueId indices, const std::vector<Dim>& index_dims,
                         const std::vector<Dim>& data_dims) {
  const Dim& d = data_dims.front();
  if (index_dims.size() != 2 || index_dims[0] != d || index_dims[1].as_constant() != std::optional<int64_t>(1))
    return false;
  const NodeId column = body.producer(indices);
  if (column == kNone || body.num_inputs(column) == 0) return false;
  const NodeProto& c = body.node(column);
  if (has_reference(c) || !(is_op(c, "Unsqueeze") || is_op(c, "Reshape"))) return false;
  const NodeId range = body.producer(body.input(column, 0));
  if (range == kNone || !is_op(body.node(range), "Range") || body.num_inputs(range) != 3) return false;
  const Fact* limit = body.fact(body.input(range, 1));
  if (!limit || limit->elem_type != onnx::TensorProto::INT64 || !limit->shape || !limit->shape->empty() ||
      !limit->ints || limit->ints->size() != 1 || limit->ints->front() != d)
    return false;
  return is_int_scalar(body, body.input(range, 0), 0) && is_int_scalar(body, body.input(range, 2), 1);
}

std::optional<Overwrite> match(const MutableBody& body, NodeId id) {
  const NodeProto& n = body.node(id);
  if (!is_op(n, "ScatterND") || has_reference(n) || body.num_inputs(id) != 3 || body.num_outputs(id) != 1)
    return std::nullopt;
  if (const auto* r = attribute(n, "reduction"); r && r->s() != "none") return std::nullopt;
  const ValueId data = body.input(id, 0), indices = body.input(id, 1), updates = body.input(id, 2);
  if (data == ir::kNoValue || indices == ir::kNoValue || updates == ir::kNoValue) return std::nullopt;
  const std::vector<Dim>* data_dims = known_dims(body.fact(data));
  const std::vector<Dim>* index_dims = known_dims(body.fact(indices));
  if (!data_dims || !index_dims || index_dims->empty()) return std::nullopt;
  const auto last = index_dims->back().as_constant();
  if (!last || *last <= 0 || static_cast<size_t>(*last) > data_dims->size()) return std::nullopt;
  const auto k = static_cast<size_t>(*last);
  if (!constant_indices_cover(body, indices, *data_dims, k) &&
      !(k == 1 && range_indices_cover(body, indices, *index_dims, *data_dims)))
    return std::nullopt;
  // The updates must have the shape the op requires, [q_0, ..., q_{m-1}] + the data's dims
  // from k on (else the runtime fails, and so must the model).
  const Fact* u = body.fact(updates);
  const Fact* d = body.fact(data);
  const std::vector<Dim>* update_dims = known_dims(u);
  if (!update_dims || u->elem_type != d->elem_type || u->elem_type == 0) return std::nullopt;
  std::vector<Dim> required(index_dims->begin(), index_dims->end() - 1);
  required.insert(required.end(), data_dims->begin() + static_cast<std::ptrdiff_t>(k), data_dims->end());
  if (*update_dims != required) return std::nullopt;
  if (std::vector<Dim>(index_dims->begin(), index_dims->end() - 1) ==
      std::vector<Dim>(data_dims->begin(), data_dims->begin() + static_cast<std::ptrdiff_t>(k)))
    return Overwrite{updates, std::nullopt};
  const auto whole = eval::detail::static_shape(d);
  if (!whole) return std::nullopt;
  return Overwrite{updates, *whole};
}

}  // namespace

bool remove_overwriting_scatters(PassContext& ctx) {
  if (!ctx.may_hold({"ScatterND"})) return false;  // each match starts at one of these
  MutableBody& body = ctx.body();
  return rewrite_matches(
      ctx, Counter::ScattersRemoved,
      [&](NodeId id) {
        auto m = match(body, id);
        if (m && !m->reshape && !body.can_forward(id, m->updates)) m.reset();
        return m;
      },
      [&](NodeId id, const auto& m) {
        if (!m->reshape) return body.forward(id, m->updates);
        NodeProto reshape;
        reshape.set_op_type("Reshape");
        body.replace_node(id, std::move(reshape), {m->updates, body.add_constant(int64_vector(*m->reshape), "shape")});
        return true;
      });
}

}  // namespace shapeprop::transform
