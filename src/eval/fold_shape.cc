// Folding rules for ops that make or rearrange shapes: Shape, Size, Constant,
// ConstantOfShape, Range, Reshape, Expand, Squeeze, Unsqueeze, Flatten, Pad, Tile,
// DepthToSpace, SpaceToDepth.
//
// These are where symbolic Dims pay off: Shape(x) holds x's dims as elements, and the ops
// that take a shape as a value (Reshape, Expand, ConstantOfShape, Range) turn those
// elements back into output dims, so [N,M,3] -> Shape -> ... -> Reshape gives [N,3*M].
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "eval/fold_support.h"

namespace shapeprop::eval::detail {
namespace {

constexpr int32_t kInt64 = TensorProto::INT64;
constexpr int64_t kExactInDouble = int64_t{1} << 53;

// The dims a 1-D shape input asks for: its elements (symbolic allowed), or when only its
// length is known, that many unknown dims. nullopt when even the length is not known (or
// is beyond any real rank: the same cap as for elements).
std::optional<std::vector<Dim>> requested_dims(const Fact* shape) {
  if (!shape) return std::nullopt;
  if (shape->ints && (!shape->shape || shape->shape->size() == 1)) return *shape->ints;
  auto s = static_shape(shape);
  if (s && s->size() == 1 && fits_cap(TensorProto::INT64, (*s)[0]))
    return std::vector<Dim>(static_cast<size_t>((*s)[0]), Dim::unknown());
  return std::nullopt;
}

// Axes given as the attribute `axes` before opset `input_since`, as input `input` from it.
// `present` tells whether axes were given at all; nullopt axes with present = true means
// they were given but are not known.
struct Axes {
  bool present = false;
  std::optional<std::vector<int64_t>> values;
};

Axes axes_by_opset(const FoldInput& node, int input_since, size_t input) {
  Axes axes;
  if (since(node, input_since)) {
    const Fact* f = node.input(input);
    axes.present = f != nullptr;
    if (f) axes.values = constant_ints(f);
  } else {
    axes.values = attr_ints(node, "axes");
    axes.present = axes.values.has_value();
  }
  return axes;
}

int64_t rank_of(const std::vector<Dim>& shape) { return static_cast<int64_t>(shape.size()); }

// ceil(span / step) clamped at 0, for step > 0.
int64_t ceil_div_nonneg(int64_t span, uint64_t step) {
  if (span <= 0) return 0;
  return static_cast<int64_t>(1 + (static_cast<uint64_t>(span) - 1) / step);
}

// The dim Reshape infers for its -1: the input's element count over the product of the
// other output dims. Dims equal on both sides cancel first, so [N,3,4] -> [-1,12] gives N
// and [N,M,2] -> [N,-1] gives 2*M; then a monomial divides what remains term by term
// ([4*B,S,S] -> [B,4,S,-1] gives S), or a constant divides it: the runtimes refuse a
// count the others do not divide, so floor division is exact wherever the node runs
// ([N] -> [2,-1] gives floor(N/2)). (A known product of 0 makes -1 an error at run time,
// so cancelling a symbol that may be 0 is sound.)
Dim inferred_dim(const std::vector<Dim>& in, const std::vector<Dim>& out, size_t at) {
  std::vector<Dim> num = in, den;
  for (size_t j = 0; j < out.size(); ++j)
    if (j != at) den.push_back(out[j]);
  for (auto d = den.begin(); d != den.end();) {
    auto n = std::find(num.begin(), num.end(), *d);
    if (d->is_unknown() || d->as_constant() == 0 || n == num.end()) {
      ++d;
      continue;
    }
    num.erase(n);
    d = den.erase(d);
  }
  Dim numerator = Dim::constant(1), denominator = Dim::constant(1);
  for (const Dim& d : num) numerator = numerator * d;
  for (const Dim& d : den) denominator = denominator * d;
  if (auto c = denominator.as_constant()) return *c > 0 ? Dim::floor_div(numerator, denominator) : Dim::unknown();
  return Dim::exact_div(numerator, denominator);
}

// Range's length for floating inputs, as ONNX and the runtimes compute it: the
// difference in the type, the division in double.
Fact floating_range(int32_t type, const Fact* start, const Fact* limit, const Fact* delta) {
  Fact unknown_length = Fact::tensor(type, {Dim::unknown()});
  if (!start || !limit || !delta || (type != TensorProto::FLOAT && type != TensorProto::DOUBLE)) return unknown_length;
  const std::optional<double> s = start->scalar_real(), l = limit->scalar_real(), d = delta->scalar_real();
  if (!s.has_value() || !l.has_value() || !d.has_value() || d.value() == 0) return unknown_length;
  const double n = std::ceil(round_to(type, l.value() - s.value()).value_or(0) / d.value());
  if (std::isnan(n) || n >= kExactInDouble) return unknown_length;
  const int64_t length = n <= 0 ? 0 : static_cast<int64_t>(n);
  // The elements where every one is an integer the type holds exactly (torch's float
  // arange(k): 0.0, 1.0, ...): start + i * delta and the runtimes' running sums then agree,
  // each step exact. Otherwise they may round differently, and only the length is said.
  const double exact = type == TensorProto::FLOAT ? 16777216.0 : kExactInDouble;  // 2^24, 2^53
  const double last = s.value() + static_cast<double>(std::max<int64_t>(length - 1, 0)) * d.value();
  if (static_cast<size_t>(length) > Fact::kMaxRealElements || std::trunc(s.value()) != s.value() ||
      std::trunc(d.value()) != d.value() || std::fabs(s.value()) > exact || std::fabs(last) > exact)
    return Fact::tensor(type, {Dim::constant(length)});
  std::vector<std::optional<double>> values;
  for (int64_t i = 0; i < length; ++i) values.push_back(s.value() + static_cast<double>(i) * d.value());
  return real_result(type, {Dim::constant(length)}, values);
}

}  // namespace

// Shape(x): x's dims as a 1-D int64 tensor, symbols included; start/end (opset 15) are
// clamped like Slice's, negative counting from the back.
std::vector<Fact> fold_shape(const FoldInput& node) {
  const Fact* x = node.input(0);
  if (!x || !x->shape) return {Fact::tensor(kInt64, {Dim::unknown()})};
  const int64_t rank = rank_of(*x->shape);
  auto clamp_index = [rank](int64_t i) { return std::clamp<int64_t>(i < 0 ? i + rank : i, 0, rank); };
  const int64_t start = clamp_index(attr_int(node, "start", 0));
  const int64_t end = std::max(start, clamp_index(attr_int(node, "end", rank)));
  std::vector<Dim> dims(x->shape->begin() + start, x->shape->begin() + end);
  return {int_result(kInt64, {Dim::constant(end - start)}, std::move(dims))};
}

// Size(x): the product of x's dims, a polynomial over its symbols.
std::vector<Fact> fold_size(const FoldInput& node) {
  const Fact* x = node.input(0);
  if (!x || !x->shape) return {Fact::tensor(kInt64, {})};
  Dim n = Dim::constant(1);
  for (const Dim& d : *x->shape) n = n * d;
  return {int_result(kInt64, {}, {n})};
}

// Constant: whichever value_* attribute is set. Strings and sparse values give type and
// shape only.
std::vector<Fact> fold_constant(const FoldInput& node) {
  using A = onnx::AttributeProto;
  for (const A* a : node.attributes) {
    if (!a) continue;
    const std::string& name = a->name();
    const auto count = [](int n) { return Dim::constant(n); };
    if (name == "value") return {Fact::of_tensor(a->t())};
    if (name == "value_int") return {Fact::int_tensor(kInt64, {}, {Dim::constant(a->i())})};
    if (name == "value_ints")
      return {Fact::int_tensor(kInt64, {count(a->ints_size())}, to_dims({a->ints().begin(), a->ints().end()}))};
    if (name == "value_float") return {Fact::real_tensor(TensorProto::FLOAT, {}, {double{a->f()}})};
    if (name == "value_floats")
      return {Fact::real_tensor(TensorProto::FLOAT, {count(a->floats_size())}, {a->floats().begin(), a->floats().end()})};
    if (name == "value_string") return {Fact::tensor(TensorProto::STRING, {})};
    if (name == "value_strings") return {Fact::tensor(TensorProto::STRING, {count(a->strings_size())})};
    if (name == "sparse_value") {
      const auto& sparse = a->sparse_tensor();
      return {Fact::tensor(sparse.values().data_type(), to_dims({sparse.dims().begin(), sparse.dims().end()}))};
    }
  }
  return {Fact()};
}

// ConstantOfShape(shape): dims from the input's elements (symbolic allowed); filled with
// the `value` attribute (default float 0) when the shape is static and small.
std::vector<Fact> fold_constant_of_shape(const FoldInput& node) {
  const TensorProto* value = attr_tensor(node, "value");
  const Fact fill = value ? Fact::of_tensor(*value) : Fact::real_tensor(TensorProto::FLOAT, {Dim::constant(1)}, {0.0});
  auto dims = requested_dims(node.input(0));
  if (!dims) return {typed(fill.elem_type, std::nullopt)};
  for (const Dim& d : *dims)
    if (d.as_constant().value_or(0) < 0) return {typed(fill.elem_type, std::nullopt)};  // invalid
  auto out = static_dims(*dims);
  const int64_t count = static_count(out);
  auto fill_values = elems_of(fill);
  if (!fits_cap(fill.elem_type, count) || !fill_values || fill_values->size() != 1)
    return {Fact::tensor(fill.elem_type, std::move(*dims))};
  return {gather_elements(fill, std::move(*dims), std::vector<size_t>(static_cast<size_t>(count), 0))};
}

// Range(start, limit, delta): length max(ceil((limit-start)/delta), 0). Integral: exact
// for constants, and symbolic for symbolic bounds (Range(0, N, 1) has N elements,
// Range(0, N, 2) floor((N+1)/2), Range(S, 128, 1) max(128-S,0)... as Dim::max keeps it
// where the sign of limit-start is not known); elements start + i*delta when the length
// is a small constant. Floating: the length (floating_range), and the elements only where
// they are integers the type holds exactly: elsewhere runtimes accumulate them differently.
std::vector<Fact> fold_range(const FoldInput& node) {
  const Fact *start = node.input(0), *limit = node.input(1), *delta = node.input(2);
  const int32_t type = common_type({start, limit, delta});
  Fact unknown_length = Fact::tensor(type, {Dim::unknown()});
  if (is_floating_type(type)) return {floating_range(type, start, limit, delta)};
  auto s = scalar_dim(start), l = scalar_dim(limit);
  auto step = constant_scalar(delta);
  if (!is_integral_type(type) || !s || !l || !step || *step == 0) return {unknown_length};
  const Dim span = *step > 0 ? *l - *s : *s - *l;
  const uint64_t magnitude = *step > 0 ? static_cast<uint64_t>(*step) : 0 - static_cast<uint64_t>(*step);
  Dim length;
  if (auto c = span.as_constant()) {
    // ONNX computes the length in double; beyond 2^53 it might round differently.
    if (*c < kExactInDouble && *c > -kExactInDouble) length = Dim::constant(ceil_div_nonneg(*c, magnitude));
  } else if (magnitude <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    length = Dim::max(Dim::constant(0), Dim::ceil_div(span, Dim::constant(static_cast<int64_t>(magnitude))));
  }
  auto n = length.as_constant();
  if (!n || static_cast<size_t>(*n) > Fact::kMaxIntElements) return {Fact::tensor(type, {length})};
  std::vector<Dim> values;
  for (int64_t i = 0; i < *n; ++i) values.push_back(*s + Dim::constant(i) * Dim::constant(*step));
  return {int_result(type, {length}, std::move(values))};
}

// Reshape(data, shape): output dims from the target's elements. 0 copies the input's dim
// (unless allowzero=1); one -1 is inferred (inferred_dim); other elements, symbolic ones
// included, are the dims. (A symbol standing for 0 at run time would copy instead; like
// ONNX's own data propagation, we take a symbolic element as the size it names.) The
// elements carry over unchanged. Before opset 5 the target is the `shape` attribute.
std::vector<Fact> fold_reshape(const FoldInput& node) {
  const Fact* data = node.input(0);
  const int32_t type = data ? data->elem_type : 0;
  std::optional<std::vector<Dim>> target;
  if (since(node, 5)) {
    target = requested_dims(node.input(1));
  } else if (auto s = attr_ints(node, "shape")) {
    target = to_dims(*s);
  }
  if (!target) return {typed(type, std::nullopt)};
  const bool allow_zero = attr_int(node, "allowzero", 0) != 0;
  const std::vector<Dim>* in = data && data->shape ? &*data->shape : nullptr;
  std::vector<Dim> out;
  std::optional<size_t> infer_at;
  for (size_t i = 0; i < target->size(); ++i) {
    const Dim& t = (*target)[i];
    auto c = t.as_constant();
    if (c == 0 && !allow_zero) {
      out.push_back(in && i < in->size() ? (*in)[i] : Dim::unknown());
    } else if (c == -1) {
      if (infer_at) return {typed(type, std::nullopt)};  // two -1: invalid
      infer_at = i;
      out.push_back(Dim::unknown());
    } else if (c && *c < -1) {
      return {typed(type, std::nullopt)};  // invalid
    } else {
      out.push_back(t);
    }
  }
  if (infer_at && in) out[*infer_at] = inferred_dim(*in, out, *infer_at);
  auto out_static = static_dims(out);
  const int64_t count = static_count(out_static);
  if (data && data->has_elements() && count >= 0) {
    const size_t n = data->ints ? data->ints->size() : data->reals->size();
    if (static_cast<size_t>(count) == n) return {reshaped(*data, std::move(out))};
  }
  return {Fact::tensor(type, std::move(out))};
}

// Expand(x, shape): the bidirectional broadcast of x's shape and the target's elements
// (1 vs N is N; an unknown target element against x's 1 stays unknown).
std::vector<Fact> fold_expand(const FoldInput& node) {
  const Fact* x = node.input(0);
  const int32_t type = x ? x->elem_type : 0;
  auto target = requested_dims(node.input(1));
  if (!x || !x->shape || !target) return {typed(type, std::nullopt)};
  for (const Dim& d : *target)
    if (d.as_constant().value_or(0) < 0) return {typed(type, std::nullopt)};  // invalid
  auto broadcast = broadcast_shapes({&*x->shape, &*target});
  if (!broadcast) return {typed(type, std::nullopt)};  // does not broadcast: invalid
  std::vector<Dim> out = std::move(*broadcast);
  auto in_static = shape_with_elements(x), out_static = static_dims(out);
  if (!in_static || !fits_cap(type, static_count(out_static)) || !broadcasts_to(*in_static, *out_static))
    return {Fact::tensor(type, std::move(out))};
  return {gather_elements(*x, std::move(out), broadcast_map(*in_static, *out_static))};
}

// Squeeze(data[, axes]): axes as attribute before opset 13, as input from 13. Without
// axes, every dim that is 1 goes, which needs every dim known. Empty axes are left
// undecided: ONNX's inference removes nothing, runtimes remove all 1s.
std::vector<Fact> fold_squeeze(const FoldInput& node) {
  const Fact* x = node.input(0);
  const int32_t type = x ? x->elem_type : 0;
  const Axes axes = axes_by_opset(node, 13, 1);
  if (!x || !x->shape || (axes.present && (!axes.values || axes.values->empty()))) return {typed(type, std::nullopt)};
  const std::vector<Dim>& in = *x->shape;
  std::vector<Dim> out;
  if (!axes.present) {
    for (const Dim& d : in) {
      auto c = d.as_constant();
      if (!c) return {typed(type, std::nullopt)};  // N may or may not be 1
      if (*c != 1) out.push_back(d);
    }
  } else {
    auto drop = normalize_axes(*axes.values, rank_of(in));
    if (!drop) return {typed(type, std::nullopt)};
    for (size_t i = 0; i < in.size(); ++i) {
      const bool squeezed = std::find(drop->begin(), drop->end(), static_cast<int64_t>(i)) != drop->end();
      if (squeezed && in[i].as_constant().value_or(1) != 1) return {typed(type, std::nullopt)};  // invalid
      if (!squeezed) out.push_back(in[i]);
    }
  }
  return {reshaped(*x, std::move(out))};
}

// Unsqueeze(data, axes): axes (attribute before opset 13, input from 13) index the
// output, whose rank is the input's plus their number; 1s go there, the input's dims
// fill the rest in order.
std::vector<Fact> fold_unsqueeze(const FoldInput& node) {
  const Fact* x = node.input(0);
  const int32_t type = x ? x->elem_type : 0;
  const Axes axes = axes_by_opset(node, 13, 1);
  if (!x || !x->shape || !axes.values) return {typed(type, std::nullopt)};
  const int64_t out_rank = rank_of(*x->shape) + static_cast<int64_t>(axes.values->size());
  auto ones = normalize_axes(*axes.values, out_rank);
  if (!ones) return {typed(type, std::nullopt)};
  std::vector<Dim> out;
  auto next = x->shape->begin();
  for (int64_t i = 0; i < out_rank; ++i) {
    if (std::find(ones->begin(), ones->end(), i) != ones->end())
      out.push_back(Dim::constant(1));
    else
      out.push_back(*next++);
  }
  return {reshaped(*x, std::move(out))};
}

// Flatten(x; axis): [product of the dims before axis, product of the rest]; axis may be
// negative from opset 11, and equal to the rank. The elements carry over.
std::vector<Fact> fold_flatten(const FoldInput& node) {
  const Fact* x = node.input(0);
  const int32_t type = x ? x->elem_type : 0;
  if (!x || !x->shape) return {typed(type, std::vector<Dim>(2, Dim::unknown()))};
  const int64_t rank = rank_of(*x->shape);
  int64_t axis = attr_int(node, "axis", 1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis > rank) return {typed(type, std::nullopt)};  // invalid
  Dim outer = Dim::constant(1), inner = Dim::constant(1);
  for (int64_t i = 0; i < rank; ++i) {
    Dim& part = i < axis ? outer : inner;
    part = part * (*x->shape)[static_cast<size_t>(i)];
  }
  return {reshaped(*x, {outer, inner})};
}

// Pad(data, pads[, constant_value, axes]) (pads an attribute before opset 11, axes an
// input from 18): each padded axis grows by its begin and end pads (negative ones crop),
// which may be symbolic (pads computed from a shape). Values stay the runtime's.
std::vector<Fact> fold_pad(const FoldInput& node) {
  const Fact* x = node.input(0);
  const int32_t type = x ? x->elem_type : 0;
  if (!x || !x->shape) return {typed(type, std::nullopt)};
  const std::vector<Dim>& in = *x->shape;
  const int64_t rank = rank_of(in);
  std::optional<std::vector<Dim>> pads;
  if (since(node, 11)) {
    if (const Fact* p = node.input(1); p && p->ints) pads = *p->ints;
  } else if (auto p = attr_ints(node, since(node, 2) ? "pads" : "paddings")) {
    pads = to_dims(*p);
  }
  std::vector<int64_t> axes(static_cast<size_t>(rank));
  std::iota(axes.begin(), axes.end(), int64_t{0});
  if (const Fact* a = since(node, 18) ? node.input(3) : nullptr) {
    auto given = constant_ints(a);
    auto normal = given ? normalize_axes(*given, rank) : std::nullopt;
    if (!normal) {
      // Which axes are padded is not known: the rank stays.
      return {Fact::tensor(type, std::vector<Dim>(in.size(), Dim::unknown()))};
    }
    axes = *normal;
  }
  std::vector<Dim> out = in;
  if (!pads || pads->size() != 2 * axes.size()) {
    for (int64_t k : axes) out[static_cast<size_t>(k)] = Dim::unknown();
    return {Fact::tensor(type, std::move(out))};
  }
  for (size_t i = 0; i < axes.size(); ++i) {
    Dim& d = out[static_cast<size_t>(axes[i])];
    d = d + (*pads)[i] + (*pads)[i + axes.size()];
    if (d.as_constant().value_or(0) < 0) return {typed(type, std::nullopt)};  // invalid
  }
  return {Fact::tensor(type, std::move(out))};
}

// Tile(x, repeats): each dim times its repeat (symbolic repeats too); the elements, when
// x's are known and the result is small, x's repeated.
std::vector<Fact> fold_tile(const FoldInput& node) {
  const Fact* x = node.input(0);
  const int32_t type = x ? x->elem_type : 0;
  if (!x || !x->shape) return {typed(type, std::nullopt)};
  const Fact* r = node.input(1);
  std::vector<Dim> out = *x->shape;
  if (!r || !r->ints || r->ints->size() != out.size()) return {Fact::tensor(type, std::vector<Dim>(out.size(), Dim::unknown()))};
  for (size_t k = 0; k < out.size(); ++k) {
    if ((*r->ints)[k].as_constant().value_or(0) < 0) return {typed(type, std::nullopt)};  // invalid
    out[k] = out[k] * (*r->ints)[k];
  }
  auto in = shape_with_elements(x);
  auto out_static = static_dims(out);
  const int64_t count = static_count(out_static);
  if (!in || !fits_cap(type, count)) return {Fact::tensor(type, std::move(out))};
  std::vector<std::vector<int64_t>> picks;
  for (size_t k = 0; k < in->size(); ++k) {
    std::vector<int64_t> p(static_cast<size_t>((*out_static)[k]));
    for (size_t i = 0; i < p.size(); ++i) p[i] = static_cast<int64_t>(i) % (*in)[k];
    picks.push_back(std::move(p));
  }
  return {gather_elements(*x, std::move(out), count == 0 ? std::vector<size_t>{} : selection_map(*in, *out_static, picks))};
}

// Transpose(x; perm, by default the axes reversed): dim k is x's dim perm[k]; the
// elements, when x's are known (TorchScript's Pad writes its pads as a Transpose of a
// constant [n, 2] table, which ONNX's data propagation does not follow either).
std::vector<Fact> fold_transpose(const FoldInput& node) {
  const Fact* x = node.input(0);
  const int32_t type = x ? x->elem_type : 0;
  if (!x || !x->shape) return {typed(type, std::nullopt)};
  const auto rank = static_cast<int64_t>(x->shape->size());
  std::vector<int64_t> perm(static_cast<size_t>(rank));
  if (auto given = attr_ints(node, "perm")) {
    perm = *given;
  } else {
    for (int64_t k = 0; k < rank; ++k) perm[static_cast<size_t>(k)] = rank - 1 - k;
  }
  // A permutation of the axes, or nothing is said (ONNX's inference reports it).
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  if (static_cast<int64_t>(perm.size()) != rank) return {typed(type, std::nullopt)};
  for (int64_t p : perm) {
    if (p < 0 || p >= rank || seen[static_cast<size_t>(p)]) return {typed(type, std::nullopt)};
    seen[static_cast<size_t>(p)] = true;
  }
  std::vector<Dim> out;
  for (int64_t p : perm) out.push_back((*x->shape)[static_cast<size_t>(p)]);
  auto in = shape_with_elements(x);
  if (!in) return {Fact::tensor(type, std::move(out))};
  // Output element at index i (row-major over out's dims) is x's at the index whose axis
  // perm[k] is i's k-th coordinate.
  std::vector<int64_t> out_static;
  for (int64_t p : perm) out_static.push_back((*in)[static_cast<size_t>(p)]);
  std::vector<size_t> in_stride(static_cast<size_t>(rank), 1);
  for (int64_t k = rank - 2; k >= 0; --k)
    in_stride[static_cast<size_t>(k)] = in_stride[static_cast<size_t>(k + 1)] * static_cast<size_t>((*in)[static_cast<size_t>(k + 1)]);
  const auto count = static_cast<size_t>(static_count(out_static));
  std::vector<size_t> map(count);
  std::vector<int64_t> index(static_cast<size_t>(rank), 0);
  for (size_t i = 0; i < count; ++i) {
    size_t from = 0;
    for (int64_t k = 0; k < rank; ++k)
      from += static_cast<size_t>(index[static_cast<size_t>(k)]) * in_stride[static_cast<size_t>(perm[static_cast<size_t>(k)])];
    map[i] = from;
    for (int64_t k = rank - 1; k >= 0; --k) {  // the odometer over out's index
      if (++index[static_cast<size_t>(k)] < out_static[static_cast<size_t>(k)]) break;
      index[static_cast<size_t>(k)] = 0;
    }
  }
  return {gather_elements(*x, std::move(out), map)};
}

// DepthToSpace(x[N,C,H,W]; blocksize b): [N, C/(b*b), H*b, W*b]; SpaceToDepth:
// [N, C*b*b, H/b, W/b]. The runtimes refuse a dim the block does not divide, so a
// division is floor division wherever the op runs.
std::vector<Fact> fold_depth_to_space(const FoldInput& node) {
  const Fact* x = node.input(0);
  const int32_t type = x ? x->elem_type : 0;
  const auto b = attr_int(node, "blocksize");
  if (!x || !x->shape || x->shape->size() != 4 || !b || *b <= 0) return {typed(type, std::nullopt)};
  const std::vector<Dim>& in = *x->shape;
  const Dim block = Dim::constant(*b);
  if (node.op == "DepthToSpace")
    return {Fact::tensor(type, {in[0], Dim::floor_div(in[1], block * block), in[2] * block, in[3] * block})};
  return {Fact::tensor(type, {in[0], in[1] * block * block, Dim::floor_div(in[2], block), Dim::floor_div(in[3], block)})};
}

}  // namespace shapeprop::eval::detail
