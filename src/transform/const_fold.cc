// Constant folding of what the analysis does not compute itself: a node of the default
// domain whose inputs are all constants, of an op evaluated here (elementwise math,
// Transpose, Cast, Concat, Expand, Slice, ScatterND, and the ops that only give their
// input another shape), whose result has at most 1,024 elements, so that a weight is never copied into
// a second large constant. At any size (up to 2^24 elements), where nothing is held
// twice, the constants read then going: a Cast, Transpose, Slice or reshaping op whose
// data input is a constant that nothing else reads; a Concat of such constants; and all
// the readers of a constant when each is one of those ops and together they make no more
// elements than it (issue 25, families 6 and 11; external data is never read). Its result
// becomes a constant of the same name (an initializer of the main graph, a
// Constant node in a function). And Cast(ConstantOfShape(s, v)) is
// ConstantOfShape(s, Cast(v)), whatever the shape.
//
// Arithmetic is done in the element type, as ONNX Runtime does it: float in float (16-bit
// floats in float, rounded back), double in double. An integer result out of its type's
// range (ONNX does not say what it wraps to; the analysis leaves such values unknown too),
// a division by zero, or a Cast to an integer type out of its range, is not folded. Transcendental functions come
// from the C library, which may differ from ONNX Runtime's in the last bit. A Transpose
// of a stored float, double, int32 or int64 tensor moves its elements in their own type.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <numeric>
#include <span>

#include "eval/scatter_nd.h"
#include "rewrite_support.h"
#include "support/tensor_data.h"
#include "tensor_values.h"

