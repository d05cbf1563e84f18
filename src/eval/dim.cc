#include "shapeprop/dim.h"

#include <algorithm>
#include <functional>
#include <iterator>
#include <limits>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <ostream>
#include <utility>

#include "shapeprop/hash_combine.h"

namespace shapeprop {
namespace {

// Products are summed in 128 bits so that an intermediate overflow cannot make a*b and b*a
// differ; only the final coefficient must fit in int64.
__extension__ typedef __int128 Wide;

// Locale-independent character classes of the identifier grammar.
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_alpha(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; }

bool is_identifier(std::string_view s) {
  if (s.empty() || !is_alpha(s[0])) return false;
  return std::all_of(s.begin() + 1, s.end(), [](char c) { return is_alpha(c) || is_digit(c); });
}

// |v| as unsigned, so that INT64_MIN prints without overflow.
uint64_t magnitude(int64_t v) { return v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v); }

// Scanner for the grammar str() prints. Returns false when the text is not entirely in it
// or a number or sum overflows; the caller then keeps the text as an opaque symbol.
class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  // Adds each term's coefficient to `terms`, keyed by its sorted monomial ({} for the constant).
  bool parse(std::map<std::vector<std::string>, int64_t>& terms) {
    bool negative = eat('-');
    while (true) {
      std::vector<std::string> monomial;
      uint64_t coefficient = 1;
      if (at_digit()) {
        if (!number(coefficient)) return false;
        if (eat('*') && !identifiers(monomial)) return false;
      } else if (!identifiers(monomial)) {
        return false;
      }
      std::sort(monomial.begin(), monomial.end());
      int64_t value;
      if (!negate_if(negative, coefficient, value)) return false;
      int64_t& slot = terms[std::move(monomial)];
      if (__builtin_add_overflow(slot, value, &slot)) return false;
      if (pos_ == text_.size()) return true;
      if (eat('+')) {
        negative = false;
      } else if (eat('-')) {
        negative = true;
      } else {
        return false;
      }
    }
  }

 private:
  bool eat(char c) {
    if (pos_ == text_.size() || text_[pos_] != c) return false;
    ++pos_;
    return true;
  }
  bool at_digit() const { return pos_ < text_.size() && is_digit(text_[pos_]); }

  bool number(uint64_t& out) {
    out = 0;
    while (at_digit()) {
      uint64_t digit = static_cast<uint64_t>(text_[pos_++] - '0');
      if (__builtin_mul_overflow(out, 10u, &out) || __builtin_add_overflow(out, digit, &out)) return false;
    }
    return true;
  }

  // identifier ('*' identifier)*
  bool identifiers(std::vector<std::string>& out) {
    do {
      if (pos_ == text_.size() || !is_alpha(text_[pos_])) return false;
      size_t end = pos_ + 1;
      while (end < text_.size() && (is_alpha(text_[end]) || is_digit(text_[end]))) ++end;
      out.emplace_back(text_.substr(pos_, end - pos_));
      pos_ = end;
    } while (eat('*'));
    return true;
  }

  // The signed value of a sign and magnitude; -2^63 fits although 2^63 does not.
  static bool negate_if(bool negative, uint64_t abs, int64_t& out) {
    constexpr uint64_t kMax = std::numeric_limits<int64_t>::max();
    if (abs > kMax + (negative ? 1 : 0)) return false;
    out = negative ? static_cast<int64_t>(0 - abs) : static_cast<int64_t>(abs);
    return true;
  }

  std::string_view text_;
  size_t pos_ = 0;
};

}  // namespace

// ---------------------------------------------------------------- interning

// One distinct non-constant polynomial (without its constant), with what is asked of it
// often computed once: its canonical text and its hash.
struct Dim::Terms {
  TermMap map;
  std::string text;  // the terms as str() writes them, highest degree first
  size_t hash = 0;
  // Every symbol is an identifier, so the terms may take part in larger expressions (an
  // opaque symbol may only stand alone).
  bool identifiers_only = true;
};

