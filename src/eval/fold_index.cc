// Folding rules for ops that select or combine elements along axes: Concat, Gather,
// Slice, Split, ReduceSum, ReduceProd.
//
// The common case is a shape value: Concat of Shape slices and constants, Gather of one
// dim with a (possibly negative) index, Slice of a shape. Elements are moved with index
// maps, so the same code serves symbolic Dims and floating values.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "eval/fold_support.h"

namespace shapeprop::eval::detail {
namespace {

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
// The bound docs/dims.md states: no tensor dim reaches 2^62 (a tensor that long would not
// fit any machine's memory, one byte an element).
constexpr int64_t kMaxTensorDim = int64_t{1} << 62;
constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();

// The product of dims[from, to). Callers use it on shapes of small non-zero element count
// only, so it cannot overflow.
int64_t product(const std::vector<int64_t>& dims, size_t from, size_t to) {
  int64_t n = 1;
  for (size_t i = from; i < to; ++i) n *= dims[i];
  return n;
}

std::vector<int64_t> iota(int64_t n) {
  std::vector<int64_t> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), int64_t{0});
  return v;
}

// ---- Slice -----------------------------------------------------------------------------

// One axis of a Slice: the output length, and when the dim is a constant the first
// input index taken (the others follow by `step`).
struct AxisSlice {
  Dim length;
  std::optional<int64_t> first;
  int64_t step = 1;
};

// ONNX's rules for a constant dim: negative start/end count from the back; then start is
// clamped to [0, d] ([0, d-1] for negative steps) and end to [0, d] ([-1, d-1]).
AxisSlice slice_constant(int64_t d, int64_t start, int64_t end, int64_t step) {
  if (d == 0) return {Dim::constant(0), 0, step};  // (and [0, d-1] would be empty)
  if (start < 0) start += d;
  if (end < 0) end += d;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, d);
    end = std::clamp<int64_t>(end, 0, d);
  } else {
    start = std::clamp<int64_t>(start, 0, d - 1);
    end = std::clamp<int64_t>(end, -1, d - 1);
  }
  // Both now lie in [-1, d], so the differences cannot overflow.
  const int64_t span = step > 0 ? end - start : start - end;
  const uint64_t magnitude = step > 0 ? static_cast<uint64_t>(step) : 0 - static_cast<uint64_t>(step);
  const int64_t n = span <= 0 ? 0 : static_cast<int64_t>(1 + (static_cast<uint64_t>(span) - 1) / magnitude);
  return {Dim::constant(n), start, step};
}

// A bound of a slice over d, as ONNX defines it: a negative one counts from the back, then
// it is clamped to [low, d + high]. A symbolic bound must have a known sign (within the
// bounds in force: S is never negative, -S is where S >= 1); the clamp is a min and a max,
// decided where the bounds decide them (min(S,128) for S on a 128-long axis).
struct SliceIndex {
  bool from_back = false;  // negative: d + i
  Dim clamped;             // clamped to [low, d + high]
};
std::optional<SliceIndex> slice_index(const Dim& d, const Dim& i, int64_t low, int64_t high) {
  const auto c = i.as_constant();
  // No tensor dim reaches 2^62 (docs/dims.md): a bound that far from 0 is past either end
  // of d, as torch's x[-k:] (an end of INT64_MAX, or of INT64_MAX less a few) says.
  if (c && *c >= kMaxTensorDim) return SliceIndex{false, d + Dim::constant(high)};
  if (c && *c <= -kMaxTensorDim) return SliceIndex{true, Dim::constant(low)};
  const bool from_back = c ? *c < 0 : proven_at_least(-i, 1);
  if (!from_back && !c && !proven_at_least(i, 0)) return std::nullopt;
  const Dim at = from_back ? d + i : i;
  const Dim clamped = Dim::max(Dim::constant(low), Dim::min(at, d + Dim::constant(high)));
  if (clamped.is_unknown()) return std::nullopt;
  return SliceIndex{from_back, clamped};
}

