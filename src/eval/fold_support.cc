// Helpers shared by the folding rules; see fold_support.h.
#include "eval/fold_support.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "support/tensor_data.h"

namespace shapeprop::eval::detail {

// ---- opsets and attributes -----------------------------------------------------------

std::optional<int64_t> attr_int(const FoldInput& node, std::string_view name) {
  const auto* a = node.attribute(name);
  if (!a || !(a->type() == onnx::AttributeProto::INT || (a->type() == onnx::AttributeProto::UNDEFINED && a->has_i())))
    return std::nullopt;
  return a->i();
}

int64_t attr_int(const FoldInput& node, std::string_view name, int64_t fallback) {
  return attr_int(node, name).value_or(fallback);
}

std::optional<std::vector<int64_t>> attr_ints(const FoldInput& node, std::string_view name) {
  const auto* a = node.attribute(name);
  if (!a || !(a->type() == onnx::AttributeProto::INTS || (a->type() == onnx::AttributeProto::UNDEFINED && a->ints_size() > 0)))
    return std::nullopt;
  return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

const onnx::TensorProto* attr_tensor(const FoldInput& node, std::string_view name) {
  const auto* a = node.attribute(name);
  if (!a || !(a->type() == onnx::AttributeProto::TENSOR || (a->type() == onnx::AttributeProto::UNDEFINED && a->has_t())))
    return nullptr;
  return &a->t();
}

// ---- facts ---------------------------------------------------------------------------

Fact typed(int32_t elem_type, std::optional<std::vector<Dim>> shape) {
  Fact f;
  f.elem_type = elem_type;
  f.shape = std::move(shape);
  return f;
}

int32_t common_type(const std::vector<const Fact*>& inputs) {
  for (const Fact* f : inputs)
    if (f && f->elem_type != 0) return f->elem_type;
  return 0;
}

std::optional<std::vector<int64_t>> static_dims(const std::vector<Dim>& shape) {
  std::vector<int64_t> dims;
  dims.reserve(shape.size());
  for (const Dim& d : shape) {
    auto c = d.as_constant();
    if (!c || *c < 0) return std::nullopt;
    dims.push_back(*c);
  }
  return dims;
}

std::optional<std::vector<int64_t>> static_shape(const Fact* f) {
  if (!f || !f->shape) return std::nullopt;
  return static_dims(*f->shape);
}

std::optional<std::vector<int64_t>> shape_with_elements(const Fact* f) {
  auto s = static_shape(f);
  if (!s || !f->has_elements()) return std::nullopt;
  const size_t n = f->ints ? f->ints->size() : f->reals->size();
  if (static_count(s) != static_cast<int64_t>(n)) return std::nullopt;
  return s;
}

std::optional<int64_t> element_count(std::span<const int64_t> dims) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0 || __builtin_mul_overflow(n, d, &n)) return std::nullopt;
  }
  return n;
}

int64_t static_count(const std::optional<std::vector<int64_t>>& dims) {
  if (!dims) return -1;
  return element_count(*dims).value_or(-1);
}

bool fits_cap(int32_t elem_type, int64_t count) {
  const size_t cap = is_integral_type(elem_type) ? Fact::kMaxIntElements : Fact::kMaxRealElements;
  return count >= 0 && static_cast<size_t>(count) <= cap;
}

std::vector<Dim> to_dims(const std::vector<int64_t>& values) {
  std::vector<Dim> dims;
  dims.reserve(values.size());
  for (int64_t v : values) dims.push_back(Dim::constant(v));
  return dims;
}

std::optional<std::vector<int64_t>> constant_ints(const Fact* f) {
  if (!f || !f->ints) return std::nullopt;
  std::vector<int64_t> values;
  values.reserve(f->ints->size());
  for (const Dim& d : *f->ints) {
    auto c = d.as_constant();
    if (!c) return std::nullopt;
    values.push_back(*c);
  }
  return values;
}

std::optional<int64_t> constant_scalar(const Fact* f) { return f ? f->scalar_int() : std::nullopt; }

std::optional<Dim> scalar_dim(const Fact* f) {
  if (!f || !f->ints || f->ints->size() != 1) return std::nullopt;
  return (*f->ints)[0];
}

std::optional<int64_t> normalize_axis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) return std::nullopt;
  return axis < 0 ? axis + rank : axis;
}

std::optional<std::vector<int64_t>> normalize_axes(const std::vector<int64_t>& axes, int64_t rank) {
  std::vector<int64_t> out;
  out.reserve(axes.size());
  for (int64_t a : axes) {
    auto n = normalize_axis(a, rank);
    if (!n || std::find(out.begin(), out.end(), *n) != out.end()) return std::nullopt;
    out.push_back(*n);
  }
  return out;
}