namespace shapeprop::transform {

namespace {

using onnx::NodeProto;
using onnx::TensorProto;

constexpr int64_t kMaxFoldedElements = 1024;
// A constant read by one Cast, Transpose or reshaping op only, folded into its result.
constexpr int64_t kMaxSoleReaderElements = int64_t{1} << 24;

// A real computed in double, rounded to the element type (what storing it would give).
double round_to(int32_t type, double x) {
  switch (type) {
    case TensorProto::FLOAT: return static_cast<float>(x);
    case TensorProto::FLOAT16: return half_to_float(float_to_half(static_cast<float>(x)));
    case TensorProto::BFLOAT16: return bfloat16_to_float(float_to_bfloat16(static_cast<float>(x)));
    default: return x;
  }
}

// An integer wrapped to the width of the element type (equal to `x` when it fits).
int64_t wrap_to(int32_t type, int64_t x) {
  switch (type) {
    case TensorProto::INT32: return static_cast<int32_t>(x);
    case TensorProto::INT16: return static_cast<int16_t>(x);
    case TensorProto::INT8: return static_cast<int8_t>(x);
    case TensorProto::UINT32: return static_cast<uint32_t>(x);
    case TensorProto::UINT16: return static_cast<uint16_t>(x);
    case TensorProto::UINT8: return static_cast<uint8_t>(x);
    case TensorProto::BOOL: return x != 0;
    default: return x;
  }
}

// Applies `f` in the element type's precision: double for double, float otherwise.
template <class F>
double in_precision(int32_t type, double x, F f) {
  if (type == TensorProto::DOUBLE) return f(x);
  return round_to(type, static_cast<double>(f(static_cast<float>(x))));
}

std::optional<Values> unary(std::string_view op, const Values& x) {
  Values out = x;
  if (!x.real) {
    for (auto& e : out.ints) {
      int64_t r;
      if (op == "Neg" || (op == "Abs" && e < 0)) {
        if (__builtin_sub_overflow(int64_t{0}, e, &r)) return std::nullopt;
      } else if (op == "Abs") {
        r = e;
      } else if (op == "Relu") {
        r = std::max<int64_t>(e, 0);
      } else {
        return std::nullopt;
      }
      if (wrap_to(x.type, r) != r) return std::nullopt;  // out of range (the negation of an unsigned)
      e = r;
    }
    return out;
  }
  for (auto& e : out.reals) {
    auto apply = [&](auto f) { e = in_precision(x.type, e, f); };
    if (op == "Sqrt") apply([](auto v) { return std::sqrt(v); });
    else if (op == "Reciprocal") apply([](auto v) { return decltype(v)(1) / v; });
    else if (op == "Neg") apply([](auto v) { return -v; });
    else if (op == "Abs") apply([](auto v) { return std::fabs(v); });
    else if (op == "Exp") apply([](auto v) { return std::exp(v); });
    else if (op == "Log") apply([](auto v) { return std::log(v); });
    else if (op == "Tanh") apply([](auto v) { return std::tanh(v); });
    else if (op == "Erf") apply([](auto v) { return std::erf(v); });
    else if (op == "Sigmoid") apply([](auto v) { return decltype(v)(1) / (decltype(v)(1) + std::exp(-v)); });
    else if (op == "Relu") apply([](auto v) { return v > 0 ? v : decltype(v)(0); });
    else if (op == "Floor") apply([](auto v) { return std::floor(v); });
    else if (op == "Ceil") apply([](auto v) { return std::ceil(v); });
    else return std::nullopt;
  }
  return out;
}

std::optional<std::vector<int64_t>> broadcast(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  std::vector<int64_t> out(std::max(a.size(), b.size()));
  for (size_t i = 0; i < out.size(); ++i) {
    const int64_t da = i < out.size() - a.size() ? 1 : a[i - (out.size() - a.size())];
    const int64_t db = i < out.size() - b.size() ? 1 : b[i - (out.size() - b.size())];
    if (da != db && da != 1 && db != 1) return std::nullopt;
    out[i] = da == 1 ? db : da;
  }
  return out;
}

// The offset into `dims` (aligned right to `out`, broadcast where 1) of each element of `out`.
std::vector<size_t> offsets(const std::vector<int64_t>& dims, const std::vector<int64_t>& out) {
  const size_t total = static_cast<size_t>(std::accumulate(out.begin(), out.end(), int64_t{1}, std::multiplies<>()));
  std::vector<size_t> strides(out.size(), 0);
  size_t stride = 1;
  for (size_t i = dims.size(); i-- > 0;) {
    const size_t o = i + out.size() - dims.size();
    strides[o] = dims[i] == 1 ? 0 : stride;
    stride *= static_cast<size_t>(dims[i]);
  }
  std::vector<size_t> result(total);
  std::vector<int64_t> index(out.size(), 0);
  for (size_t k = 0; k < total; ++k) {
    size_t off = 0;
    for (size_t i = 0; i < out.size(); ++i) off += static_cast<size_t>(index[i]) * strides[i];
    result[k] = off;
    for (size_t i = out.size(); i-- > 0;) {
      if (++index[i] < out[i]) break;
      index[i] = 0;
    }
  }
  return result;
}

// Expand: `x` broadcast with `shape` both ways, as ONNX's Expand does; nullopt past
// `limit` elements (checked before anything is allocated: the shape may be anything).
std::optional<Values> expand(const Values& x, const Values& shape, int64_t limit) {
  if (shape.type != TensorProto::INT64 || shape.dims.size() != 1) return std::nullopt;
  auto dims = broadcast(x.dims, shape.ints);
  if (!dims) return std::nullopt;
  const auto count = element_count(*dims);
  if (!count || *count > limit) return std::nullopt;
  Values out;
  out.type = x.type;
  out.dims = *dims;
  out.real = x.real;
  for (size_t k : offsets(x.dims, *dims)) {
    if (x.real)
      out.reals.push_back(x.reals[k]);
    else
      out.ints.push_back(x.ints[k]);
  }
  return out;
}

// Slice (opset 10 on: starts, ends, axes and steps as inputs), with ONNX's clamping of
// out-of-range starts and ends and its negative steps.
std::optional<Values> slice(const Values& x, const Values& starts, const Values& ends, const Values* axes,
                            const Values* steps) {
  auto ints_of = [](const Values& v) -> const std::vector<int64_t>* {
    return !v.real && (v.type == TensorProto::INT64 || v.type == TensorProto::INT32) && v.dims.size() == 1 ? &v.ints
                                                                                                           : nullptr;
  };
  const auto* s = ints_of(starts);
  const auto* e = ints_of(ends);
  const auto* a = axes ? ints_of(*axes) : nullptr;
  const auto* st = steps ? ints_of(*steps) : nullptr;
  if (!s || !e || s->size() != e->size() || (axes && (!a || a->size() != s->size())) ||
      (steps && (!st || st->size() != s->size())))
    return std::nullopt;
  const auto rank = static_cast<int64_t>(x.dims.size());
  std::vector<int64_t> first(x.dims.size(), 0), step(x.dims.size(), 1), dims = x.dims;
  std::vector<bool> seen(x.dims.size(), false);
  for (size_t i = 0; i < s->size(); ++i) {
    int64_t axis = a ? (*a)[i] : static_cast<int64_t>(i);
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank || seen[static_cast<size_t>(axis)]) return std::nullopt;
    seen[static_cast<size_t>(axis)] = true;
    const int64_t dim = x.dims[static_cast<size_t>(axis)];
    const int64_t k = st ? (*st)[i] : 1;
    if (k == 0 || k == std::numeric_limits<int64_t>::min()) return std::nullopt;
    int64_t b = (*s)[i], f = (*e)[i];
    if (b < 0) b += dim;  // no overflow: dim >= 0
    if (f < 0) f += dim;
    int64_t count = 0;
    if (k > 0) {
      b = std::clamp<int64_t>(b, 0, dim);
      f = std::clamp<int64_t>(f, 0, dim);
      count = f > b ? (f - b - 1) / k + 1 : 0;
    } else if (dim > 0) {  // starts clamp to [0, dim - 1], ends to [-1, dim - 1]
      b = std::clamp<int64_t>(b, 0, dim - 1);
      f = std::clamp<int64_t>(f, -1, dim - 1);
      count = b > f ? (b - f - 1) / -k + 1 : 0;
    }
    first[static_cast<size_t>(axis)] = b;
    step[static_cast<size_t>(axis)] = k;
    dims[static_cast<size_t>(axis)] = count;
  }
  const auto total = element_count(dims);
  if (!total) return std::nullopt;
  std::vector<size_t> stride(x.dims.size(), 1);
  for (size_t i = x.dims.size(); i-- > 1;) stride[i - 1] = stride[i] * static_cast<size_t>(x.dims[i]);
  Values out;
  out.type = x.type;
  out.dims = dims;
  out.real = x.real;
  std::vector<int64_t> index(dims.size(), 0);
  for (int64_t n = 0; n < *total; ++n) {
    size_t off = 0;
    for (size_t i = 0; i < dims.size(); ++i)
      off += static_cast<size_t>(first[i] + index[i] * step[i]) * stride[i];
    if (x.real)
      out.reals.push_back(x.reals[off]);
    else
      out.ints.push_back(x.ints[off]);
    for (size_t i = dims.size(); i-- > 0;) {
      if (++index[i] < dims[i]) break;
      index[i] = 0;
    }
  }
  return out;
}

std::optional<Values> binary(std::string_view op, const Values& a, const Values& b) {
  if (a.type != b.type) return std::nullopt;
  auto dims = broadcast(a.dims, b.dims);
  if (!dims) return std::nullopt;
  const auto oa = offsets(a.dims, *dims), ob = offsets(b.dims, *dims);
  Values out;
  out.type = a.type;
  out.dims = *dims;
  out.real = a.real;
  if (a.real) {
    for (size_t k = 0; k < oa.size(); ++k) {
      const double x = a.reals[oa[k]], y = b.reals[ob[k]];
      double r;
      auto apply = [&](auto f) {
        r = a.type == TensorProto::DOUBLE ? f(x, y)
                                          : round_to(a.type, f(static_cast<float>(x), static_cast<float>(y)));
      };
      if (op == "Add") apply([](auto u, auto v) { return u + v; });
      else if (op == "Sub") apply([](auto u, auto v) { return u - v; });
      else if (op == "Mul") apply([](auto u, auto v) { return u * v; });
      else if (op == "Div") apply([](auto u, auto v) { return u / v; });
      else if (op == "Pow") apply([](auto u, auto v) { return std::pow(u, v); });
      else return std::nullopt;
      out.reals.push_back(r);
    }
    return out;
  }
  if (a.type == TensorProto::BOOL) return std::nullopt;
  for (size_t k = 0; k < oa.size(); ++k) {
    const int64_t x = a.ints[oa[k]], y = b.ints[ob[k]];
    int64_t r;
    bool overflow = false;
    if (op == "Add") overflow = __builtin_add_overflow(x, y, &r);
    else if (op == "Sub") overflow = __builtin_sub_overflow(x, y, &r);
    else if (op == "Mul") overflow = __builtin_mul_overflow(x, y, &r);
    else if (op == "Div") {
      if (y == 0 || (x == std::numeric_limits<int64_t>::min() && y == -1)) return std::nullopt;
      r = x / y;  // toward zero, as ONNX's integer Div
    } else {
      return std::nullopt;
    }
    if (overflow || wrap_to(a.type, r) != r) return std::nullopt;
    out.ints.push_back(r);
  }
  return out;
}

// Where Transpose takes each element: the output's dims, and how far a step along each
// output dim moves in the input (the stride of input dim perm[i]).
struct Permutation {
  std::vector<int64_t> out_dims, step;
  size_t count = 0;
};

// nullopt for a perm that is not one of the dims (an empty perm reverses them).
std::optional<Permutation> plan_transpose(std::span<const int64_t> dims, std::vector<int64_t> perm) {
  const size_t rank = dims.size();
  if (perm.empty()) {
    perm.resize(rank);
    std::iota(perm.rbegin(), perm.rend(), 0);
  }
  const auto count = element_count(dims);
  if (perm.size() != rank || !count) return std::nullopt;
  Permutation p;
  p.count = static_cast<size_t>(*count);
  p.out_dims.resize(rank);
  p.step.resize(rank);
  std::vector<int64_t> in_strides(rank, 1);
  for (size_t i = rank; i-- > 1;) in_strides[i - 1] = in_strides[i] * dims[i];
  std::vector<bool> seen(rank, false);
  for (size_t i = 0; i < rank; ++i) {
    if (perm[i] < 0 || perm[i] >= static_cast<int64_t>(rank) || seen[static_cast<size_t>(perm[i])]) return std::nullopt;
    const auto d = static_cast<size_t>(perm[i]);
    seen[d] = true;
    p.out_dims[i] = dims[d];
    p.step[i] = in_strides[d];
  }
  return p;
}

// `out` (p.count elements) as Transpose gives `in`: an odometer over the output's index
// but its last dim, the input's offset kept beside it; the last dim is a strided copy of
// its own.
template <class E>
void permute(const E* in, E* out, const Permutation& p) {
  if (p.count == 0) return;
  if (p.out_dims.empty()) {
    out[0] = in[0];
    return;
  }
  const size_t last = p.out_dims.size() - 1;
  const auto row = static_cast<size_t>(p.out_dims[last]);
  const int64_t stride = p.step[last];
  std::vector<int64_t> index(p.out_dims.size(), 0);
  int64_t off = 0;
  for (size_t k = 0; k < p.count; k += row) {
    const E* from = in + off;
    for (size_t j = 0; j < row; ++j) out[k + j] = from[static_cast<int64_t>(j) * stride];
    for (size_t i = last; i-- > 0;) {
      off += p.step[i];
      if (++index[i] < p.out_dims[i]) break;
      off -= p.step[i] * index[i];
      index[i] = 0;
    }
  }
}

std::optional<Values> transpose(const Values& x, std::vector<int64_t> perm) {
  const auto p = plan_transpose(x.dims, std::move(perm));
  if (!p || p->count != x.size()) return std::nullopt;
  Values out;
  out.type = x.type;
  out.dims = p->out_dims;
  out.real = x.real;
  auto into = [&](const auto& in, auto& result) {
    result.resize(in.size());
    permute(in.data(), result.data(), *p);
  };
  if (x.real)
    into(x.reals, out.reals);
  else
    into(x.ints, out.ints);
  return out;
}

// Transpose of a stored float, double, int64 or int32 tensor, element by element in its
// own type, as encode() would store the result (the typed field): no detour through
// Values' doubles, which would cost a copy of twice the size of a large weight.
// nullopt for other types, external data, or more than `limit` elements.
std::optional<TensorProto> transpose_stored(const TensorProto& t, std::vector<int64_t> perm, int64_t limit) {
  if (t.data_location() == TensorProto::EXTERNAL) return std::nullopt;
  const std::span<const int64_t> dims(t.dims().data(), static_cast<size_t>(t.dims_size()));
  const auto p = plan_transpose(dims, std::move(perm));
  if (!p || static_cast<int64_t>(p->count) > limit) return std::nullopt;
  TensorProto out;
  out.set_data_type(t.data_type());
  for (int64_t d : p->out_dims) out.add_dims(d);
  // The elements from the raw data (copied out whole: it need not be aligned) or the
  // typed field, permuted into `field`. Neither buffer is zeroed first: every element is
  // written (the weights of a model are most of what this moves).
  auto run = [&]<class E>(E, const auto& typed, auto* field) {
    const auto n = static_cast<int>(p->count);
    std::unique_ptr<E[]> raw;
    const E* in = nullptr;
    if (t.has_raw_data()) {
      if (t.raw_data().size() != p->count * sizeof(E)) return false;
      raw.reset(new E[p->count]);  // default-initialized: not zeroed
      if (p->count) std::memcpy(raw.get(), t.raw_data().data(), p->count * sizeof(E));
      in = raw.get();
    } else {
      if (typed.size() != n) return false;
      in = typed.data();
    }
    field->Reserve(n);
    E* permuted = field->AddNAlreadyReserved(n);  // not initialized: permute writes each
    permute(in, permuted, *p);
    return true;
  };
  bool ok = false;
  switch (t.data_type()) {
    case TensorProto::FLOAT: ok = run(float{}, t.float_data(), out.mutable_float_data()); break;
    case TensorProto::DOUBLE: ok = run(double{}, t.double_data(), out.mutable_double_data()); break;
    case TensorProto::INT64: ok = run(int64_t{}, t.int64_data(), out.mutable_int64_data()); break;
    case TensorProto::INT32: ok = run(int32_t{}, t.int32_data(), out.mutable_int32_data()); break;
    default: return std::nullopt;
  }
  return ok ? std::optional<TensorProto>(std::move(out)) : std::nullopt;
}

std::optional<Values> cast(const Values& x, int32_t to) {
  if (!is_real_type(to) && !is_int_type(to)) return std::nullopt;
  Values out;
  out.type = to;
  out.dims = x.dims;
  out.real = is_real_type(to);
  for (size_t k = 0; k < x.size(); ++k) {
    if (out.real) {
      if (x.real) {
        out.reals.push_back(round_to(to, x.reals[k]));
      } else {
        // Converted directly, not through double, which could round twice.
        const int64_t i = x.ints[k];
        out.reals.push_back(to == TensorProto::DOUBLE ? static_cast<double>(i) : round_to(to, static_cast<float>(i)));
      }
    } else if (x.real) {
      const double v = x.reals[k];
      if (to == TensorProto::BOOL) {
        out.ints.push_back(v != 0);
        continue;
      }
      if (!std::isfinite(v) || v >= 9.2e18 || v <= -9.2e18) return std::nullopt;
      const auto t = static_cast<int64_t>(v);  // toward zero
      if (wrap_to(to, t) != t) return std::nullopt;  // out of the type's range: the runtime's to decide
      out.ints.push_back(t);
    } else {
      const int64_t i = x.ints[k];
      if (to == TensorProto::BOOL) {
        out.ints.push_back(i != 0);
        continue;
      }
      if (wrap_to(to, i) != i) return std::nullopt;  // out of the type's range: the runtime's to decide
      out.ints.push_back(i);
    }
  }
  return out;
}

std::optional<Values> concat(const std::vector<Values>& parts, int64_t axis) {
  if (parts.empty()) return std::nullopt;
  const size_t rank = parts[0].dims.size();
  if (axis < 0) axis += static_cast<int64_t>(rank);
  if (axis < 0 || axis >= static_cast<int64_t>(rank)) return std::nullopt;
  const auto ax = static_cast<size_t>(axis);
  Values out = parts[0];
  out.dims[ax] = 0;
  for (const auto& p : parts) {
    if (p.type != out.type || p.dims.size() != rank) return std::nullopt;
    for (size_t i = 0; i < rank; ++i)
      if (i != ax && p.dims[i] != parts[0].dims[i]) return std::nullopt;
    out.dims[ax] += p.dims[ax];
  }
  const int64_t outer = std::accumulate(out.dims.begin(), out.dims.begin() + axis, int64_t{1}, std::multiplies<>());
  out.reals.clear();
  out.ints.clear();
  for (int64_t o = 0; o < outer; ++o)
    for (const auto& p : parts) {
      const int64_t inner = std::accumulate(p.dims.begin() + axis, p.dims.end(), int64_t{1}, std::multiplies<>());
      for (int64_t k = 0; k < inner; ++k) {
        const auto at = static_cast<size_t>(o * inner + k);
        if (out.real)
          out.reals.push_back(p.reals[at]);
        else
          out.ints.push_back(p.ints[at]);
      }
    }
  return out;
}

// ScatterND without reduction: the data with the updates in place (eval/scatter_nd.h
// refuses what ScatterND would refuse, and updates of one element twice).
std::optional<Values> scatter_nd(const Values& data, const Values& indices, const Values& updates) {
  if (indices.real || data.real != updates.real || data.type != updates.type) return std::nullopt;
  const auto targets = eval::scatter_nd_targets(data.dims, indices.dims, indices.ints, updates.dims);
  if (!targets) return std::nullopt;
  Values out = data;
  for (size_t u = 0; u < targets->size(); ++u) {
    const auto at = static_cast<size_t>((*targets)[u]);
    if (out.real) out.reals[at] = updates.reals[u];
    else out.ints[at] = updates.ints[u];
  }
  return out;
}

class ConstantFolder {
 public:
  explicit ConstantFolder(const MutableBody& body) : body_(body) {}