// A symbolic (or unknown) dim, or symbolic bounds: the length ONNX's rules give,
// max(0, ceil((end - start) / step)) with the bounds clamped (slice_index): x[:N//2] is
// floor(N/2) long, x[1:] max(N,1)-1 (N-1 where N >= 1 is known), x[:S] of a 128-long
// table min(S,128). Backward steps clamp to [0, d-1], which is empty for d = 0, and so is
// the slice: where d >= 1 is not known, the length is min(d, what it is for d >= 1),
// which is that where it is at most d anyway (x[::-2] is floor((d+1)/2) long for any d).
AxisSlice slice_symbolic(const Dim& d, const Dim& start, const Dim& end, int64_t step) {
  auto s = start.as_constant(), e = end.as_constant();
  if (step == -1 && (s == -1 || s == kInt64Max) && e == kInt64Min) return {d, std::nullopt, step};
  const AxisSlice unknown{Dim::unknown(), std::nullopt, step};
  if (d.is_unknown() || step == kInt64Min) return unknown;
  if (step < 0 && !proven_at_least(d, 1)) {
    const auto symbol = d.as_symbol();
    if (!symbol) return unknown;
    DimBounds nonempty = DimBounds::current();
    const DimBounds::Range range = nonempty.range(*symbol);
    nonempty.set_range(*symbol, {std::max<int64_t>(range.min, 1), range.max});
    AxisSlice when_nonempty;
    {
      DimBounds::Scope assumed(nonempty);  // not an assumption: the min below covers d = 0
      when_nonempty = slice_symbolic(d, start, end, step);
    }
    return {Dim::min(d, when_nonempty.length), std::nullopt, step};
  }
  const auto from = slice_index(d, start, 0, step > 0 ? 0 : -1);
  const auto to = slice_index(d, end, step > 0 ? 0 : -1, step > 0 ? 0 : -1);
  if (!from || !to) return unknown;
  // To the end: x[i:] is d - min(i, d), or max(d - i, 0) as Range(i, d) spells it, and
  // x[-i:] is d - max(d - i, 0), or min(d, i).
  Dim span = step > 0 ? to->clamped - from->clamped : from->clamped - to->clamped;
  if (step > 0 && to->clamped == d) span = from->from_back ? Dim::min(d, -start) : d - start;
  const Dim length = Dim::max(Dim::constant(0), Dim::ceil_div(span, Dim::constant(step > 0 ? step : -step)));
  return {length, std::nullopt, step};
}

AxisSlice slice_axis(const Dim& d, const Dim& start, const Dim& end, int64_t step) {
  auto dc = d.as_constant(), s = start.as_constant(), e = end.as_constant();
  if (dc && s && e) return *dc >= 0 ? slice_constant(*dc, *s, *e, step) : AxisSlice{Dim::unknown(), std::nullopt, step};
  AxisSlice sliced;
  bool relied = false;
  {
    DimBounds::Scope trial(DimBounds::current());
    sliced = slice_symbolic(d, start, end, step);
    relied = trial.relied();
  }
  if (!sliced.length.is_unknown() && relied) DimBounds::note_relied();  // the assumption counts where it decided
  return sliced;
}

struct SliceArgs {
  std::optional<std::vector<Dim>> starts, ends;
  std::optional<std::vector<int64_t>> axes, steps;
  bool axes_known = true, steps_known = true;
};

// Before opset 10 starts/ends/axes are attributes (no steps); from 10 they are inputs
// 1-4, axes and steps optional. Starts and ends keep symbolic elements (x[0:N]).
SliceArgs slice_args(const FoldInput& node) {
  SliceArgs args;
  if (!since(node, 10)) {
    if (auto s = attr_ints(node, "starts")) args.starts = to_dims(*s);
    if (auto e = attr_ints(node, "ends")) args.ends = to_dims(*e);
    args.axes = attr_ints(node, "axes");
    return args;
  }
  if (const Fact* s = node.input(1); s && s->ints) args.starts = *s->ints;
  if (const Fact* e = node.input(2); e && e->ints) args.ends = *e->ints;
  if (const Fact* a = node.input(3)) {
    args.axes = constant_ints(a);
    args.axes_known = args.axes.has_value();
  }
  if (const Fact* st = node.input(4)) {
    args.steps = constant_ints(st);
    args.steps_known = args.steps.has_value();
  }
  return args;
}