// ---- element values ------------------------------------------------------------------

std::optional<IntRange> int_range(int32_t t) {
  auto range_of = [](auto sample) {
    using T = decltype(sample);
    return IntRange{static_cast<int64_t>(std::numeric_limits<T>::min()), static_cast<int64_t>(std::numeric_limits<T>::max())};
  };
  switch (t) {
    case TensorProto::BOOL: return IntRange{0, 1};
    case TensorProto::INT8: return range_of(int8_t{});
    case TensorProto::UINT8: return range_of(uint8_t{});
    case TensorProto::INT16: return range_of(int16_t{});
    case TensorProto::UINT16: return range_of(uint16_t{});
    case TensorProto::INT32: return range_of(int32_t{});
    case TensorProto::UINT32: return range_of(uint32_t{});
    case TensorProto::INT64: return range_of(int64_t{});
    default: return std::nullopt;  // uint64 values past INT64_MAX have no Dim
  }
}

Dim fit(int32_t elem_type, const Dim& d) {
  auto c = d.as_constant();
  if (!c) return d;
  auto range = int_range(elem_type);
  if (!range) {
    // uint64: the non-negative int64 values are exact.
    return elem_type == TensorProto::UINT64 && *c >= 0 ? d : Dim::unknown();
  }
  if (*c >= range->min && *c <= range->max) return d;
  OverflowWatch::note(*c, elem_type);
  return Dim::unknown();
}

std::optional<double> round_to(int32_t elem_type, double v) {
  switch (elem_type) {
    case TensorProto::DOUBLE: return v;
    case TensorProto::FLOAT: return double{static_cast<float>(v)};
    case TensorProto::FLOAT16: return double{half_to_float(float_to_half(static_cast<float>(v)))};
    case TensorProto::BFLOAT16: return double{bfloat16_to_float(float_to_bfloat16(static_cast<float>(v)))};
    default: return std::nullopt;
  }
}

bool known_nonnegative(const Dim& d) {
  auto least = d.lower_bound(DimBounds());  // symbols are dims, never negative
  return least && *least >= 0;
}

bool proven_at_least(const Dim& d, int64_t bound) {
  const DimBounds& bounds = DimBounds::current();
  auto least = d.lower_bound(bounds);
  if (!least || *least < bound) return false;
  if (!bounds.is_default())
    if (auto plain = d.lower_bound(DimBounds()); !plain || *plain < bound) DimBounds::note_relied();
  return true;
}

namespace {
thread_local std::vector<std::string>* condition_sink = nullptr;
}  // namespace

ConditionSink::ConditionSink(std::vector<std::string>* sink) : previous_(condition_sink) { condition_sink = sink; }
ConditionSink::~ConditionSink() { condition_sink = previous_; }

bool assume_at_least(const Dim& d, int64_t bound) {
  if (!condition_sink || DimBounds::current().symbol_min() < 1 || d.is_unknown() || d.is_constant()) return false;
  // Never a condition no size meets (min(H,2) >= 3): the facts resting on it would hold of
  // no run.
  if (auto most = d.upper_bound(); most && *most < bound) return false;
  std::string condition = d.str() + " >= " + std::to_string(bound);
  if (std::find(condition_sink->begin(), condition_sink->end(), condition) == condition_sink->end())
    condition_sink->push_back(std::move(condition));
  return true;
}

Fact int_result(int32_t elem_type, std::vector<Dim> shape, std::vector<Dim> elements) {
  bool any_known = false, all_known = true;
  for (Dim& d : elements) {
    d = fit(elem_type, d);
    any_known = any_known || !d.is_unknown();
    all_known = all_known && !d.is_unknown();
  }
  // A bool tensor with an unknown element would decide nothing (an If condition, a mask).
  const bool keep = elem_type == TensorProto::BOOL ? all_known : (any_known || elements.empty());
  if (!keep || !is_integral_type(elem_type)) return Fact::tensor(elem_type, std::move(shape));
  return Fact::int_tensor(elem_type, std::move(shape), std::move(elements));
}

Fact real_result(int32_t elem_type, std::vector<Dim> shape, const std::vector<std::optional<double>>& elements) {
  std::vector<double> values;
  values.reserve(elements.size());
  for (const auto& e : elements) {
    std::optional<double> r = e ? round_to(elem_type, *e) : std::nullopt;
    if (!r) return Fact::tensor(elem_type, std::move(shape));
    values.push_back(*r);
  }
  return Fact::real_tensor(elem_type, std::move(shape), std::move(values));
}

