// A ScatterND that overwrites all of its data is its updates (issue 25, family 10): its
// constant indices, of shape [q_0, ..., q_{m-1}, k], list every position of the data's
// first k dims exactly once, in row-major order, so element j of the updates lands at the
// j-th position (PyTorch's exporters write `x[...] = y` over a whole tensor so). The
// result is then the updates in the data's shape: the updates themselves where their
// shape is the data's, else a Reshape of them to the data's shape where the facts know it
// whole. Only without a reduction (with one, the data's values count), and only for
// indices that are in range as written (a negative one is left alone: a position the
// runtime would have to wrap is not proof of coverage here).
#include "rewrite_support.h"

namespace shapeprop::transform {

namespace {

using onnx::NodeProto;

struct Overwrite {
  ValueId updates;
  std::optional<std::vector<int64_t>> reshape;  // to this shape first
};

std::optional<Overwrite> match(const MutableBody& body, NodeId id) {
  const NodeProto& n = body.node(id);
  if (!is_op(n, "ScatterND") || has_reference(n) || body.num_inputs(id) != 3 || body.num_outputs(id) != 1)
    return std::nullopt;
  if (const auto* r = attribute(n, "reduction"); r && r->s() != "none") return std::nullopt;
  const ValueId data = body.input(id, 0), indices = body.input(id, 1), updates = body.input(id, 2);
  if (data == ir::kNoValue || indices == ir::kNoValue || updates == ir::kNoValue) return std::nullopt;
  const std::vector<Dim>* data_dims = known_dims(body.fact(data));
  const auto index_shape = eval::detail::static_shape(body.fact(indices));
  const auto index_values = constant_ints(body, indices);
  if (!data_dims || !index_shape || index_shape->empty() || !index_values) return std::nullopt;
  const auto k = static_cast<size_t>(index_shape->back());
  if (k == 0 || k > data_dims->size()) return std::nullopt;
  // The data's first k dims, as numbers, and the positions they hold.
  std::vector<int64_t> lead;
  int64_t positions = 1;
  for (size_t i = 0; i < k; ++i) {
    const auto d = (*data_dims)[i].as_constant();
    if (!d || *d <= 0 || __builtin_mul_overflow(positions, *d, &positions)) return std::nullopt;
    lead.push_back(*d);
  }
  if (static_cast<int64_t>(index_values->size()) != positions * static_cast<int64_t>(k)) return std::nullopt;
  // Row-major order: the j-th index tuple is j written in the mixed radix of `lead`.
  std::vector<int64_t> expected(k, 0);
  for (int64_t j = 0; j < positions; ++j) {
    for (size_t i = 0; i < k; ++i)
      if ((*index_values)[static_cast<size_t>(j) * k + i] != expected[i]) return std::nullopt;
    for (size_t i = k; i-- > 0;) {
      if (++expected[i] < lead[i]) break;
      expected[i] = 0;
    }
  }
  // The updates must have the shape the op requires, [q_0, ..., q_{m-1}] + the data's dims
  // from k on (else the runtime fails, and so must the model).
  const Fact* u = body.fact(updates);
  const Fact* d = body.fact(data);
  const std::vector<Dim>* update_dims = known_dims(u);
  if (!update_dims || u->elem_type != d->elem_type || u->elem_type == 0) return std::nullopt;
  std::vector<Dim> required;
  for (size_t i = 0; i + 1 < index_shape->size(); ++i) required.push_back(Dim::constant((*index_shape)[i]));
  required.insert(required.end(), data_dims->begin() + static_cast<std::ptrdiff_t>(k), data_dims->end());
  if (*update_dims != required) return std::nullopt;
  if (std::vector<int64_t>(index_shape->begin(), index_shape->end() - 1) == lead) return Overwrite{updates, std::nullopt};
  const auto whole = eval::detail::static_shape(d);
  if (!whole) return std::nullopt;
  return Overwrite{updates, *whole};
}

}  // namespace

bool remove_overwriting_scatters(PassContext& ctx) {
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