// ---- Reduce ----------------------------------------------------------------------------

// A floating sum or product is exact in any order (so equal to what any runtime computes)
// when every value is an integer and the magnitudes stay below 2^mantissa bits.
std::optional<double> exact_limit(int32_t elem_type) {
  if (elem_type == TensorProto::FLOAT) return 16777216.0;           // 2^24
  if (elem_type == TensorProto::DOUBLE) return 9007199254740992.0;  // 2^53
  return std::nullopt;
}

// Reduces `x` over `axes` (normalised) by sum or product.
Fact reduce_elements(const Fact& x, const std::vector<int64_t>& in, const std::vector<int64_t>& axes,
                     std::vector<Dim> out_shape, bool sum) {
  // The output index of each input element: reduced axes contribute nothing.
  std::vector<int64_t> kept_shape = in;
  for (int64_t a : axes) kept_shape[static_cast<size_t>(a)] = 1;
  // More outputs than inputs only when reducing an empty tensor: [0,10^9] over axis 0.
  if (!fits_cap(x.elem_type, static_count(kept_shape))) return Fact::tensor(x.elem_type, std::move(out_shape));
  const auto out_count = static_cast<size_t>(static_count(kept_shape));
  std::vector<size_t> target = broadcast_map(kept_shape, in);  // in-element -> out-element
  if (x.ints) {
    std::vector<Dim> acc(out_count, Dim::constant(sum ? 0 : 1));
    for (size_t i = 0; i < target.size(); ++i) {
      Dim& a = acc[target[i]];
      a = sum ? a + (*x.ints)[i] : a * (*x.ints)[i];
    }
    return int_result(x.elem_type, std::move(out_shape), std::move(acc));
  }
  auto limit = exact_limit(x.elem_type);
  if (!x.reals || !limit) return Fact::tensor(x.elem_type, std::move(out_shape));
  std::vector<double> acc(out_count, sum ? 0.0 : 1.0), bound(out_count, sum ? 0.0 : 1.0);
  for (size_t i = 0; i < target.size(); ++i) {
    const double v = (*x.reals)[i];
    if (v != std::trunc(v)) return Fact::tensor(x.elem_type, std::move(out_shape));  // also NaN, inf
    const size_t o = target[i];
    bound[o] = sum ? bound[o] + std::fabs(v) : bound[o] * std::fabs(v);
    acc[o] = sum ? acc[o] + v : acc[o] * v;
    if (bound[o] >= *limit) return Fact::tensor(x.elem_type, std::move(out_shape));
  }
  return Fact::real_tensor(x.elem_type, std::move(out_shape), std::move(acc));
}

// ReduceSum / ReduceProd: axes as attribute before `axes_input_since`, as optional input
// 1 from it; keepdims (default 1); no axes means all, or nothing with
// noop_with_empty_axes=1.
enum class Reduction { Sum, Product, ShapeOnly };

Fact reduce(const FoldInput& node, int axes_input_since, Reduction how) {
  const Fact* x = node.input(0);
  const int32_t type = x ? x->elem_type : 0;
  const bool keepdims = attr_int(node, "keepdims", 1) != 0;
  std::optional<std::vector<int64_t>> axes;
  if (since(node, axes_input_since)) {
    if (const Fact* a = node.input(1)) {
      axes = constant_ints(a);
      if (!axes) {
        // Which axes go is unknown; with keepdims the rank still stays.
        if (keepdims && x && x->shape) return typed(type, std::vector<Dim>(x->shape->size(), Dim::unknown()));
        return typed(type, std::nullopt);
      }
    }
  } else {
    axes = attr_ints(node, "axes");
  }
  if (!x || !x->shape) return typed(type, std::nullopt);
  const int64_t rank = static_cast<int64_t>(x->shape->size());
  if (!axes || axes->empty()) {
    if (attr_int(node, "noop_with_empty_axes", 0) != 0) return *x;
    axes = iota(rank);
  }
  auto reduced = normalize_axes(*axes, rank);
  if (!reduced) return typed(type, std::nullopt);
  std::vector<Dim> out;
  for (int64_t i = 0; i < rank; ++i) {
    const bool gone = std::find(reduced->begin(), reduced->end(), i) != reduced->end();
    if (!gone) out.push_back((*x->shape)[static_cast<size_t>(i)]);
    else if (keepdims) out.push_back(Dim::constant(1));
  }
  auto in = how == Reduction::ShapeOnly ? std::nullopt : shape_with_elements(x);
  if (!in) return Fact::tensor(type, std::move(out));
  return reduce_elements(*x, *in, *reduced, std::move(out), how == Reduction::Sum);
}

