// Folding rules for elementwise ops: Identity, Cast, CastLike, comparisons, logic,
// Where, arithmetic, Min and Max.
//
// Shapes follow numpy broadcasting (broadcast_dim). Integral elements are Dims, so
// Add(Shape(x)[0], 1) is N+1; floating elements are computed in double and rounded to
// the element type, which for + - * / of float, float16 and bfloat16 operands gives the
// correctly rounded result the runtimes give.
#include <cmath>
#include <limits>

#include "eval/fold_support.h"

namespace shapeprop::eval::detail {
namespace {

const Dim* as_dim(const Elem& e) { return std::get_if<Dim>(&e); }
const double* as_real(const Elem& e) { return std::get_if<double>(&e); }

// A binary op on two elements of one kind; nullopt for mixed kinds (a type error) or
// when the kind's op gives nothing.
template <class IntOp, class RealOp>
std::optional<Elem> on_pair(const Elem& a, const Elem& b, IntOp int_op, RealOp real_op) {
  if (const Dim *x = as_dim(a), *y = as_dim(b); x && y) return int_op(*x, *y);
  if (const double *x = as_real(a), *y = as_real(b); x && y) return real_op(*x, *y);
  return std::nullopt;
}

std::optional<Elem> known(const Dim& d) { return d.is_unknown() ? std::nullopt : std::optional<Elem>(d); }
std::optional<Elem> boolean(std::optional<bool> b) {
  return b ? std::optional<Elem>(Dim::constant(*b ? 1 : 0)) : std::nullopt;
}

// The first n inputs, nullptr for missing ones (which leave the output's shape unknown and
// keep the element functions from ever seeing fewer operands than they take).
std::vector<const Fact*> operands(const FoldInput& node, size_t n) {
  std::vector<const Fact*> out;
  for (size_t i = 0; i < n; ++i) out.push_back(node.input(i));
  return out;
}

// ---- Identity, Cast, CastLike ----------------------------------------------------------

// A constant integral value converted to integral type `to` the way C++ (and so the
// runtimes) convert: modulo 2^bits. uint64 beyond INT64_MAX has no Dim.
Dim wrap_to(int32_t to, int64_t v) {
  switch (to) {
    case TensorProto::BOOL: return Dim::constant(v != 0 ? 1 : 0);
    case TensorProto::INT8: return Dim::constant(static_cast<int8_t>(v));
    case TensorProto::UINT8: return Dim::constant(static_cast<uint8_t>(v));
    case TensorProto::INT16: return Dim::constant(static_cast<int16_t>(v));
    case TensorProto::UINT16: return Dim::constant(static_cast<uint16_t>(v));
    case TensorProto::INT32: return Dim::constant(static_cast<int32_t>(v));
    case TensorProto::UINT32: return Dim::constant(static_cast<uint32_t>(v));
    case TensorProto::INT64: return Dim::constant(v);
    case TensorProto::UINT64: return v >= 0 ? Dim::constant(v) : Dim::unknown();
    default: return Dim::unknown();
  }
}

Dim int_to_int(const Dim& d, int32_t to) {
  if (auto c = d.as_constant()) return wrap_to(to, *c);
  if (to == TensorProto::BOOL) {
    // N is true unless it is 0, which a symbol may be: only a decided comparison counts.
    auto zero = d.equals(Dim::constant(0));
    return zero ? Dim::constant(*zero ? 0 : 1) : Dim::unknown();
  }
  // A symbolic value stays what it is in int64; in int32 only a lone symbol (one
  // dimension; a product of several may exceed 2^31), and never in unsigned types, where
  // a negative polynomial would wrap.
  if (to == TensorProto::INT64) return d;
  if (to == TensorProto::INT32 && d.is_symbol()) return d;
  return Dim::unknown();
}

std::optional<Elem> real_to_int(double r, int32_t to) {
  if (std::isnan(r)) return std::nullopt;
  if (to == TensorProto::BOOL) return Elem{Dim::constant(r != 0 ? 1 : 0)};
  // Float to integer truncates toward zero; out of range it is undefined, so unknown.
  const double t = std::trunc(r);
  std::optional<IntRange> range =
      to == TensorProto::UINT64 ? std::optional<IntRange>(IntRange{0, std::numeric_limits<int64_t>::max()}) : int_range(to);
  if (!range || std::isinf(t) || t < static_cast<double>(range->min) || t >= static_cast<double>(range->max) + 1.0)
    return std::nullopt;
  return Elem{Dim::constant(static_cast<int64_t>(t))};
}

std::optional<Elem> int_to_real(const Dim& d, int32_t to) {
  auto c = d.as_constant();
  if (!c) return std::nullopt;
  // int64 -> float rounds once (not through double, which could round twice).
  const double v = to == TensorProto::DOUBLE ? static_cast<double>(*c) : double{static_cast<float>(*c)};
  auto r = round_to(to, v);
  return r ? std::optional<Elem>(*r) : std::nullopt;
}

std::optional<Elem> cast_elem(const Elem& e, int32_t to) {
  const bool to_int = is_integral_type(to), to_real = is_floating_type(to);
  if (const Dim* d = as_dim(e)) {
    if (to_int) return Elem{int_to_int(*d, to)};
    if (to_real) return int_to_real(*d, to);
  } else if (const double* r = as_real(e)) {
    if (to_int) return real_to_int(*r, to);
    if (to_real) {
      auto v = round_to(to, *r);
      return v ? std::optional<Elem>(*v) : std::nullopt;
    }
  }
  return std::nullopt;  // strings, float8, complex: type and shape only
}

Fact cast_to(const Fact* x, int32_t to) {
  if (!x) return typed(to, std::nullopt);
  if (x->elem_type == to && to != 0) return *x;  // a no-op keeps everything, symbols included
  if (to == 0) return typed(0, x->shape);        // CastLike to a type not known yet
  auto elems = elems_of(*x);
  if (!x->shape || !elems || (!is_integral_type(x->elem_type) && !is_floating_type(x->elem_type)))
    return typed(to, x->shape);
  std::vector<std::optional<Elem>> values;
  values.reserve(elems->size());
  for (const Elem& e : *elems) values.push_back(cast_elem(e, to));
  return result_of(to, *x->shape, values);
}

// ---- comparisons -----------------------------------------------------------------------

// Comparisons of Dims. Symbolic elements are dims (Shape and Size are where symbols
// enter), so every symbol lies within the bounds in force (at least 0, or 1 when empty
// dims are assumed away). a < b is decided when b-a-1 or a-b is then known non-negative;
// a == b is false when either difference is known positive.
std::optional<bool> dim_less(const Dim& a, const Dim& b) {
  if (proven_at_least(b - a - Dim::constant(1), 0)) return true;
  if (proven_at_least(a - b, 0)) return false;
  return std::nullopt;
}

enum class Compare { Equal, Less, LessOrEqual, Greater, GreaterOrEqual };

std::optional<bool> compare_dims(Compare op, const Dim& a, const Dim& b) {
  auto negate = [](std::optional<bool> v) { return v ? std::optional<bool>(!*v) : std::nullopt; };
  switch (op) {
    case Compare::Equal:
      if (auto eq = a.equals(b)) return eq;
      if (proven_at_least(a - b, 1) || proven_at_least(b - a, 1)) return false;
      return std::nullopt;
    case Compare::Less: return dim_less(a, b);
    case Compare::LessOrEqual: return negate(dim_less(b, a));
    case Compare::Greater: return dim_less(b, a);
    case Compare::GreaterOrEqual: return negate(dim_less(a, b));
  }
  return std::nullopt;
}

bool compare_reals(Compare op, double a, double b) {  // IEEE: NaN compares false
  switch (op) {
    case Compare::Equal: return a == b;
    case Compare::Less: return a < b;
    case Compare::LessOrEqual: return a <= b;
    case Compare::Greater: return a > b;
    case Compare::GreaterOrEqual: return a >= b;
  }
  return false;
}

std::vector<Fact> comparison(const FoldInput& node, Compare op) {
  auto decide = [op](const Dim& a, const Dim& b) {
    // What the bounds proved counts where it decided.
    std::optional<bool> decided;
    bool relied = false;
    {
      DimBounds::Scope trial(DimBounds::current());
      decided = compare_dims(op, a, b);
      relied = trial.relied();
    }
    if (decided && relied) DimBounds::note_relied();
    return boolean(decided);
  };
  return {elementwise(operands(node, 2), TensorProto::BOOL, [op, &decide](const std::vector<Elem>& v) {
    return on_pair(v[0], v[1], decide, [op](double a, double b) { return boolean(compare_reals(op, a, b)); });
  })};
}

// ---- logic -----------------------------------------------------------------------------

std::optional<bool> truth(const Elem& e) {
  const Dim* d = as_dim(e);
  auto c = d ? d->as_constant() : std::nullopt;
  return c ? std::optional<bool>(*c != 0) : std::nullopt;
}

// ---- arithmetic ------------------------------------------------------------------------

int32_t arithmetic_type(const FoldInput& node) { return common_type(node.inputs); }

// A unary (n=1) or binary (n=2) arithmetic op; the output has the inputs' type.
Fact arithmetic(const FoldInput& node, size_t n, const ElemFn& fn) {
  return elementwise(operands(node, n), arithmetic_type(node), fn);
}

// Integer Mod with fmod=1: the remainder takes the dividend's sign (C's %).
std::optional<Elem> int_fmod(const Dim& a, const Dim& b) {
  auto x = a.as_constant(), y = b.as_constant();
  if (x && y) {
    if (*y == 0) return std::nullopt;
    if (*y == -1) return Elem{Dim::constant(0)};  // INT64_MIN % -1 is undefined in C++
    return Elem{Dim::constant(*x % *y)};
  }
  // Where Dim::mod proves divisibility the remainder is 0 under either sign rule.
  return Dim::mod(a, b).as_constant() == 0 ? std::optional<Elem>(Dim::constant(0)) : std::nullopt;
}

// min or max of two elements; for Dims one of them where the bounds in force decide it,
// else a min or max term (min(S,128)).
std::optional<Elem> pick(const Elem& a, const Elem& b, bool want_min) {
  return on_pair(
      a, b,
      [want_min](const Dim& x, const Dim& y) { return known(want_min ? Dim::min(x, y) : Dim::max(x, y)); },
      [want_min](double x, double y) -> std::optional<Elem> {
        if (std::isnan(x) || std::isnan(y)) return std::nullopt;  // NaN handling differs among runtimes
        return Elem{want_min ? std::min(x, y) : std::max(x, y)};
      });
}

std::vector<Fact> min_or_max(const FoldInput& node, bool want_min) {
  if (node.inputs.empty()) return {Fact()};
  return {elementwise(node.inputs, arithmetic_type(node), [want_min](const std::vector<Elem>& v) -> std::optional<Elem> {
    std::optional<Elem> acc = v[0];
    for (size_t i = 1; i < v.size() && acc; ++i) acc = pick(*acc, v[i], want_min);
    return acc;
  })};
}

}  // namespace

std::vector<Fact> fold_identity(const FoldInput& node) {
  const Fact* x = node.input(0);
  return {x ? *x : Fact()};
}

std::vector<Fact> fold_cast(const FoldInput& node) {
  return {cast_to(node.input(0), static_cast<int32_t>(attr_int(node, "to", 0)))};
}

// CastLike(x, like): Cast to like's element type.
std::vector<Fact> fold_cast_like(const FoldInput& node) {
  const Fact* like = node.input(1);
  return {cast_to(node.input(0), like ? like->elem_type : 0)};
}

std::vector<Fact> fold_equal(const FoldInput& node) { return comparison(node, Compare::Equal); }
std::vector<Fact> fold_less(const FoldInput& node) { return comparison(node, Compare::Less); }
std::vector<Fact> fold_less_or_equal(const FoldInput& node) { return comparison(node, Compare::LessOrEqual); }
std::vector<Fact> fold_greater(const FoldInput& node) { return comparison(node, Compare::Greater); }
std::vector<Fact> fold_greater_or_equal(const FoldInput& node) { return comparison(node, Compare::GreaterOrEqual); }

std::vector<Fact> fold_not(const FoldInput& node) {
  return {elementwise({node.input(0)}, TensorProto::BOOL, [](const std::vector<Elem>& v) {
    auto t = truth(v[0]);
    return boolean(t ? std::optional<bool>(!*t) : std::nullopt);
  })};
}

// And/Or decide with one known operand when it is the absorbing value (false, true).
std::vector<Fact> fold_and(const FoldInput& node) {
  return {elementwise(operands(node, 2), TensorProto::BOOL, [](const std::vector<Elem>& v) {
    auto a = truth(v[0]), b = truth(v[1]);
    if (a == false || b == false) return boolean(false);
    return boolean(a && b ? std::optional<bool>(true) : std::nullopt);
  })};
}

std::vector<Fact> fold_or(const FoldInput& node) {
  return {elementwise(operands(node, 2), TensorProto::BOOL, [](const std::vector<Elem>& v) {
    auto a = truth(v[0]), b = truth(v[1]);
    if (a == true || b == true) return boolean(true);
    return boolean(a && b ? std::optional<bool>(false) : std::nullopt);
  })};
}

// Where(cond, x, y): x's element where cond holds, else y's; with cond unknown, only
// when x and y agree.
std::vector<Fact> fold_where(const FoldInput& node) {
  const int32_t type = common_type({node.input(1), node.input(2)});
  return {elementwise(operands(node, 3), type, [](const std::vector<Elem>& v) -> std::optional<Elem> {
    if (auto c = truth(v[0])) return *c ? v[1] : v[2];
    const Dim *x = as_dim(v[1]), *y = as_dim(v[2]);
    if (x && y && x->equals(*y) == true) return v[1];
    return std::nullopt;
  })};
}

std::vector<Fact> fold_add(const FoldInput& node) {
  return {arithmetic(node, 2, [](const std::vector<Elem>& v) {
    return on_pair(v[0], v[1], [](const Dim& a, const Dim& b) { return known(a + b); },
                   [](double a, double b) { return std::optional<Elem>(a + b); });
  })};
}

std::vector<Fact> fold_sub(const FoldInput& node) {
  return {arithmetic(node, 2, [](const std::vector<Elem>& v) {
    return on_pair(v[0], v[1], [](const Dim& a, const Dim& b) { return known(a - b); },
                   [](double a, double b) { return std::optional<Elem>(a - b); });
  })};
}

std::vector<Fact> fold_mul(const FoldInput& node) {
  return {arithmetic(node, 2, [](const std::vector<Elem>& v) {
    return on_pair(v[0], v[1], [](const Dim& a, const Dim& b) { return known(a * b); },
                   [](double a, double b) { return std::optional<Elem>(a * b); });
  })};
}

// Integer Div truncates toward zero (ONNX, like C); a zero divisor gives unknown. By a
// constant c > 0, truncation is floor division where the dividend a is never negative
// (a size: symbols are; B/2 is floor(B/2)), and max(floor(a/c), 0) where a > -c (torch's
// 1 + (H-1)/8 for ceil(H/8) is max(floor((H+7)/8),1), floor((H+7)/8) once H >= 1 is
// known); a negative divisor negates. Floating Div is IEEE (x/0 is inf or NaN).
Dim int_div(const Dim& a, const Dim& b) {
  const auto c = b.as_constant();
  if (!c || *c == 0 || *c == std::numeric_limits<int64_t>::min() || a.is_constant()) return Dim::trunc_div(a, b);
  if (*c < 0) return -int_div(a, Dim::constant(-*c));
  if (proven_at_least(a, 0)) return Dim::floor_div(a, b);
  if (proven_at_least(a, 1 - *c)) return Dim::max(Dim::floor_div(a, b), Dim::constant(0));
  return Dim::trunc_div(a, b);
}

std::vector<Fact> fold_div(const FoldInput& node) {
  return {arithmetic(node, 2, [](const std::vector<Elem>& v) {
    auto dims = [](const Dim& a, const Dim& b) { return known(int_div(a, b)); };
    return on_pair(v[0], v[1], dims,
                   [](double a, double b) { return std::optional<Elem>(a / b); });
  })};
}

// Mod: fmod=0 (integers only) takes the divisor's sign, like Python; fmod=1 the
// dividend's, like C's fmod. ONNX requires fmod=1 for floating types.
std::vector<Fact> fold_mod(const FoldInput& node) {
  const bool fmod = attr_int(node, "fmod", 0) != 0;
  return {arithmetic(node, 2, [fmod](const std::vector<Elem>& v) {
    return on_pair(
        v[0], v[1],
        [fmod](const Dim& a, const Dim& b) { return fmod ? int_fmod(a, b) : known(Dim::mod(a, b)); },
        [fmod](double a, double b) { return fmod ? std::optional<Elem>(std::fmod(a, b)) : std::nullopt; });
  })};
}

std::vector<Fact> fold_neg(const FoldInput& node) {
  return {arithmetic(node, 1, [](const std::vector<Elem>& v) -> std::optional<Elem> {
    if (const Dim* d = as_dim(v[0])) return known(-*d);
    return Elem{-std::get<double>(v[0])};
  })};
}

// Abs of a Dim is known when its sign is: constants, and polynomials known non-negative
// (or non-positive).
std::vector<Fact> fold_abs(const FoldInput& node) {
  return {arithmetic(node, 1, [](const std::vector<Elem>& v) -> std::optional<Elem> {
    if (const Dim* d = as_dim(v[0])) {
      if (proven_at_least(*d, 0)) return Elem{*d};
      if (proven_at_least(-*d, 0)) return known(-*d);  // -INT64_MIN overflows to unknown
      return std::nullopt;
    }
    return Elem{std::fabs(std::get<double>(v[0]))};
  })};
}

std::vector<Fact> fold_min(const FoldInput& node) { return min_or_max(node, true); }
std::vector<Fact> fold_max(const FoldInput& node) { return min_or_max(node, false); }

}  // namespace shapeprop::eval::detail