std::optional<std::vector<Elem>> elems_of(const Fact& f) {
  std::vector<Elem> out;
  if (f.ints) {
    out.assign(f.ints->begin(), f.ints->end());
  } else if (f.reals) {
    out.assign(f.reals->begin(), f.reals->end());
  } else {
    return std::nullopt;
  }
  return out;
}

Fact result_of(int32_t elem_type, std::vector<Dim> shape, const std::vector<std::optional<Elem>>& values) {
  if (is_integral_type(elem_type)) {
    std::vector<Dim> ints;
    ints.reserve(values.size());
    for (const auto& v : values) {
      const Dim* d = v ? std::get_if<Dim>(&*v) : nullptr;
      ints.push_back(d ? *d : Dim::unknown());
    }
    return int_result(elem_type, std::move(shape), std::move(ints));
  }
  if (is_floating_type(elem_type)) {
    std::vector<std::optional<double>> reals;
    reals.reserve(values.size());
    for (const auto& v : values) {
      const double* r = v ? std::get_if<double>(&*v) : nullptr;
      reals.push_back(r ? std::optional<double>(*r) : std::nullopt);
    }
    return real_result(elem_type, std::move(shape), reals);
  }
  return Fact::tensor(elem_type, std::move(shape));
}

// ---- broadcasting and moving elements -------------------------------------------------

std::optional<Dim> broadcast_dim(const Dim& a, const Dim& b) {
  auto ca = a.as_constant(), cb = b.as_constant();
  if (ca == 1) return b;
  if (cb == 1) return a;
  if (ca && cb) return *ca == *cb ? std::optional<Dim>(a) : std::nullopt;
  if (ca) return a;
  if (cb) return b;
  if (a.equals(b) == true) return a;
  // One is the other clamped at 0 (x[:-1] of a dim d is max(d,1)-1, that is max(d-1,0)):
  // both being sizes, they are one size (issue 52: Wav2Vec2's positional convolution,
  // then the Add and the mask's Expand against floor(samples/10)-1).
  if (a == Dim::max(b, Dim::constant(0))) return b;
  if (b == Dim::max(a, Dim::constant(0))) return a;
  if (covers(a, b)) return a;
  if (covers(b, a)) return b;
  return Dim::unknown();
}

// Whether broadcasting `a` with `b` can only give `a`: b <= a, and b is 1 where a is 1
// (b >= 1, or b with a's symbol set to 1 is 1: min(S,128) against S). A valid model then
// has b == a, or b == 1 (giving a), or a == 1 == b.
bool covers(const Dim& a, const Dim& b) {
  if (!proven_at_least(a - b, 0)) return false;
  if (const auto symbol = a.as_symbol()) {
    const Dim at_one = b.substitute([&symbol](const std::string& s) -> std::optional<Dim> {
      if (s == *symbol) return Dim::constant(1);
      return std::nullopt;
    });
    if (at_one.as_constant() == 1) return true;
  }
  return proven_at_least(b, 1);
}

std::optional<std::vector<Dim>> broadcast_shapes(const std::vector<const std::vector<Dim>*>& shapes) {
  size_t rank = 0;
  for (const auto* s : shapes) {
    if (!s) return std::nullopt;
    rank = std::max(rank, s->size());
  }
  std::vector<Dim> out(rank, Dim::constant(1));
  for (const auto* s : shapes) {
    const size_t offset = rank - s->size();
    for (size_t i = 0; i < s->size(); ++i) {
      auto d = broadcast_dim(out[offset + i], (*s)[i]);
      if (!d) return std::nullopt;
      out[offset + i] = std::move(*d);
    }
  }
  return out;
}

bool broadcasts_to(const std::vector<int64_t>& in, const std::vector<int64_t>& out) {
  if (in.size() > out.size()) return false;
  const size_t offset = out.size() - in.size();
  for (size_t i = 0; i < in.size(); ++i)
    if (in[i] != 1 && in[i] != out[offset + i]) return false;
  return true;
}

// For an output of static shape `out` whose axis k takes the input's indices picks[k]
// (input of static shape `in`), the input element behind each output element.
std::vector<size_t> selection_map(const std::vector<int64_t>& in, const std::vector<int64_t>& out,
                                  const std::vector<std::vector<int64_t>>& picks) {
  const size_t rank = in.size();
  std::vector<size_t> stride(rank, 1);
  for (size_t k = rank; k-- > 1;) stride[k - 1] = stride[k] * static_cast<size_t>(in[k]);
  const auto total = static_cast<size_t>(element_count(out).value_or(0));
  std::vector<size_t> map;
  map.reserve(total);
  std::vector<size_t> index(rank, 0);
  for (size_t n = 0; n < total; ++n) {
    size_t at = 0;
    for (size_t k = 0; k < rank; ++k) at += static_cast<size_t>(picks[k][index[k]]) * stride[k];
    map.push_back(at);
    for (size_t k = rank; k-- > 0;) {
      if (static_cast<int64_t>(++index[k]) < out[k]) break;
      index[k] = 0;
    }
  }
  return map;
}