const Dim::Terms Dim::kUnknownTerms{};

namespace {

size_t hash_terms(const std::map<std::vector<std::string>, int64_t>& terms) {
  size_t h = 0;
  for (const auto& [monomial, coefficient] : terms) {
    hash_combine(h, monomial.size());
    for (const auto& name : monomial) hash_combine(h, std::hash<std::string>{}(name));
    hash_combine(h, std::hash<int64_t>{}(coefficient));
  }
  return h;
}

std::string terms_text(const std::map<std::vector<std::string>, int64_t>& terms) {
  std::vector<std::pair<const std::vector<std::string>*, int64_t>> order;
  for (const auto& [monomial, coefficient] : terms) order.emplace_back(&monomial, coefficient);
  // The map orders monomials lexicographically; str() wants the highest degree first.
  std::stable_sort(order.begin(), order.end(),
                   [](const auto& a, const auto& b) { return a.first->size() > b.first->size(); });
  std::string out;
  for (const auto& [monomial, coefficient] : order) {
    if (coefficient < 0) {
      out += '-';
    } else if (!out.empty()) {
      out += '+';
    }
    if (magnitude(coefficient) != 1) {
      out += std::to_string(magnitude(coefficient));
      out += '*';
    }
    for (size_t i = 0; i < monomial->size(); ++i) {
      if (i > 0) out += '*';
      out += (*monomial)[i];
    }
  }
  return out;
}

// The process-wide table of interned terms, and a cache of parsed dim_params (the same
// few names are read from every TypeProto of a model).
class Interner {
 public:
  template <class Make>
  const Dim::Terms* intern(std::map<std::vector<std::string>, int64_t> terms, Make make) {
    const size_t h = hash_terms(terms);
    std::lock_guard<std::mutex> lock(mutex_);
    auto [first, last] = table_.equal_range(h);
    for (auto it = first; it != last; ++it)
      if (it->second->map == terms) return it->second.get();
    auto owned = make(std::move(terms), h);
    const Dim::Terms* t = owned.get();
    table_.emplace(h, std::move(owned));
    return t;
  }

  std::optional<Dim> parsed(std::string_view text) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = parsed_.find(text);
    if (it == parsed_.end()) return std::nullopt;
    return it->second;
  }
  void remember(std::string_view text, const Dim& d) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (parsed_.size() < kMaxParsed) parsed_.emplace(std::string(text), d);
  }
  std::optional<Dim> named(std::string_view text) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = named_.find(text);
    if (it == named_.end()) return std::nullopt;
    return it->second;
  }
  void remember_named(std::string_view text, const Dim& d) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (named_.size() < kMaxParsed) named_.emplace(std::string(text), d);
  }

 private:
  static constexpr size_t kMaxParsed = 1 << 16;
  struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::mutex mutex_;
  std::unordered_multimap<size_t, std::unique_ptr<Dim::Terms>> table_;
  std::unordered_map<std::string, Dim, StringHash, std::equal_to<>> parsed_;
  std::unordered_map<std::string, Dim, StringHash, std::equal_to<>> named_;
};

Interner& interner() {
  static Interner* table = new Interner();  // never destroyed: Dims may outlive static destruction
  return *table;
}

}  // namespace

const Dim::TermMap& Dim::term_map() const {
  static const TermMap empty;
  return terms_ && terms_ != unknown_terms() ? terms_->map : empty;
}

Dim Dim::constant(int64_t value) {
  Dim d;
  d.terms_ = nullptr;
  d.constant_ = value;
  return d;
}

Dim Dim::symbol(std::string name) {
  // Only identifiers are symbols as they stand; other text means what it parses to, so
  // that str() of the result parses back to it.
  if (!is_identifier(name)) return parse(name);
  return from_terms({{{std::move(name)}, 1}}, 0);
}