// ---- Split -----------------------------------------------------------------------------

// The sizes of Split's parts: the `split` input (opset 13+) or attribute (before; opset
// 1 also took an input), else equal parts of the axis's dim. From opset 18 equal parts
// come from `num_outputs`, and an uneven dim gives ceil-sized parts and a smaller last
// one (sized as ONNX's inference sizes it).
std::optional<std::vector<Dim>> split_sizes(const FoldInput& node, const Dim& d, size_t parts) {
  if (!since(node, 13))
    if (auto s = attr_ints(node, "split")) return to_dims(*s);
  if (const Fact* s = node.input(1)) {
    if (!s->ints) return std::nullopt;
    return *s->ints;
  }
  if (auto n = attr_int(node, "num_outputs"); n && *n != static_cast<int64_t>(parts)) return std::nullopt;
  if (parts == 0) return std::nullopt;
  const auto n = static_cast<int64_t>(parts);
  auto c = d.as_constant();
  if (c && *c % n != 0) {
    if (!attr_int(node, "num_outputs")) return std::nullopt;  // uneven before opset 18: invalid
    const int64_t chunk = *c / n + 1, last = *c - chunk * (n - 1);
    if (last <= 0) return std::vector<Dim>(parts, Dim::unknown());
    std::vector<Dim> sizes(parts, Dim::constant(chunk));
    sizes.back() = Dim::constant(last);
    return sizes;
  }
  // Equal parts of a symbolic dim: the runtimes refuse one that n does not divide, so
  // floor(d/n) is exact wherever the node runs.
  if (c || !attr_int(node, "num_outputs")) return std::vector<Dim>(parts, Dim::floor_div(d, Dim::constant(n)));
  // A symbolic dim in num_outputs parts: ceil(d/n) each, the rest last, where that rest
  // is never negative (always so for halves).
  const Dim chunk = Dim::floor_div(d + Dim::constant(n - 1), Dim::constant(n));
  const Dim last = d - Dim::constant(n - 1) * chunk;
  if (!proven_at_least(last, 0)) return std::vector<Dim>(parts, Dim::unknown());
  std::vector<Dim> sizes(parts, chunk);
  sizes.back() = last;
  return sizes;
}

// Sizes that can split dim d: none negative, and when all are known, adding up to d.
bool valid_split(const std::vector<Dim>& sizes, const Dim& d) {
  Dim total = Dim::constant(0);
  for (const Dim& s : sizes) {
    if (s.as_constant().value_or(0) < 0) return false;
    total = total + s;
  }
  return total.equals(d) != false;
}

}  // namespace