std::vector<size_t> broadcast_map(const std::vector<int64_t>& in, const std::vector<int64_t>& out) {
  // An empty output needs no map; its other dims may be huge ([0, 3000000000]).
  if (element_count(out).value_or(0) == 0) return {};
  // A broadcast picks index i of each output axis, or index 0 where the input's dim is 1
  // (missing leading axes count as dims of 1).
  const size_t offset = out.size() - in.size();
  std::vector<int64_t> padded(offset, 1);
  padded.insert(padded.end(), in.begin(), in.end());
  std::vector<std::vector<int64_t>> picks(out.size());
  for (size_t k = 0; k < out.size(); ++k) {
    picks[k].resize(static_cast<size_t>(out[k]), 0);
    if (padded[k] != 1)
      for (int64_t i = 0; i < out[k]; ++i) picks[k][static_cast<size_t>(i)] = i;
  }
  return selection_map(padded, out, picks);
}

Fact gather_elements(const Fact& src, std::vector<Dim> shape, const std::vector<size_t>& map) {
  if (src.ints) {
    std::vector<Dim> e;
    e.reserve(map.size());
    for (size_t i : map) e.push_back((*src.ints)[i]);
    return Fact::int_tensor(src.elem_type, std::move(shape), std::move(e));
  }
  if (src.reals) {
    std::vector<double> e;
    e.reserve(map.size());
    for (size_t i : map) e.push_back((*src.reals)[i]);
    return Fact::real_tensor(src.elem_type, std::move(shape), std::move(e));
  }
  return Fact::tensor(src.elem_type, std::move(shape));
}

Fact reshaped(const Fact& src, std::vector<Dim> shape) {
  Fact f = src;
  f.shape = std::move(shape);
  return f;
}

namespace {

// Each input's elements, broadcast to `out` (static). An input of static shape without
// elements contributes unknown ones (an open condition may still be decided by the other
// operand: And(?, false) is false). nullopt when no input has elements, or one's shape is
// not static.
std::optional<std::vector<std::vector<Elem>>> broadcast_elems(const std::vector<const Fact*>& inputs,
                                                              const std::vector<int64_t>& out) {
  std::vector<std::vector<Elem>> all;
  bool any_elements = false;
  for (const Fact* f : inputs) {
    auto in_shape = shape_with_elements(f);
    std::optional<std::vector<Elem>> elems;
    if (in_shape) {
      elems = elems_of(*f);
      any_elements = true;
    } else {
      in_shape = static_shape(f);
      const int64_t count = static_count(in_shape);
      if (count < 0) return std::nullopt;
      elems = std::vector<Elem>(static_cast<size_t>(count), Dim::unknown());
    }
    if (!broadcasts_to(*in_shape, out)) return std::nullopt;  // broadcast_shapes made sure; the map relies on it
    std::vector<Elem> expanded;
    for (size_t i : broadcast_map(*in_shape, out)) expanded.push_back((*elems)[i]);
    all.push_back(std::move(expanded));
  }
  if (!any_elements) return std::nullopt;
  return all;
}

}  // namespace

Fact elementwise(const std::vector<const Fact*>& inputs, int32_t out_type, const ElemFn& fn) {
  std::vector<const std::vector<Dim>*> shapes;
  for (const Fact* f : inputs) shapes.push_back(f && f->shape ? &*f->shape : nullptr);
  auto shape = broadcast_shapes(shapes);
  if (!shape) return typed(out_type, std::nullopt);
  auto out = static_dims(*shape);
  const int64_t count = static_count(out);
  if (!fits_cap(out_type, count)) return Fact::tensor(out_type, std::move(*shape));
  auto args = broadcast_elems(inputs, *out);
  if (!args) return Fact::tensor(out_type, std::move(*shape));
  std::vector<std::optional<Elem>> values;
  values.reserve(static_cast<size_t>(count));
  std::vector<Elem> at(inputs.size());
  for (size_t n = 0; n < static_cast<size_t>(count); ++n) {
    for (size_t k = 0; k < inputs.size(); ++k) at[k] = (*args)[k][n];
    values.push_back(fn(at));
  }
  return result_of(out_type, std::move(*shape), values);
}

}  // namespace shapeprop::eval::detail