  // Whether every input the node reads is a constant, as every fold here needs (most
  // nodes read a value only a run knows, and are passed over here before the op tests).
  bool reads_constants(NodeId id) const {
    for (size_t k = 0; k < body_.num_inputs(id); ++k)
      if (body_.input(id, k) != ir::kNoValue && !is_constant(body_.input(id, k))) return false;
    return true;
  }

  // The value the node computes, when it is one folded here, as it is stored.
  std::optional<TensorProto> match(NodeId id) const {
    const NodeProto& n = body_.node(id);
    if (!FunctionId::is_default_domain(n.domain()) || body_.num_outputs(id) != 1 || body_.output(id, 0) == ir::kNoValue ||
        body_.num_inputs(id) == 0 || is_op(n, "Constant") || has_subgraph(n))
      return std::nullopt;
    const int64_t limit = moves_its_input(id) ? kMaxSoleReaderElements : kMaxFoldedElements;
    if (is_op(n, "Transpose") && body_.num_inputs(id) == 1)
      if (const TensorProto* stored = body_.stored_constant(body_.input(id, 0)))
        if (auto moved = transpose_stored(*stored, ints_attribute(n, "perm").value_or(std::vector<int64_t>{}), limit))
          return moved;
    auto value = evaluate(id, limit);
    if (!value || static_cast<int64_t>(value->size()) > limit) return std::nullopt;
    return encode(*value);
  }

