// Fuzz target: Dim arithmetic. The bytes choose bounds on the symbols (DimBounds: every
// symbol at least 0 or 1, and maybe a range for N, put in force for the run), Dims
// (constants, symbols, opaque dim_params, parsed text) and a sequence of operations on
// them; every result is held to what a Dim promises (dim.h):
//   - canonical text: parse(d.str()) == d for every non-constant d (whatever bounds were
//     in force when d was made), and parse(s).str() == s for every text s;
//   - structure: + and * commute, min and max too; equal Dims hash equal; equals() agrees
//     with the difference when that is a constant;
//   - meaning: evaluated at random values of its symbols within the bounds (fresh symbols
//     dyn__N at least 0 always), a known result equals the operation on the evaluated
//     operands (floor, ceil, exact and truncating division, remainder, min, max
//     included): simplification never changes a value; lower_bound and upper_bound
//     bound it, and min_value too where every symbol is at least its argument.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "byte_reader.h"
#include "fuzz_support.h"
#include "shapeprop/dim.h"

namespace {

using shapeprop::Dim;
using shapeprop::fuzz::require;
__extension__ typedef __int128 Wide;

constexpr Wide kMin = std::numeric_limits<int64_t>::min(), kMax = std::numeric_limits<int64_t>::max();

Wide floor_div(Wide a, Wide b);

// Reads canonical text (the grammar of dim.h, floor terms included) and evaluates it in
// 128 bits; nullopt on overflow beyond four times int64's range. The text is read to its
// end either way: a floor term whose value overflows is still closed where it closes
// (it was not, and the harness took the text for malformed).
class TextValue {
 public:
  TextValue(const std::string& text, const std::function<Wide(const std::string&)>& value_of)
      : text_(text), value_of_(value_of) {}

  std::optional<Wide> sum() {
    std::optional<Wide> total = 0;
    Wide sign = 1;
    if (eat('-')) sign = -1;
    while (true) {
      const auto t = term();
      total = total && t ? within(*total + sign * *t) : std::nullopt;
      if (eat('+')) {
        sign = 1;
      } else if (eat('-')) {
        sign = -1;
      } else {
        return total;
      }
    }
  }
  bool done() const { return pos_ == text_.size(); }

 private:
  static std::optional<Wide> within(Wide v) {
    if (v > kMax * 4 || v < kMin * 4) return std::nullopt;
    return v;
  }
  std::optional<Wide> term() {
    std::optional<Wide> product = 1;
    do {
      const auto f = factor();
      Wide p = 0;
      // Both within 4 x int64: their product within 2^130 may pass __int128's range.
      product = product && f && !__builtin_mul_overflow(*product, *f, &p) ? within(p) : std::nullopt;
    } while (eat('*'));
    return product;
  }
  std::optional<Wide> factor() {
    if (text_.compare(pos_, 4, "min(") == 0 || text_.compare(pos_, 4, "max(") == 0) {
      const bool is_max = text_[pos_ + 1] == 'a';
      pos_ += 4;
      const auto a = sum();
      require(eat(','), "min/max term without ',' in " + text_);
      const auto b = sum();
      require(eat(')'), "unclosed min/max term in " + text_);
      if (!a || !b) return std::nullopt;
      return is_max ? std::max(*a, *b) : std::min(*a, *b);
    }
    if (text_.compare(pos_, 6, "floor(") == 0) {
      pos_ += 6;
      std::optional<Wide> inner;
      if (eat('(')) {
        inner = sum();
        require(eat(')'), "unbalanced floor term in " + text_);
      } else {
        inner = factor();
      }
      require(eat('/'), "floor term without '/' in " + text_);
      auto divisor = factor();
      require(eat(')'), "unclosed floor term in " + text_);
      if (!inner || !divisor) return std::nullopt;
      return floor_div(*inner, *divisor);
    }
    const size_t start = pos_;
    while (pos_ < text_.size() && text_[pos_] != '*' && text_[pos_] != '+' && text_[pos_] != '-' && text_[pos_] != '/' &&
           text_[pos_] != ')' && text_[pos_] != ',')
      ++pos_;
    const std::string factor = text_.substr(start, pos_ - start);
    require(!factor.empty(), "empty factor in a Dim: " + text_);
    if (factor[0] >= '0' && factor[0] <= '9') return static_cast<Wide>(std::stoull(factor));
    return value_of_(factor);
  }
  bool eat(char c) {
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  const std::string& text_;
  const std::function<Wide(const std::string&)>& value_of_;
  size_t pos_ = 0;
};

// The value of `d` at `values` (symbols not listed take `others`, or at least that the
// least value `bounds` allows them), from its canonical text; nullopt for an unknown Dim
// or when the evaluation overflows int64 somewhere.
std::optional<Wide> evaluate(const Dim& d, const std::map<std::string, int64_t>& values, int64_t others = 0,
                             const shapeprop::DimBounds& bounds = shapeprop::DimBounds()) {
  if (d.is_unknown()) return std::nullopt;
  if (auto c = d.as_constant()) return Wide{*c};
  const std::function<Wide(const std::string&)> value_of = [&](const std::string& s) -> Wide {
    auto it = values.find(s);
    return it == values.end() ? std::max(others, bounds.range(s).min) : it->second;
  };
  if (auto s = d.as_symbol()) return value_of(*s);  // opaque symbols too
  const std::string text = d.str();
  TextValue reader(text, value_of);
  const auto total = reader.sum();
  require(!total || reader.done(), "unexpected text in a Dim: " + text);
  if (!total || *total > kMax || *total < kMin) return std::nullopt;
  return total;
}

Wide floor_div(Wide a, Wide b) {
  Wide q = a / b;
  if (a % b != 0 && ((a < 0) != (b < 0))) --q;
  return q;
}

Wide floor_mod(Wide a, Wide b) { return a - floor_div(a, b) * b; }
Wide ceil_div(Wide a, Wide b) { return -floor_div(-a, b); }

class DimFuzzer {
 public:
  explicit DimFuzzer(shapeprop::fuzz::ByteReader& in) : in_(in), bounds_(in_.number(0, 1)) {
    if (in_.flag()) {
      const int64_t lo = in_.number(0, 300);
      bounds_.set_range("N", {lo, lo + in_.number(0, 300)});
    }
    // Values within the bounds, each symbol's range the one bounds_ gives it.
    for (const char* s : {"N", "M", "K", "batch size", "dyn__0"}) {
      const auto range = bounds_.range(s);
      values_[s] = in_.number(range.min, range.max.value_or(2000 + range.min));
    }
  }