// Concat(inputs...; axis): dims off the axis are the inputs' (a constant where any input
// has one, else the first symbol); the axis's dim is the sum. Elements are concatenated
// when every input has them.
std::vector<Fact> fold_concat(const FoldInput& node) {
  const int32_t type = common_type(node.inputs);
  auto axis_attr = attr_int(node, "axis");
  const std::vector<Dim>* first = nullptr;
  for (const Fact* f : node.inputs)
    if (f && f->shape) {
      if (first && f->shape->size() != first->size()) return {typed(type, std::nullopt)};  // invalid
      if (!first) first = &*f->shape;
    }
  if (!first || !axis_attr || node.inputs.empty()) return {typed(type, std::nullopt)};
  const int64_t rank = static_cast<int64_t>(first->size());
  auto axis = normalize_axis(*axis_attr, rank);
  if (!axis) return {typed(type, std::nullopt)};
  const auto ax = static_cast<size_t>(*axis);
  std::vector<Dim> out(first->size(), Dim::unknown());
  out[ax] = Dim::constant(0);
  for (const Fact* f : node.inputs) {
    if (!f || !f->shape) {
      out[ax] = Dim::unknown();
      continue;
    }
    for (size_t k = 0; k < out.size(); ++k) {
      const Dim& d = (*f->shape)[k];
      if (k == ax)
        out[k] = out[k] + d;
      else if (out[k].is_unknown() || (!out[k].is_constant() && d.is_constant()))
        out[k] = d;
    }
  }
  // Elements: for each index before the axis, each input's block in turn.
  auto out_static = static_dims(out);
  const int64_t count = static_count(out_static);
  if (!fits_cap(type, count)) return {Fact::tensor(type, std::move(out))};
  if (count == 0) return {result_of(type, std::move(out), {})};  // dims may be huge beside the 0
  std::vector<std::vector<Elem>> parts;
  std::vector<int64_t> blocks;
  for (const Fact* f : node.inputs) {
    auto s = shape_with_elements(f);
    // An integral part whose elements are not known (Unsqueeze of a computed scalar)
    // leaves its places unknown and keeps the others' (a shape value {B, ?, 4, 16}).
    if (!s && f && !f->has_elements() && is_integral_type(type))
      if (auto unknown = static_shape(f)) {
        parts.emplace_back(static_cast<size_t>(static_count(unknown)), Elem{Dim::unknown()});
        blocks.push_back(product(*unknown, ax, unknown->size()));
        continue;
      }
    if (!s) return {Fact::tensor(type, std::move(out))};
    parts.push_back(*elems_of(*f));
    blocks.push_back(product(*s, ax, s->size()));
  }
  std::vector<std::optional<Elem>> values;
  const int64_t outer = product(*out_static, 0, ax);
  for (int64_t o = 0; o < outer; ++o)
    for (size_t i = 0; i < parts.size(); ++i)
      for (int64_t b = 0; b < blocks[i]; ++b) values.push_back(parts[i][static_cast<size_t>(o * blocks[i] + b)]);
  return {result_of(type, std::move(out), values)};
}

// Gather(data, indices; axis): output shape data[:axis] + indices + data[axis+1:]; with
// constant indices (negative ones count from the back) and known data elements, the
// picked elements. Gather(Shape(x), -1) is x's last dim.
std::vector<Fact> fold_gather(const FoldInput& node) {
  const Fact *data = node.input(0), *indices = node.input(1);
  const int32_t type = data ? data->elem_type : 0;
  if (!data || !data->shape || !indices || !indices->shape) return {typed(type, std::nullopt)};
  const std::vector<Dim>& ds = *data->shape;
  auto axis = normalize_axis(attr_int(node, "axis", 0), static_cast<int64_t>(ds.size()));
  if (!axis) return {typed(type, std::nullopt)};
  const auto ax = static_cast<size_t>(*axis);
  std::vector<Dim> out(ds.begin(), ds.begin() + *axis);
  out.insert(out.end(), indices->shape->begin(), indices->shape->end());
  out.insert(out.end(), ds.begin() + *axis + 1, ds.end());
  auto in = shape_with_elements(data);
  auto picks = constant_ints(indices);
  auto out_static = static_dims(out);
  const int64_t count = static_count(out_static);
  if (!in || !picks || !fits_cap(type, count)) return {Fact::tensor(type, std::move(out))};
  if (count == 0) return {gather_elements(*data, std::move(out), {})};  // dims may be huge beside the 0
  if (static_count(in) == 0) return {Fact::tensor(type, std::move(out))};  // indices into an empty axis: invalid
  const int64_t d = (*in)[ax], inner = product(*in, ax + 1, in->size()), outer = product(*in, 0, ax);
  for (int64_t& i : *picks) {
    if (i < -d || i >= d) return {Fact::tensor(type, std::move(out))};  // out of range: invalid
    if (i < 0) i += d;
  }
  std::vector<size_t> map;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i : *picks)
      for (int64_t k = 0; k < inner; ++k) map.push_back(static_cast<size_t>((o * d + i) * inner + k));
  return {gather_elements(*data, std::move(out), map)};
}