 private:
  const MutableBody& body_;

  // A Cast, Transpose, Slice or reshaping op whose data input is a stored constant that
  // nothing else reads, or a Concat of such constants: its result takes their place (at
  // most as many elements). Or one of several such readers of the constant, the only ones, whose
  // results together have no more elements than it (a weight cut into gates by Slices
  // and put back in another order, as PyTorch's exporters write an LSTM's weights): once
  // they all are folded, it goes.
  bool moves_its_input(NodeId id) const {
    if (is_op(body_.node(id), "Concat")) {  // of constants only it reads, each once
      for (size_t k = 0; k < body_.num_inputs(id); ++k) {
        const ValueId v = body_.input(id, k);
        if (v == ir::kNoValue || !body_.stored_constant(v) || body_.uses(v) != 1) return false;
      }
      return body_.num_inputs(id) > 0;
    }
    if (!moves_data(id)) return false;
    const ValueId data = body_.input(id, 0);
    const TensorProto* stored = body_.stored_constant(data);
    if (!stored || body_.is_interface(data)) return false;
    if (body_.uses(data) == 1) return true;
    const auto size = element_count(stored->dims());
    if (!size) return false;
    int64_t total = 0;
    size_t readers = 0;
    const bool all_fit = body_.all_readers(data, [&](NodeId r) {
      ++readers;
      if (!moves_data(r) || body_.input(r, 0) != data) return false;
      for (size_t k = 1; k < body_.num_inputs(r); ++k)
        if (body_.input(r, k) == data || (body_.input(r, k) != ir::kNoValue && !is_constant(body_.input(r, k))))
          return false;
      const auto dims = output_dims(r);
      const auto count = dims ? element_count(*dims) : std::nullopt;
      return count && !__builtin_add_overflow(total, *count, &total) && total <= *size;
    });
    return all_fit && readers == body_.uses(data);
  }