Dim Dim::opaque(std::string_view name) {
  Dim d;
  d.constant_ = 0;
  d.terms_ = interner().intern({{{std::string(name)}, 1}}, [](TermMap map, size_t h) {
    auto t = std::make_unique<Terms>();
    t->text = map.begin()->first.front();
    t->identifiers_only = is_identifier(t->text);
    t->map = std::move(map);
    t->hash = h;
    return t;
  });
  return d;
}

Dim Dim::named(std::string_view dim_param) {
  if (dim_param.empty() || dim_param == "?") return unknown();
  if (auto known = interner().named(dim_param)) return *known;
  // One symbol whatever the text: an identifier is what from_terms would make of it too.
  const Dim d = opaque(dim_param);
  interner().remember_named(dim_param, d);
  return d;
}

Dim Dim::parse(std::string_view dim_param) {
  if (dim_param.empty() || dim_param == "?") return unknown();
  if (auto known = interner().parsed(dim_param)) return *known;
  Dim result;
  TermMap terms;
  bool done = false;
  if (Parser(dim_param).parse(terms)) {
    int64_t constant = 0;
    if (auto it = terms.find({}); it != terms.end()) {
      constant = it->second;
      terms.erase(it);
    }
    Dim d = from_terms(std::move(terms), constant, kMaxTermsCeiling);
    // Only the text str() writes is read as an expression: a model's own dim_params
    // ("seq-len", "1+N", "3") stay the symbols they are, spelled as they were.
    if (!d.is_unknown() && !d.is_constant() && d.str() == dim_param) {
      result = d;
      done = true;
    }
  }
  // Otherwise the whole text is one opaque symbol: by construction parse() of it gives it back.
  if (!done) result = opaque(dim_param);
  interner().remember(dim_param, result);
  return result;
}

namespace {
thread_local size_t max_terms_setting = Dim::kDefaultMaxTerms;
}  // namespace

size_t Dim::max_terms() { return max_terms_setting; }

Dim::MaxTerms::MaxTerms(size_t terms) : previous_(max_terms_setting) {
  max_terms_setting = std::clamp<size_t>(terms, 1, kMaxTermsCeiling);
}
Dim::MaxTerms::~MaxTerms() { max_terms_setting = previous_; }

Dim Dim::from_terms(TermMap terms, int64_t constant, size_t term_limit) {
  std::erase_if(terms, [](const auto& term) { return term.second == 0; });
  if (terms.empty()) return Dim::constant(constant);
  if (terms.size() > term_limit) return unknown();
  for (const auto& [monomial, coefficient] : terms) {
    if (monomial.size() > kMaxDegree) return unknown();
    bool alone = terms.size() == 1 && monomial.size() == 1 && coefficient == 1 && constant == 0;
    if (!alone && !std::all_of(monomial.begin(), monomial.end(), [](const auto& s) { return is_identifier(s); }))
      return unknown();
  }
  Dim d;
  d.constant_ = constant;
  d.terms_ = interner().intern(std::move(terms), [](TermMap map, size_t h) {
    auto t = std::make_unique<Terms>();
    t->text = terms_text(map);
    for (const auto& term : map)
      for (const auto& name : term.first) t->identifiers_only = t->identifiers_only && is_identifier(name);
    t->map = std::move(map);
    t->hash = h;
    return t;
  });
  return d;
}

Dim Dim::with_constant(const Dim& d, int64_t constant) {
  if (d.is_constant()) return Dim::constant(constant);
  if (constant != 0 && !d.terms_->identifiers_only) return unknown();
  Dim r = d;
  r.constant_ = constant;
  return r;
}

std::optional<int64_t> Dim::min_value(int64_t symbol_min) const {
  if (is_unknown() || symbol_min < 0) return std::nullopt;
  int64_t total = constant_;
  for (const auto& [monomial, coefficient] : term_map()) {
    if (coefficient < 0) return std::nullopt;
    int64_t term = coefficient;
    for (size_t k = 0; k < monomial.size(); ++k)
      if (__builtin_mul_overflow(term, symbol_min, &term)) return std::nullopt;
    if (__builtin_add_overflow(total, term, &total)) return std::nullopt;
  }
  return total;
}