// OneHot(indices, depth, values): the indices' shape with `depth` inserted at `axis`
// (default -1, the last); each element is values[1] where its position along that axis is
// the index there (a negative index counting from depth), values[0] elsewhere, an index
// outside [-depth, depth) giving values[0] throughout, as ONNX says. depth may be of any
// numeric type (ONNX casts it to int64). The elements when the indices, depth and values
// are known and few (torch's repeat_interleave in TorchScript exports: OneHot of constants,
// then Tile by the result).
std::vector<Fact> fold_one_hot(const FoldInput& node) {
  const Fact *indices = node.input(0), *depth = node.input(1), *values = node.input(2);
  const int32_t type = values ? values->elem_type : 0;
  if (!indices || !indices->shape) return {typed(type, std::nullopt)};
  std::optional<Dim> n = scalar_dim(depth);
  if (!n && depth && depth->reals && depth->reals->size() == 1 && std::isfinite((*depth->reals)[0]) &&
      std::fabs((*depth->reals)[0]) < 1e15)
    n = Dim::constant(static_cast<int64_t>((*depth->reals)[0]));
  const std::vector<Dim>& in = *indices->shape;
  const auto axis = normalize_axis(attr_int(node, "axis", -1), static_cast<int64_t>(in.size()) + 1);
  if (!axis) return {typed(type, std::nullopt)};
  std::vector<Dim> out = in;
  out.insert(out.begin() + *axis, n && n->as_constant().value_or(1) > 0 ? *n : Dim::unknown());
  const auto ids = constant_ints(indices);
  const auto shape = static_dims(out);
  const int64_t count = static_count(shape);
  if (!values || !ids || !shape || !fits_cap(type, count) || values->static_size() != 2) return {Fact::tensor(type, std::move(out))};
  const int64_t classes = (*shape)[static_cast<size_t>(*axis)];
  int64_t inner = 1;
  for (size_t k = static_cast<size_t>(*axis); k < in.size(); ++k) inner *= (*shape)[k + 1];
  std::vector<size_t> pick(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    const int64_t outer = i / (classes * inner), k = (i / inner) % classes, rest = i % inner;
    int64_t index = (*ids)[static_cast<size_t>(outer * inner + rest)];
    if (index < 0) index += classes;
    pick[static_cast<size_t>(i)] = index == k ? 1 : 0;
  }
  return {gather_elements(*values, std::move(out), pick)};
}

// Slice(data, starts, ends[, axes, steps]): per ONNX's clamping rules on constant dims
// (INT64_MAX ends, negative starts/ends, negative steps); symbolic dims and bounds where
// their signs are known (slice_symbolic). Unsliced axes keep their dims; elements when every axis's
// indices are known.
std::vector<Fact> fold_slice(const FoldInput& node) {
  const Fact* data = node.input(0);
  const int32_t type = data ? data->elem_type : 0;
  if (!data || !data->shape) return {typed(type, std::nullopt)};
  const std::vector<Dim>& ds = *data->shape;
  const auto rank = static_cast<int64_t>(ds.size());
  SliceArgs args = slice_args(node);
  // Which axes are sliced, when known: the given axes, or 0..n-1 for n starts.
  std::optional<std::vector<int64_t>> axes = args.axes;
  if (!args.axes_known) axes.reset();
  else if (!axes && args.starts) axes = iota(static_cast<int64_t>(args.starts->size()));
  if (axes) {
    axes = normalize_axes(*axes, rank);
    if (!axes) return {typed(type, std::nullopt)};  // invalid
  }
  std::vector<Dim> out = ds;
  const bool bounds_known = args.starts && args.ends && args.steps_known && axes;
  const size_t n = axes ? axes->size() : 0;
  if (!bounds_known || args.starts->size() != n || args.ends->size() != n || (args.steps && args.steps->size() != n)) {
    // The rank stays; sliced axes (all, when the axes are not known) become unknown.
    for (size_t k = 0; k < out.size(); ++k)
      if (!axes || std::find(axes->begin(), axes->end(), static_cast<int64_t>(k)) != axes->end()) out[k] = Dim::unknown();
    return {Fact::tensor(type, std::move(out))};
  }
  std::vector<std::optional<AxisSlice>> sliced(ds.size());
  for (size_t i = 0; i < n; ++i) {
    const int64_t step = args.steps ? (*args.steps)[i] : 1;
    if (step == 0) return {typed(type, std::nullopt)};  // invalid
    const auto k = static_cast<size_t>((*axes)[i]);
    sliced[k] = slice_axis(ds[k], (*args.starts)[i], (*args.ends)[i], step);
    out[k] = sliced[k]->length;
  }
  auto in = shape_with_elements(data);
  auto out_static = static_dims(out);
  const int64_t count = static_count(out_static);
  if (!in || !fits_cap(type, count)) return {Fact::tensor(type, std::move(out))};
  if (count == 0) return {gather_elements(*data, std::move(out), {})};  // dims may be huge beside the 0
  std::vector<std::vector<int64_t>> picks;
  for (size_t k = 0; k < ds.size(); ++k) {
    std::vector<int64_t> p = iota((*out_static)[k]);
    if (sliced[k] && !sliced[k]->first) return {Fact::tensor(type, std::move(out))};
    if (sliced[k])
      for (int64_t& i : p) i = *sliced[k]->first + i * sliced[k]->step;
    picks.push_back(std::move(p));
  }
  return {gather_elements(*data, std::move(out), selection_map(*in, *out_static, picks))};
}