  bool moves_data(NodeId id) const {
    const NodeProto& n = body_.node(id);
    const std::string_view op = n.op_type();
    return FunctionId::is_default_domain(n.domain()) && body_.num_outputs(id) == 1 &&
           (op == "Cast" || op == "Transpose" || op == "Slice" || reshaping_op(op));
  }

  static bool reshaping_op(std::string_view op) {
    return one_of(op, {"Reshape", "Squeeze", "Unsqueeze", "Flatten", "Identity"});
  }
  static bool unary_op(std::string_view op) {
    return one_of(op, {"Sqrt", "Reciprocal", "Neg", "Abs", "Exp", "Log", "Tanh", "Erf", "Sigmoid", "Relu", "Floor", "Ceil"});
  }
  static bool binary_op(std::string_view op) { return one_of(op, {"Add", "Sub", "Mul", "Div", "Pow"}); }

  // A constant input, unless it is larger than any result folded here (every op here
  // gives at least as many elements as each of its inputs has).
  std::optional<Values> input(ValueId v, int64_t limit) const {
    if (v == ir::kNoValue) return std::nullopt;
    if (const TensorProto* t = body_.stored_constant(v)) return decode(*t, limit);
    if (auto t = body_.constant(v)) return decode(*t);
    return fill(v, limit);
  }

