// Helpers shared by the folding rules (src/eval/fold_*.cc): attribute access, element
// conversion and range checks, broadcasting, and index maps that move elements.
//
// Conventions every rule keeps:
// - A rule never guesses. What it cannot derive for sure stays unknown: an unknown Dim
//   inside a shape or an integral tensor, or no elements at all.
// - Elements are computed only for tensors whose shape is static and small (the caps of
//   Fact), so no rule allocates more than Fact would keep.
// - Integral results outside the element type's range become unknown (ONNX's wrap-around
//   is not modelled), and a bool tensor has elements only when every one is known.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string_view>
#include <variant>
#include <vector>

#include "eval/fold.h"

namespace shapeprop::eval::detail {

using onnx::TensorProto;

// ---- opsets and attributes -----------------------------------------------------------

// The node's ONNX opset is `version` or later. An unknown opset (0) counts as the latest.
inline bool since(const FoldInput& node, int version) { return node.opset == 0 || node.opset >= version; }

std::optional<int64_t> attr_int(const FoldInput& node, std::string_view name);
int64_t attr_int(const FoldInput& node, std::string_view name, int64_t fallback);
std::optional<std::vector<int64_t>> attr_ints(const FoldInput& node, std::string_view name);
const onnx::TensorProto* attr_tensor(const FoldInput& node, std::string_view name);

// ---- facts ---------------------------------------------------------------------------

// A fact with a type and (when known) a shape, no elements.
Fact typed(int32_t elem_type, std::optional<std::vector<Dim>> shape);
// The element type of the first input that has one (inputs of one type variable).
int32_t common_type(const std::vector<const Fact*>& inputs);

// The shape's dims as integers when all are known constants.
std::optional<std::vector<int64_t>> static_dims(const std::vector<Dim>& shape);
std::optional<std::vector<int64_t>> static_shape(const Fact* f);
// The static shape of a fact whose elements are present and as many as it says.
std::optional<std::vector<int64_t>> shape_with_elements(const Fact* f);
// Number of elements of a static shape, or nullopt on overflow / negative dims.
std::optional<int64_t> element_count(std::span<const int64_t> dims);
// The element count of a static shape, or -1 when there is none (or it overflows).
int64_t static_count(const std::optional<std::vector<int64_t>>& dims);
// Elements of this many can be kept for elem_type (Fact's caps).
bool fits_cap(int32_t elem_type, int64_t count);
std::vector<Dim> to_dims(const std::vector<int64_t>& values);

// The elements of an integral tensor when every one is a known constant.
std::optional<std::vector<int64_t>> constant_ints(const Fact* f);
// The single known element of a one-element integral tensor (a scalar or a [1]).
std::optional<int64_t> constant_scalar(const Fact* f);
// The single element of a one-element integral tensor, symbolic or not.
std::optional<Dim> scalar_dim(const Fact* f);

// Axis `axis` of a rank-`rank` tensor, negative counting from the back; nullopt when out
// of [-rank, rank).
std::optional<int64_t> normalize_axis(int64_t axis, int64_t rank);
// Normalised, duplicate-free axes, or nullopt.
std::optional<std::vector<int64_t>> normalize_axes(const std::vector<int64_t>& axes, int64_t rank);

// ---- element values ------------------------------------------------------------------

// The range of values an integral element type holds (bool is {0, 1}); nullopt for
// types whose values int64 cannot represent in full (uint64) or that are not integral.
struct IntRange {
  int64_t min;
  int64_t max;
};
std::optional<IntRange> int_range(int32_t elem_type);
// `d`, or unknown when it is a constant outside elem_type's range.
Dim fit(int32_t elem_type, const Dim& d);
// `v` rounded to a floating element type (float16 and bfloat16 through float, the way
// runtimes compute them); nullopt when elem_type is not one we model.
std::optional<double> round_to(int32_t elem_type, double v);
// Whether d >= 0 whatever sizes its symbols name (under DimBounds(): symbols are at
// least 0): a symbol, a polynomial with non-negative coefficients, N - floor(N/2).
bool known_nonnegative(const Dim& d);
// Whether d >= bound for every value its symbols take within the bounds in force
// (DimBounds::current(), which fold() sets from the node's); a yes that needed them (no
// under DimBounds()) is noted (DimBounds::note_relied), and the analysis records the
// assumption. A rule that may drop what it proved runs it in a Scope of its own.
bool proven_at_least(const Dim& d, int64_t bound);
// Whether the node's caller records conditions (FoldInput::conditions), the symbols are
// at least 1 (the assumption in force, not --allow-empty-dims), and d is not a constant
// and may reach `bound`: then `d >= bound` is appended as one and true is returned;
// otherwise false, and nothing may rest on it.
bool assume_at_least(const Dim& d, int64_t bound);
// Puts FoldInput::conditions in force on this thread while alive (fold() does).
class ConditionSink {
 public:
  explicit ConditionSink(std::vector<std::string>* sink);
  ~ConditionSink();
  ConditionSink(const ConditionSink&) = delete;
  ConditionSink& operator=(const ConditionSink&) = delete;