// Split(data[, split]; axis): one fact per output, the axis's dim replaced by each
// part's size (split_sizes); elements when the data's are known.
std::vector<Fact> fold_split(const FoldInput& node) {
  const Fact* data = node.input(0);
  const int32_t type = data ? data->elem_type : 0;
  const size_t parts = node.num_outputs;
  std::vector<Fact> unknown(parts, typed(type, std::nullopt));
  if (!data || !data->shape) return unknown;
  const std::vector<Dim>& ds = *data->shape;
  auto axis = normalize_axis(attr_int(node, "axis", 0), static_cast<int64_t>(ds.size()));
  if (!axis) return unknown;
  const auto ax = static_cast<size_t>(*axis);
  auto sizes = split_sizes(node, ds[ax], parts);
  if (sizes && (sizes->size() != parts || !valid_split(*sizes, ds[ax]))) return unknown;
  auto in = shape_with_elements(data);
  std::vector<Fact> out;
  int64_t offset = 0;  // where the part starts along the axis, while known
  for (size_t p = 0; p < parts; ++p) {
    std::vector<Dim> shape = ds;
    shape[ax] = sizes ? (*sizes)[p] : Dim::unknown();
    auto len = shape[ax].as_constant();
    if (!in || !len || offset < 0 || *len > (*in)[ax] - offset) {
      offset = -1;
      out.push_back(Fact::tensor(type, std::move(shape)));
      continue;
    }
    std::vector<int64_t> part_shape = *in;
    part_shape[ax] = *len;
    const int64_t start = offset;
    offset += *len;
    if (static_count(part_shape) == 0) {  // dims may be huge beside the 0
      out.push_back(gather_elements(*data, std::move(shape), {}));
      continue;
    }
    std::vector<std::vector<int64_t>> picks;
    for (size_t k = 0; k < in->size(); ++k) picks.push_back(iota(part_shape[k]));
    for (int64_t& i : picks[ax]) i += start;
    out.push_back(gather_elements(*data, std::move(shape), selection_map(*in, part_shape, picks)));
  }
  return out;
}

std::vector<Fact> fold_reduce_sum(const FoldInput& node) { return {reduce(node, 13, Reduction::Sum)}; }
std::vector<Fact> fold_reduce_prod(const FoldInput& node) { return {reduce(node, 18, Reduction::Product)}; }
// The shapes only (and, with noop_with_empty_axes, the input as it is, elements too).
std::vector<Fact> fold_reduce_mean(const FoldInput& node) { return {reduce(node, 18, Reduction::ShapeOnly)}; }
std::vector<Fact> fold_reduce_max(const FoldInput& node) { return {reduce(node, 18, Reduction::ShapeOnly)}; }
std::vector<Fact> fold_reduce_min(const FoldInput& node) { return {reduce(node, 18, Reduction::ShapeOnly)}; }

}  // namespace shapeprop::eval::detail