  bool is_constant(ValueId v) const {
    const Fact* f = body_.fact(v);
    return (f && f->has_tensor()) || body_.stored_constant(v) || fill_shape(v);
  }

  // A ConstantOfShape of a constant shape read as its elements (the fill value, or ONNX's
  // default float 0, repeated), at most `limit` of them: a mask built from zeros.
  std::optional<Values> fill(ValueId v, int64_t limit) const {
    const auto dims = fill_shape(v);
    const auto count = dims ? element_count(*dims) : std::nullopt;
    if (!count || *count > limit) return std::nullopt;
    const NodeProto& p = body_.node(body_.producer(v));
    Values one;
    if (const auto* a = attribute(p, "value")) {
      if (a->type() != onnx::AttributeProto::TENSOR) return std::nullopt;
      auto decoded = decode(a->t());
      if (!decoded || decoded->size() != 1) return std::nullopt;
      one = std::move(*decoded);
    } else {
      one.type = TensorProto::FLOAT;
      one.real = true;
      one.reals = {0.0};
    }
    Values out = one;
    out.dims = *dims;
    if (out.real) out.reals.assign(static_cast<size_t>(*count), one.reals[0]);
    else out.ints.assign(static_cast<size_t>(*count), one.ints[0]);
    return out;
  }
  std::optional<std::vector<int64_t>> fill_shape(ValueId v) const {
    const NodeId p = v == ir::kNoValue ? kNone : body_.producer(v);
    if (p == kNone || !is_op(body_.node(p), "ConstantOfShape") || has_reference(body_.node(p)) ||
        body_.num_inputs(p) != 1 || body_.input(p, 0) == ir::kNoValue || !body_.fact(v))
      return std::nullopt;
    const Fact* shape = body_.fact(body_.input(p, 0));
    if (!shape || !shape->ints) return std::nullopt;
    std::vector<int64_t> dims;
    for (const Dim& d : *shape->ints) {
      auto c = d.as_constant();
      if (!c || *c < 0) return std::nullopt;
      dims.push_back(*c);
    }
    return dims;
  }

