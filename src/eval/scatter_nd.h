// ScatterND's index arithmetic (reduction "none"), shared by the analysis's folding rule
// (fold_scatter.cc, on facts) and const-fold (on stored constants): which element of the
// data each element of the updates overwrites.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace shapeprop::eval {

// For ScatterND(data, indices, updates) with data of `data_dims`, indices of
// `indices_dims` holding `indices` (row-major), the offset into the data of each element
// of the updates, in order. Negative indices count from the back, as ONNX Runtime takes
// them. nullopt where ScatterND would fail or its result is not one answer: an index out
// of range, indices whose last dim is not in [1, rank], updates of another shape than
// indices[:-1] + data[k:] (given as `updates_count`, checked against it), and two
// updates of the same element (ONNX leaves their order open).
std::optional<std::vector<int64_t>> scatter_nd_targets(std::span<const int64_t> data_dims,
                                                       std::span<const int64_t> indices_dims,
                                                       std::span<const int64_t> indices,
                                                       std::span<const int64_t> updates_dims);

}  // namespace shapeprop::eval