std::optional<int64_t> Dim::as_constant() const {
  if (!is_constant()) return std::nullopt;
  return constant_;
}

bool Dim::is_symbol() const {
  if (is_unknown() || is_constant() || constant_ != 0) return false;
  const TermMap& terms = terms_->map;
  return terms.size() == 1 && terms.begin()->first.size() == 1 && terms.begin()->second == 1;
}

std::optional<std::string> Dim::as_symbol() const {
  if (!is_symbol()) return std::nullopt;
  return terms_->map.begin()->first.front();
}

std::vector<std::string> Dim::symbols() const {
  std::vector<std::string> out;
  for (const auto& [monomial, coefficient] : term_map())
    for (const auto& name : monomial)
      if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
  return out;
}

std::string Dim::str() const {
  if (is_unknown()) return "?";
  if (is_constant()) return std::to_string(constant_);
  std::string out = terms_->text;
  if (constant_ != 0) {
    out += constant_ < 0 ? '-' : '+';
    out += std::to_string(magnitude(constant_));
  }
  return out;
}

Dim operator+(const Dim& a, const Dim& b) {
  if (a.is_unknown() || b.is_unknown()) return Dim();
  int64_t constant;
  if (__builtin_add_overflow(a.constant_, b.constant_, &constant)) return Dim();
  // Terms plus a constant: the same interned terms (an opaque symbol stands alone only).
  if (a.is_constant() || b.is_constant()) return Dim::with_constant(a.is_constant() ? b : a, constant);
  auto terms = a.term_map();
  for (const auto& [monomial, coefficient] : b.term_map()) {
    int64_t& slot = terms[monomial];
    if (__builtin_add_overflow(slot, coefficient, &slot)) return Dim();
  }
  return Dim::from_terms(std::move(terms), constant);
}

Dim operator-(const Dim& a, const Dim& b) {
  if (a.is_unknown() || b.is_unknown()) return Dim();
  int64_t constant;
  if (__builtin_sub_overflow(a.constant_, b.constant_, &constant)) return Dim();
  if (b.is_constant()) return Dim::with_constant(a, constant);
  if (a.terms_ == b.terms_) return Dim::constant(constant);
  auto terms = a.term_map();
  for (const auto& [monomial, coefficient] : b.term_map()) {
    int64_t& slot = terms[monomial];
    if (__builtin_sub_overflow(slot, coefficient, &slot)) return Dim();
  }
  return Dim::from_terms(std::move(terms), constant);
}

Dim Dim::operator-() const { return constant(0) - *this; }

Dim operator*(const Dim& a, const Dim& b) {
  if (a.is_unknown() || b.is_unknown()) return Dim();
  if (a.is_constant() && b.is_constant()) {
    int64_t product;
    if (__builtin_mul_overflow(a.constant_, b.constant_, &product)) return Dim();
    return Dim::constant(product);
  }
  // Every term of a times every term of b, the constant being the empty monomial.
  auto with_constant = [](const Dim& d) {
    std::vector<std::pair<Dim::Monomial, int64_t>> out(d.term_map().begin(), d.term_map().end());
    if (d.constant_ != 0) out.emplace_back(Dim::Monomial{}, d.constant_);
    return out;
  };
  std::map<Dim::Monomial, Wide> sums;
  for (const auto& [ma, ca] : with_constant(a)) {
    for (const auto& [mb, cb] : with_constant(b)) {
      int64_t product;
      if (__builtin_mul_overflow(ca, cb, &product)) return Dim();
      Dim::Monomial m;
      std::merge(ma.begin(), ma.end(), mb.begin(), mb.end(), std::back_inserter(m));
      sums[std::move(m)] += product;  // at most (kMaxTermsCeiling+1)^2 int64 addends: cannot overflow
    }
  }
  Dim::TermMap terms;
  int64_t constant = 0;
  for (auto& [monomial, sum] : sums) {
    if (sum < std::numeric_limits<int64_t>::min() || sum > std::numeric_limits<int64_t>::max()) return Dim();
    (monomial.empty() ? constant : terms[monomial]) = static_cast<int64_t>(sum);
  }
  return Dim::from_terms(std::move(terms), constant);
}