 private:
  std::vector<std::string>* previous_;
};

// The integral result fact: constants out of range become unknown; elements are kept
// only if some are known, and for bool only if all are.
Fact int_result(int32_t elem_type, std::vector<Dim> shape, std::vector<Dim> elements);
// The floating result fact: elements rounded to the type; dropped when any is unknown.
Fact real_result(int32_t elem_type, std::vector<Dim> shape, const std::vector<std::optional<double>>& elements);

// One element in flight: integral (a Dim, possibly symbolic or unknown) or floating.
using Elem = std::variant<Dim, double>;
// An element operation; nullopt when the result is not known.
using ElemFn = std::function<std::optional<Elem>(const std::vector<Elem>&)>;

// The elements of `f` as Elems (empty optional when it has none).
std::optional<std::vector<Elem>> elems_of(const Fact& f);
// The fact of type `elem_type` and `shape` holding `values` (unknown: nullopt), through
// int_result or real_result by the type; for other types only type and shape.
Fact result_of(int32_t elem_type, std::vector<Dim> shape, const std::vector<std::optional<Elem>>& values);

// ---- broadcasting and moving elements -------------------------------------------------

// numpy broadcasting of two dims: 1 vs d is d; equal dims are that dim; a constant other
// than 1 wins over a symbol or unknown (a valid model has the other be 1 or equal, which
// is also what ONNX infers); anything else is unknown. nullopt for two different
// constants other than 1, which do not broadcast.
// Two symbolic dims broadcast to the one that covers the other (covers): S with
// min(S,128) is S.
std::optional<Dim> broadcast_dim(const Dim& a, const Dim& b);
bool covers(const Dim& a, const Dim& b);
// The broadcast of several shapes (aligned at the back); nullopt when any is unknown or
// two do not broadcast.
std::optional<std::vector<Dim>> broadcast_shapes(const std::vector<const std::vector<Dim>*>& shapes);

// Static shape `in` broadcasts to `out`: no higher rank, each dim 1 or out's.
bool broadcasts_to(const std::vector<int64_t>& in, const std::vector<int64_t>& out);
// For an output of static shape `out` whose axis k takes the input's indices picks[k]
// (input of static shape `in`, of the same rank), the input element behind each output
// element.
std::vector<size_t> selection_map(const std::vector<int64_t>& in, const std::vector<int64_t>& out,
                                  const std::vector<std::vector<int64_t>>& picks);
// For each element of a tensor of static shape `out`, the index of the element of a
// tensor of static shape `in` that broadcasts to it (broadcasts_to(in, out) must hold).
std::vector<size_t> broadcast_map(const std::vector<int64_t>& in, const std::vector<int64_t>& out);

// The fact of type and shape `shape` whose elements are src's picked by `map`
// (element i is src's element map[i]), or without elements when src has none.
Fact gather_elements(const Fact& src, std::vector<Dim> shape, const std::vector<size_t>& map);
// `src` with a new shape and the same elements in the same order.
Fact reshaped(const Fact& src, std::vector<Dim> shape);

// An elementwise op over broadcast inputs: output type `out_type`, shape the broadcast of
// the inputs' shapes, elements fn(...) for each position when every input has elements
// and the output shape is static and small.
Fact elementwise(const std::vector<const Fact*>& inputs, int32_t out_type, const ElemFn& fn);

// ---- the rules, by family -------------------------------------------------------------

using Rule = std::vector<Fact> (*)(const FoldInput&);

// fold_elementwise.cc
std::vector<Fact> fold_identity(const FoldInput&);
std::vector<Fact> fold_cast(const FoldInput&);
std::vector<Fact> fold_cast_like(const FoldInput&);
std::vector<Fact> fold_equal(const FoldInput&);
std::vector<Fact> fold_less(const FoldInput&);
std::vector<Fact> fold_less_or_equal(const FoldInput&);
std::vector<Fact> fold_greater(const FoldInput&);
std::vector<Fact> fold_greater_or_equal(const FoldInput&);
std::vector<Fact> fold_not(const FoldInput&);
std::vector<Fact> fold_and(const FoldInput&);
std::vector<Fact> fold_or(const FoldInput&);
std::vector<Fact> fold_where(const FoldInput&);
std::vector<Fact> fold_add(const FoldInput&);
std::vector<Fact> fold_sub(const FoldInput&);
std::vector<Fact> fold_mul(const FoldInput&);
std::vector<Fact> fold_div(const FoldInput&);
std::vector<Fact> fold_mod(const FoldInput&);
std::vector<Fact> fold_neg(const FoldInput&);
std::vector<Fact> fold_abs(const FoldInput&);
std::vector<Fact> fold_min(const FoldInput&);
std::vector<Fact> fold_max(const FoldInput&);

// fold_shape.cc
std::vector<Fact> fold_shape(const FoldInput&);
std::vector<Fact> fold_size(const FoldInput&);
std::vector<Fact> fold_constant(const FoldInput&);
std::vector<Fact> fold_constant_of_shape(const FoldInput&);
std::vector<Fact> fold_range(const FoldInput&);
std::vector<Fact> fold_one_hot(const FoldInput&);
std::vector<Fact> fold_reshape(const FoldInput&);
std::vector<Fact> fold_expand(const FoldInput&);
std::vector<Fact> fold_squeeze(const FoldInput&);
std::vector<Fact> fold_unsqueeze(const FoldInput&);
std::vector<Fact> fold_flatten(const FoldInput&);
std::vector<Fact> fold_pad(const FoldInput&);
std::vector<Fact> fold_tile(const FoldInput&);
std::vector<Fact> fold_depth_to_space(const FoldInput&);
std::vector<Fact> fold_transpose(const FoldInput&);

// fold_index.cc
std::vector<Fact> fold_concat(const FoldInput&);
std::vector<Fact> fold_gather(const FoldInput&);
std::vector<Fact> fold_slice(const FoldInput&);
std::vector<Fact> fold_scatter_nd(const FoldInput&);  // fold_scatter.cc
std::vector<Fact> fold_split(const FoldInput&);
std::vector<Fact> fold_reduce_sum(const FoldInput&);
std::vector<Fact> fold_reduce_prod(const FoldInput&);
std::vector<Fact> fold_reduce_mean(const FoldInput&);
std::vector<Fact> fold_reduce_max(const FoldInput&);
std::vector<Fact> fold_reduce_min(const FoldInput&);

// fold_spatial.cc
std::vector<Fact> fold_conv(const FoldInput&);
std::vector<Fact> fold_conv_transpose(const FoldInput&);
std::vector<Fact> fold_pool(const FoldInput&);
std::vector<Fact> fold_resize(const FoldInput&);

}  // namespace shapeprop::eval::detail