  void run() {
    const shapeprop::DimBounds::Scope scope(bounds_);
    std::vector<Dim> dims;
    const int n = static_cast<int>(in_.number(1, 24));
    for (int i = 0; i < n && !in_.empty(); ++i) {
      if (dims.size() < 2 || in_.number(0, 3) == 0) {
        dims.push_back(leaf());
      } else {
        const Dim& a = dims[in_.index(dims.size())];
        const Dim& b = dims[in_.index(dims.size())];
        dims.push_back(operate(a, b));
      }
      check_text(dims.back());
    }
  }

 private:
  shapeprop::fuzz::ByteReader& in_;
  shapeprop::DimBounds bounds_;
  std::map<std::string, int64_t> values_;

  Dim leaf() {
    switch (in_.number(0, 4)) {
      case 0: return Dim::constant(in_.number(-3, 3));
      case 1: return Dim::constant(in_.number(std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()));
      case 2: return Dim::symbol(in_.pick<std::string>({"N", "M", "K"}));
      case 3:
        return Dim::parse(in_.pick<std::string>(
            {"batch size", "2*N", "M*N+1", "N-1", "-N", "N*N", "3", "floor(N/2)", "floor((M+1)/3)-N", "dyn__0",
             "min(N,128)", "max(M,N)+1", "min(K,floor(N/2))", "max(N,1)-1"}));
      default: {
        const std::string text = in_.bytes(static_cast<size_t>(in_.number(0, 12)));
        const Dim d = Dim::parse(text);
        if (!text.empty() && text != "?") require(d.str() == text, "parse(s).str() != s for s = '" + text + "'");
        return d;
      }
    }
  }