Dim Dim::divide(const Dim& a, const Dim& b, bool floor) {
  if (a.is_unknown() || !b.is_constant() || b.constant_ == 0) return unknown();
  const int64_t c = b.constant_;
  // Dividing by -1 is negation, which reports INT64_MIN / -1 as overflow; it also keeps
  // INT64_MIN % -1 (undefined behaviour) out of the code below.
  if (c == -1) return -a;
  if (a.is_constant()) {
    int64_t q = a.constant_ / c;  // truncates
    if (floor && a.constant_ % c != 0 && (a.constant_ < 0) != (c < 0)) --q;
    return constant(q);
  }
  // Exact division only, where floor and truncation agree.
  if (a.constant_ % c != 0) return unknown();
  auto terms = a.term_map();
  for (auto& [monomial, coefficient] : terms) {
    if (coefficient % c != 0) return unknown();
    coefficient /= c;
  }
  return from_terms(std::move(terms), a.constant_ / c);
}

Dim Dim::floor_div(const Dim& a, const Dim& b) { return divide(a, b, true); }
Dim Dim::trunc_div(const Dim& a, const Dim& b) { return divide(a, b, false); }

Dim Dim::mod(const Dim& a, const Dim& b) {
  if (a.is_unknown() || !b.is_constant() || b.constant_ == 0) return unknown();
  const int64_t c = b.constant_;
  if (c == -1) return constant(0);  // INT64_MIN % -1 is undefined behaviour
  if (a.is_constant()) {
    int64_t r = a.constant_ % c;  // sign of the dividend; move it to the divisor's
    if (r != 0 && (r < 0) != (c < 0)) r += c;
    return constant(r);
  }
  const auto& terms = a.term_map();
  bool divisible = a.constant_ % c == 0 &&
                   std::all_of(terms.begin(), terms.end(), [c](const auto& term) { return term.second % c == 0; });
  return divisible ? constant(0) : unknown();
}

// Both are decided exactly when the terms agree, i.e. when a-b is a constant. Interned
// terms are equal exactly when their pointers are.
Dim Dim::min(const Dim& a, const Dim& b) {
  if (a.is_unknown() || b.is_unknown() || a.terms_ != b.terms_) return unknown();
  return a.constant_ <= b.constant_ ? a : b;
}

Dim Dim::max(const Dim& a, const Dim& b) {
  if (a.is_unknown() || b.is_unknown() || a.terms_ != b.terms_) return unknown();
  return a.constant_ >= b.constant_ ? a : b;
}

std::optional<bool> Dim::equals(const Dim& other) const {
  // Comparing terms rather than computing a-b cannot overflow.
  if (is_unknown() || other.is_unknown() || terms_ != other.terms_) return std::nullopt;
  return constant_ == other.constant_;
}

bool Dim::operator<(const Dim& other) const {
  if (is_unknown() != other.is_unknown()) return is_unknown();
  // An empty map sorts first, so constants precede polynomials.
  if (terms_ != other.terms_) return term_map() < other.term_map();
  return constant_ < other.constant_;
}

size_t Dim::hash() const {
  size_t h = is_unknown() ? 1 : 0;
  hash_combine(h, std::hash<int64_t>{}(constant_));
  if (!is_unknown() && !is_constant()) hash_combine(h, terms_->hash);
  return h;
}

std::ostream& operator<<(std::ostream& os, const Dim& d) { return os << d.str(); }

}  // namespace shapeprop
