// ScatterND on known elements (fold_scatter_nd), and the index arithmetic it shares with
// const-fold (scatter_nd.h).
#include <algorithm>

#include "eval/fold_support.h"
#include "eval/scatter_nd.h"

namespace shapeprop::eval {

std::optional<std::vector<int64_t>> scatter_nd_targets(std::span<const int64_t> data_dims,
                                                       std::span<const int64_t> indices_dims,
                                                       std::span<const int64_t> indices,
                                                       std::span<const int64_t> updates_dims) {
  if (indices_dims.empty()) return std::nullopt;
  const int64_t k = indices_dims.back();
  if (k < 1 || k > static_cast<int64_t>(data_dims.size())) return std::nullopt;
  const auto tuples_count = detail::element_count(indices_dims.first(indices_dims.size() - 1));
  const auto slice = detail::element_count(data_dims.subspan(static_cast<size_t>(k)));
  if (!tuples_count || !slice || static_cast<int64_t>(indices.size()) != *tuples_count * k) return std::nullopt;
  const auto tuple_dims = indices_dims.first(indices_dims.size() - 1);
  const auto slice_dims = data_dims.subspan(static_cast<size_t>(k));
  if (updates_dims.size() != tuple_dims.size() + slice_dims.size() ||
      !std::equal(tuple_dims.begin(), tuple_dims.end(), updates_dims.begin()) ||
      !std::equal(slice_dims.begin(), slice_dims.end(), updates_dims.begin() + static_cast<ptrdiff_t>(tuple_dims.size())))
    return std::nullopt;
  // The stride of each of the first k data dims, in elements.
  std::vector<int64_t> strides(static_cast<size_t>(k));
  int64_t stride = *slice;
  for (int64_t a = k; a-- > 0;) {
    strides[static_cast<size_t>(a)] = stride;
    stride *= data_dims[static_cast<size_t>(a)];
  }
  std::vector<int64_t> targets;
  targets.reserve(static_cast<size_t>(*tuples_count * *slice));
  for (int64_t t = 0; t < *tuples_count; ++t) {
    int64_t base = 0;
    for (int64_t a = 0; a < k; ++a) {
      const int64_t d = data_dims[static_cast<size_t>(a)];
      int64_t i = indices[static_cast<size_t>(t * k + a)];
      if (i < -d || i >= d) return std::nullopt;
      if (i < 0) i += d;
      base += i * strides[static_cast<size_t>(a)];
    }
    for (int64_t e = 0; e < *slice; ++e) targets.push_back(base + e);
  }
  std::vector<int64_t> sorted = targets;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) return std::nullopt;
  return targets;
}

namespace detail {

// ScatterND(data, indices, updates) without reduction: data's shape; its elements with
// the updates in place where data, indices and updates are all known.
std::vector<Fact> fold_scatter_nd(const FoldInput& node) {
  const Fact *data = node.input(0), *indices = node.input(1), *updates = node.input(2);
  const int32_t type = data ? data->elem_type : 0;
  if (!data || !data->shape) return {typed(type, std::nullopt)};
  Fact shaped = Fact::tensor(type, *data->shape);
  if (const auto* r = node.attribute("reduction"); r && r->s() != "none") return {shaped};
  const auto data_dims = shape_with_elements(data);
  const auto indices_dims = static_shape(indices);
  const auto picks = constant_ints(indices);
  const auto updates_dims = shape_with_elements(updates);
  if (!data_dims || !indices_dims || !picks || !updates_dims || updates->elem_type != type) return {shaped};
  const auto targets = scatter_nd_targets(*data_dims, *indices_dims, *picks, *updates_dims);
  if (!targets) return {shaped};
  Fact out = *data;
  for (size_t u = 0; u < targets->size(); ++u) {
    const auto at = static_cast<size_t>((*targets)[u]);
    if (out.ints && updates->ints) (*out.ints)[at] = (*updates->ints)[u];
    else if (out.reals && updates->reals) (*out.reals)[at] = (*updates->reals)[u];
    else return {shaped};
  }
  return {out};
}

}  // namespace detail
}  // namespace shapeprop::eval