  // The shape the facts know of the node's output, every dim a constant.
  std::optional<std::vector<int64_t>> output_dims(NodeId id) const {
    const std::vector<Dim>* dims = known_dims(body_.fact(body_.output(id, 0)));
    if (!dims) return std::nullopt;
    std::vector<int64_t> out;
    for (const Dim& d : *dims) {
      auto c = d.as_constant();
      if (!c) return std::nullopt;
      out.push_back(*c);
    }
    return out;
  }

  std::optional<Values> evaluate(NodeId id, int64_t limit) const {
    const NodeProto& n = body_.node(id);
    const std::string_view op = n.op_type();  // compared as a view: lengths first
    const bool known = unary_op(op) || binary_op(op) || reshaping_op(op) || op == "Transpose" ||
                       op == "Cast" || op == "Concat" || op == "Expand" || (op == "Slice" && body_.num_inputs(id) >= 3) ||
                       (op == "ScatterND" && body_.num_inputs(id) == 3);
    // A node the analysis gave no fact has no valid execution where its inputs break its
    // type constraints (Relu of a ConstantOfShape of an int32 shape): nothing to compute.
    if (!known || !body_.fact(body_.output(id, 0))) return std::nullopt;
    for (size_t k = 0; k < body_.num_inputs(id); ++k)
      if (body_.input(id, k) != ir::kNoValue && !is_constant(body_.input(id, k))) return std::nullopt;
    // Every input a constant (shape inputs of the reshaping ops too: the output's shape is
    // then a fact).
    std::vector<Values> in;
    for (size_t k = 0; k < body_.num_inputs(id); ++k) {
      if (body_.input(id, k) == ir::kNoValue) continue;
      auto v = input(body_.input(id, k), limit);
      if (!v) return std::nullopt;
      in.push_back(std::move(*v));
    }
    if (in.empty()) return std::nullopt;
    if (unary_op(op) && in.size() == 1) return unary(op, in[0]);
    if (binary_op(op) && in.size() == 2) return binary(op, in[0], in[1]);
    if (op == "Transpose" && in.size() == 1) return transpose(in[0], ints_attribute(n, "perm").value_or(std::vector<int64_t>{}));
    if (op == "Cast" && in.size() == 1) {
      auto to = int_attribute(n, "to");
      return to ? cast(in[0], static_cast<int32_t>(*to)) : std::nullopt;
    }
    if (op == "Expand" && in.size() == 2) return expand(in[0], in[1], limit);
    if (op == "Slice") {  // by position: axes may be omitted where steps are given
      std::optional<Values> axes, steps;
      if (body_.input(id, 3) != ir::kNoValue) axes = input(body_.input(id, 3), limit);
      if (body_.input(id, 4) != ir::kNoValue) steps = input(body_.input(id, 4), limit);
      if ((body_.input(id, 3) != ir::kNoValue && !axes) || (body_.input(id, 4) != ir::kNoValue && !steps) ||
          body_.input(id, 1) == ir::kNoValue || body_.input(id, 2) == ir::kNoValue)
        return std::nullopt;
      return slice(in[0], in[1], in[2], axes ? &*axes : nullptr, steps ? &*steps : nullptr);
    }
    if (op == "Concat") {
      auto axis = int_attribute(n, "axis");
      return axis ? concat(in, *axis) : std::nullopt;
    }
    if (op == "ScatterND" && in.size() == 3) {
      const auto* reduction = attribute(n, "reduction");
      return reduction && reduction->s() != "none" ? std::nullopt : scatter_nd(in[0], in[1], in[2]);
    }
    if (reshaping_op(op)) {
      auto dims = output_dims(id);
      if (!dims) return std::nullopt;
      if (element_count(*dims) != static_cast<int64_t>(in[0].size())) return std::nullopt;
      Values out = std::move(in[0]);
      out.dims = *dims;
      return out;
    }
    return std::nullopt;
  }
};

// Cast(ConstantOfShape(s, v)) as ConstantOfShape(s, Cast(v)): the fill value cast, when
// it is representable in the target type (else the runtime's to decide, as above).
std::optional<TensorProto> cast_fill(const MutableBody& body, NodeId id) {
  const NodeProto& n = body.node(id);
  if (!is_op(n, "Cast") || body.num_inputs(id) != 1 || body.input(id, 0) == ir::kNoValue || body.num_outputs(id) != 1)
    return std::nullopt;
  const auto to = int_attribute(n, "to");
  const NodeId fill = body.producer(body.input(id, 0));
  if (!to || fill == kNone) return std::nullopt;
  const NodeProto& p = body.node(fill);
  if (!is_op(p, "ConstantOfShape") || has_reference(p) || body.num_inputs(fill) != 1 ||
      body.input(fill, 0) == ir::kNoValue)
    return std::nullopt;
  TensorProto value;
  if (const auto* a = attribute(p, "value")) {
    if (a->type() != onnx::AttributeProto::TENSOR) return std::nullopt;
    value = a->t();
  } else {  // ONNX's default: a float 0
    value.set_data_type(TensorProto::FLOAT);
    value.add_dims(1);
    value.add_float_data(0);
  }
  const auto decoded = decode(value);
  if (!decoded || decoded->size() != 1) return std::nullopt;
  const auto cast_value = cast(*decoded, static_cast<int32_t>(*to));
  if (!cast_value) return std::nullopt;
  return encode(*cast_value);
}

}  // namespace

bool fold_small_constants(PassContext& ctx) {
  MutableBody& body = ctx.body();
  const ConstantFolder folder(body);
  for (auto id = body.first(); id != kNone && !ctx.stop(); id = body.next(id)) {
    // A fold computes from constants only; a Cast of a ConstantOfShape's fill (cast_fill)
    // is the one rewrite here that reads a value not known.
    if (!folder.reads_constants(id) && !is_op(body.node(id), "Cast")) continue;
    if (auto value = folder.match(id)) {
      ctx.apply(Counter::ConstantsComputed, [&] {
        body.make_constant(id, std::move(*value));
        return true;
      });
    } else if (auto fill = cast_fill(body, id)) {
      ctx.apply(Counter::FillsCast, [&] {
        const ValueId shape = body.input(body.producer(body.input(id, 0)), 0);
        NodeProto node;
        node.set_op_type("ConstantOfShape");
        auto* a = node.add_attribute();
        a->set_name("value");
        a->set_type(onnx::AttributeProto::TENSOR);
        *a->mutable_t() = std::move(*fill);
        body.replace_node(id, std::move(node), {shape});
        return true;
      });
    }
  }
  return ctx.changed();
}

}  // namespace shapeprop::transform