  void check_text(const Dim& d) {
    require(!(d.is_constant() && d.is_unknown()), "a Dim both constant and unknown");
    if (!d.is_unknown() && !d.is_constant())
      require(Dim::parse(d.str()) == d, "parse(d.str()) != d for " + d.str());
    if (const auto v = evaluate(d, values_, 0, bounds_)) {
      if (const auto lo = d.lower_bound()) require(*v >= *lo, "lower_bound broken for " + d.str());
      if (const auto hi = d.upper_bound()) require(*v <= *hi, "upper_bound broken for " + d.str());
    }
    const int64_t least = in_.number(0, 1);
    if (auto m = d.min_value(least)) {
      std::map<std::string, int64_t> at = values_;
      for (auto& [name, v] : at)
        if (!Dim::is_fresh_symbol(name)) v = std::max<int64_t>(v, least);  // a fresh one may be 0 still
      // (d was made under bounds_, which min_value knows nothing of: with values that
      // leave bounds_, a decided min may have another value; keep to values within.)
      for (const auto& [name, v] : at)
        if (const auto r = bounds_.range(name); v < r.min || (r.max && v > *r.max)) return;
      if (auto v = evaluate(d, at, least, bounds_)) require(*v >= *m, "min_value bound broken for " + d.str());
    }
  }

  // `a op b` for a chosen op, with its promised meaning checked.
  Dim operate(const Dim& a, const Dim& b) {
    const auto va = evaluate(a, values_, 0, bounds_), vb = evaluate(b, values_, 0, bounds_);
    auto agrees = [&](const Dim& r, std::optional<Wide> expected, const char* op) {
      if (r.is_unknown() || !expected) return;
      const auto got = evaluate(r, values_, 0, bounds_);
      if (!got) return;
      require(*got == *expected, std::string("Dim ") + op + " is wrong: " + a.str() + " " + op + " " + b.str() + " = " +
                                     r.str());
    };
    switch (in_.number(0, 7)) {
      case 0: {
        const Dim r = a + b;
        require(r == b + a, "a + b != b + a for " + a.str() + ", " + b.str());
        agrees(r, va && vb ? std::optional<Wide>(*va + *vb) : std::nullopt, "+");
        if (a.is_constant() && b.is_constant() && (*va + *vb) >= kMin && (*va + *vb) <= kMax)
          require(r.is_constant(), "constant + constant that fits is not known");
        return r;
      }
      case 1: {
        const Dim r = a - b;
        agrees(r, va && vb ? std::optional<Wide>(*va - *vb) : std::nullopt, "-");
        if (auto e = a.equals(b)) require(*e == (r.as_constant() == 0) || r.is_unknown(), "equals() disagrees with a - b");
        return r;
      }
      case 2: {
        const Dim r = a * b;
        require(r == b * a, "a * b != b * a for " + a.str() + ", " + b.str());
        agrees(r, va && vb ? std::optional<Wide>(*va * *vb) : std::nullopt, "*");
        return r;
      }
      case 3:
      case 4: {
        switch (in_.number(0, 3)) {
          case 0: {
            const Dim r = Dim::floor_div(a, b);
            if (va && vb && *vb != 0) agrees(r, floor_div(*va, *vb), "floor_div");
            return r;
          }
          case 3: {
            const Dim r = Dim::ceil_div(a, b);
            if (va && vb && *vb != 0) agrees(r, ceil_div(*va, *vb), "ceil_div");
            return r;
          }
          case 1: {
            const Dim r = Dim::trunc_div(a, b);
            if (va && vb && *vb != 0) agrees(r, *va / *vb, "trunc_div");
            return r;
          }
          default: {
            const Dim r = Dim::exact_div(a, b);
            if (va && vb && *vb != 0 && !r.is_unknown())
              require(*va % *vb == 0 || !evaluate(r, values_, 0, bounds_), "exact_div of values that do not divide: " + a.str() +
                                                                   " / " + b.str() + " = " + r.str());
            if (va && vb && *vb != 0) agrees(r, *va / *vb, "exact_div");
            return r;
          }
        }
      }
      case 5: {
        const Dim r = Dim::mod(a, b);
        if (va && vb && *vb != 0) agrees(r, floor_mod(*va, *vb), "mod");
        return r;
      }
      case 6: {
        const Dim lo = Dim::min(a, b), hi = Dim::max(a, b);
        require(lo == Dim::min(b, a) && hi == Dim::max(b, a), "min or max depends on order: " + a.str() + ", " + b.str());
        if (va && vb) {
          agrees(lo, std::min(*va, *vb), "min");
          agrees(hi, std::max(*va, *vb), "max");
        }
        return in_.flag() ? lo : hi;
      }
      default: {
        require(a != b || a.hash() == b.hash(), "equal Dims hash differently");
        const Dim r = -a;
        agrees(r, va ? std::optional<Wide>(-*va) : std::nullopt, "negation");
        return r;
      }
    }
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  shapeprop::fuzz::ByteReader in(data, size);
  DimFuzzer(in).run();
  return 0;
}
