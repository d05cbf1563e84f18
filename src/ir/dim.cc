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

// The factors of a monomial are kept by key: an identifier as itself; a floor term as
// kFloorMark and its text; a min or max term as kExtremeMark and its text; an opaque
// symbol as its text, or, where that text begins with one of the marks, kEscapeMark and
// the text (so that no text can pass for a function term).
constexpr char kFloorMark = '\x01';
constexpr char kEscapeMark = '\x02';
constexpr char kExtremeMark = '\x03';

bool is_floor_key(std::string_view key) { return !key.empty() && key[0] == kFloorMark; }
bool is_extreme_key(std::string_view key) { return !key.empty() && key[0] == kExtremeMark; }
bool is_marked(std::string_view key) {
  return !key.empty() && (key[0] == kFloorMark || key[0] == kEscapeMark || key[0] == kExtremeMark);
}

std::string opaque_key(std::string_view text) {
  if (is_marked(text)) return kEscapeMark + std::string(text);
  return std::string(text);
}

// What a key prints as: a symbol's text, or a function term's.
std::string_view display(std::string_view key) {
  if (is_marked(key)) key.remove_prefix(1);
  return key;
}

// A factor that may stand inside a larger expression: its text parses back there.
// Whether `text` is one min(...) or max(...) whose parentheses close at its end.
bool is_one_extreme(std::string_view text) {
  if (text.substr(0, 4) != "min(" && text.substr(0, 4) != "max(") return false;
  int depth = 0;
  for (size_t i = 3; i < text.size(); ++i) {
    if (text[i] == '(') ++depth;
    if (text[i] == ')' && --depth == 0) return i + 1 == text.size();
  }
  return false;
}

bool composable(std::string_view key) { return is_identifier(key) || is_floor_key(key) || is_extreme_key(key); }

// Scanner for the grammar str() prints, building the Dim with Dim's own arithmetic.
// Returns nullopt when the text is not entirely in it or a number overflows; the caller
// then keeps the text as an opaque symbol (and checks that the text is canonical).
//   sum    := ['-'] term (('+' | '-') term)*
//   term   := number ['*' factor ('*' factor)*] | factor ('*' factor)*
//   factor := identifier | 'floor(' (identifier | extreme | '(' sum ')') '/' number ')' | extreme
//   extreme := ('min(' | 'max(') sum ',' sum ')'
class DimParser {
 public:
  explicit DimParser(std::string_view text) : text_(text) {}

  std::optional<Dim> parse() {
    auto d = sum();
    if (!d || pos_ != text_.size()) return std::nullopt;
    return d;
  }

 private:
  std::optional<Dim> sum() {
    bool negative = eat('-');
    Dim total = Dim::constant(0);
    while (true) {
      uint64_t coefficient = 1;
      Dim product = Dim::constant(1);
      bool factors = true;
      if (at_digit()) {
        if (!number(coefficient)) return std::nullopt;
        factors = eat('*');
      }
      if (factors) {
        do {
          auto f = factor();
          if (!f) return std::nullopt;
          product = product * *f;
        } while (eat('*'));
      }
      int64_t value;
      if (!negate_if(negative, coefficient, value)) return std::nullopt;
      total = total + Dim::constant(value) * product;
      if (eat('+')) {
        negative = false;
      } else if (eat('-')) {
        negative = true;
      } else {
        return total;
      }
    }
  }

  std::optional<Dim> factor() {
    for (const bool is_max : {false, true}) {
      const std::string_view open = is_max ? "max(" : "min(";
      if (text_.substr(pos_, open.size()) != open) continue;
      pos_ += open.size();
      const auto a = sum();
      if (!a || !eat(',')) return std::nullopt;
      const auto b = sum();
      if (!b || !eat(')')) return std::nullopt;
      return is_max ? Dim::max(*a, *b) : Dim::min(*a, *b);
    }
    constexpr std::string_view floor_open = "floor(";
    if (text_.substr(pos_, floor_open.size()) == floor_open) {
      pos_ += floor_open.size();
      std::optional<Dim> inner;
      if (eat('(')) {
        inner = sum();
        if (!inner || !eat(')')) return std::nullopt;
      } else if (text_.substr(pos_, 4) == "min(" || text_.substr(pos_, 4) == "max(") {
        inner = factor();  // floor(min(a,b)/c): a min or max needs no parentheses of its own
      } else {
        inner = identifier();
      }
      uint64_t divisor;
      if (!inner || !eat('/') || !at_digit() || !number(divisor) || !eat(')')) return std::nullopt;
      if (divisor > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
      return Dim::floor_div(*inner, Dim::constant(static_cast<int64_t>(divisor)));
    }
    return identifier();
  }

  std::optional<Dim> identifier() {
    if (pos_ == text_.size() || !is_alpha(text_[pos_])) return std::nullopt;
    size_t end = pos_ + 1;
    while (end < text_.size() && (is_alpha(text_[end]) || is_digit(text_[end]))) ++end;
    Dim d = Dim::symbol(std::string(text_.substr(pos_, end - pos_)));
    pos_ = end;
    return d;
  }

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
  // Every factor is an identifier or a floor term, so the terms may take part in larger
  // expressions (an opaque symbol may only stand alone).
  bool composable = true;
};

const Dim::Terms Dim::kUnknownTerms{};

namespace {

// A floor term floor(inner/divisor), by its key; `depth` counts the floors nested in it
// (1 for one over a polynomial without floors).
struct FloorTerm {
  Dim inner;
  int64_t divisor = 0;
  int depth = 1;
};

// A min or max term, by its key: the two arguments in canonical order, the first without
// a constant (dim.h); `depth` as for floors.
struct ExtremeTerm {
  bool is_max = false;
  Dim first, second;
  int depth = 1;
};

// Function terms nested deeper than this are unknown: each strided layer of a network
// adds a floor only where the simplifications below cannot merge it into the one before.
constexpr int kMaxFloorDepth = 3;

size_t hash_terms(const Dim::TermMap& terms) {
  size_t h = 0;
  for (const auto& [monomial, coefficient] : terms) {
    hash_combine(h, monomial.size());
    for (const auto& name : monomial) hash_combine(h, std::hash<std::string>{}(name));
    hash_combine(h, std::hash<int64_t>{}(coefficient));
  }
  return h;
}

std::string terms_text(const Dim::TermMap& terms) {
  std::vector<std::pair<const Dim::Monomial*, int64_t>> order;
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
      out += display((*monomial)[i]);
    }
  }
  return out;
}

// The process-wide table of interned terms and floor terms, and a cache of parsed
// dim_params (the same few names are read from every TypeProto of a model).
class Interner {
 public:
  template <class Make>
  const Dim::Terms* intern(Dim::TermMap terms, Make make) {
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

  // The key of floor(inner/divisor), recorded once.
  std::string floor_key(const Dim& inner, int64_t divisor, int depth) {
    std::string text = inner.str();
    if (!inner.is_symbol() && !is_one_extreme(text)) text = "(" + text + ")";
    std::string key = std::string(1, kFloorMark) + "floor(" + text + "/" + std::to_string(divisor) + ")";
    std::lock_guard<std::mutex> lock(mutex_);
    floors_.try_emplace(key, FloorTerm{inner, divisor, depth});
    return key;
  }
  const FloorTerm& floor_term(const std::string& key) {
    std::lock_guard<std::mutex> lock(mutex_);
    return floors_.at(key);  // every floor key was made by floor_key
  }

  // The key of min(first, second) or max(first, second), recorded once.
  std::string extreme_key(bool is_max, const Dim& first, const Dim& second, int depth) {
    std::string key = std::string(1, kExtremeMark) + (is_max ? "max(" : "min(") + first.str() + "," + second.str() + ")";
    std::lock_guard<std::mutex> lock(mutex_);
    extremes_.try_emplace(key, ExtremeTerm{is_max, first, second, depth});
    return key;
  }
  const ExtremeTerm& extreme_term(const std::string& key) {
    std::lock_guard<std::mutex> lock(mutex_);
    return extremes_.at(key);  // every such key was made by extreme_key
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
  size_t size() {
    std::lock_guard<std::mutex> lock(mutex_);
    return table_.size() + floors_.size() + extremes_.size() + parsed_.size() + named_.size();
  }

 private:
  static constexpr size_t kMaxParsed = 1 << 16;
  struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::mutex mutex_;
  std::unordered_multimap<size_t, std::unique_ptr<Dim::Terms>> table_;
  // Node-based: references to entries stay valid as the table grows.
  std::unordered_map<std::string, FloorTerm> floors_;
  std::unordered_map<std::string, ExtremeTerm> extremes_;
  std::unordered_map<std::string, Dim, StringHash, std::equal_to<>> parsed_;
  std::unordered_map<std::string, Dim, StringHash, std::equal_to<>> named_;
};

Interner& interner() {
  static Interner* table = new Interner();  // never destroyed: Dims may outlive static destruction
  return *table;
}

// floor(a/b) of integers, b > 0.
int64_t floor_quotient(int64_t a, int64_t b) {
  int64_t q = a / b;
  if (a % b != 0 && a < 0) --q;
  return q;
}

int64_t gcd(int64_t a, int64_t b) {
  while (b != 0) a = std::exchange(b, a % b);
  return a < 0 ? -a : a;
}

// How deep function terms nest in one factor (0 for a symbol).
int nesting(const std::string& key) {
  if (is_floor_key(key)) return interner().floor_term(key).depth;
  if (is_extreme_key(key)) return interner().extreme_term(key).depth;
  return 0;
}

// The deepest nesting of function terms in a monomial map (0 without them).
int floor_depth(const Dim::TermMap& terms) {
  int depth = 0;
  for (const auto& [monomial, coefficient] : terms)
    for (const auto& key : monomial) depth = std::max(depth, nesting(key));
  return depth;
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

Dim Dim::opaque(std::string_view name) { return from_terms({{{opaque_key(name)}, 1}}, 0, kMaxTermsCeiling); }

Dim Dim::factor(const std::string& key) { return from_terms({{{key}, 1}}, 0, kMaxTermsCeiling); }

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
  bool done = false;
  {
    const MaxTerms widest(kMaxTermsCeiling);  // what any setting may have written
    // Text reads the same whatever bounds are in force (a min the bounds would decide was
    // never written).
    const DimBounds plain;
    const DimBounds::Scope no_more(plain);
    // Only the text str() writes is read as an expression: a model's own dim_params
    // ("seq-len", "1+N", "3") stay the symbols they are, spelled as they were.
    if (auto d = DimParser(dim_param).parse(); d && !d->is_unknown() && !d->is_constant() && d->str() == dim_param) {
      result = *d;
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
    if (!alone && !std::all_of(monomial.begin(), monomial.end(), [](const auto& s) { return composable(s); }))
      return unknown();
  }
  Dim d;
  d.constant_ = constant;
  d.terms_ = interner().intern(std::move(terms), [](TermMap map, size_t h) {
    auto t = std::make_unique<Terms>();
    t->text = terms_text(map);
    for (const auto& term : map)
      for (const auto& key : term.first) t->composable = t->composable && composable(key);
    t->map = std::move(map);
    t->hash = h;
    return t;
  });
  return d;
}

Dim Dim::with_constant(const Dim& d, int64_t constant) {
  if (d.is_constant()) return Dim::constant(constant);
  if (constant != 0 && !d.terms_->composable) return unknown();
  Dim r = d;
  r.constant_ = constant;
  return r;
}

bool Dim::is_fresh_symbol(std::string_view symbol) {
  constexpr std::string_view prefix = "dyn__";
  if (symbol.size() <= prefix.size() || symbol.substr(0, prefix.size()) != prefix) return false;
  return std::all_of(symbol.begin() + prefix.size(), symbol.end(), [](char c) { return is_digit(c); });
}

size_t Dim::interned_entries() { return interner().size(); }

// ---------------------------------------------------------------- bounds

namespace {
thread_local DimBounds::Scope* innermost_scope = nullptr;
}  // namespace

DimBounds& DimBounds::set_range(const std::string& symbol, Range range) {
  if (range.min < 0) range.min = 0;
  if (!range.max) range.max = std::numeric_limits<int64_t>::max();
  ranges_[symbol] = range;
  return *this;
}

DimBounds::Range DimBounds::range(std::string_view symbol) const {
  if (!ranges_.empty())
    if (auto it = ranges_.find(symbol); it != ranges_.end()) return it->second;
  return {Dim::is_fresh_symbol(symbol) ? 0 : symbol_min_, std::numeric_limits<int64_t>::max()};
}

const DimBounds& DimBounds::current() {
  static const DimBounds none;
  return innermost_scope ? *innermost_scope->bounds_ : none;
}

DimBounds::Scope::Scope(const DimBounds& bounds) : bounds_(&bounds), previous_(innermost_scope) { innermost_scope = this; }
DimBounds::Scope::~Scope() { innermost_scope = previous_; }

void DimBounds::note_relied() {
  if (innermost_scope) innermost_scope->relied_ = true;
}

namespace {

// An interval of integers in 128 bits; an end is none where it is unbounded. Ends beyond
// kFar count as unbounded, so that no product of four ends overflows.
struct Interval {
  std::optional<Wide> lo, hi;
};
constexpr Wide kFar = Wide{1} << 100;

std::optional<Wide> near(std::optional<Wide> v) {
  if (v && (*v > kFar || *v < -kFar)) return std::nullopt;
  return v;
}

Interval add(const Interval& a, const Interval& b) {
  return {a.lo && b.lo ? near(*a.lo + *b.lo) : std::nullopt, a.hi && b.hi ? near(*a.hi + *b.hi) : std::nullopt};
}

// An end of an interval with its infinity: value, or -1/+1 for -inf/+inf.
struct End {
  Wide v = 0;
  int inf = 0;
};

End times(const End& a, const End& b) {
  auto sign = [](const End& e) { return e.inf != 0 ? e.inf : (e.v > 0) - (e.v < 0); };
  if (a.inf == 0 && b.inf == 0) {
    Wide p;
    if (!__builtin_mul_overflow(a.v, b.v, &p) && p <= kFar && p >= -kFar) return {p, 0};
    return {0, sign(a) * sign(b)};
  }
  return {0, sign(a) * sign(b)};  // infinity times 0 is 0 here: the limit of x*0
}

Interval multiply(const Interval& a, const Interval& b) {
  const End ends_a[2] = {a.lo ? End{*a.lo, 0} : End{0, -1}, a.hi ? End{*a.hi, 0} : End{0, 1}};
  const End ends_b[2] = {b.lo ? End{*b.lo, 0} : End{0, -1}, b.hi ? End{*b.hi, 0} : End{0, 1}};
  End lo{0, 1}, hi{0, -1};
  auto less = [](const End& x, const End& y) { return x.inf != y.inf ? x.inf < y.inf : (x.inf == 0 && x.v < y.v); };
  for (const End& x : ends_a)
    for (const End& y : ends_b) {
      const End p = times(x, y);
      if (less(p, lo)) lo = p;
      if (less(hi, p)) hi = p;
    }
  return {lo.inf == 0 ? std::optional<Wide>(lo.v) : std::nullopt, hi.inf == 0 ? std::optional<Wide>(hi.v) : std::nullopt};
}

Wide floor_wide(Wide a, Wide b) {
  Wide q = a / b;
  if (a % b != 0 && ((a < 0) != (b < 0))) --q;
  return q;
}

std::optional<int64_t> narrow(std::optional<Wide> v) {
  if (!v || *v > std::numeric_limits<int64_t>::max() || *v < std::numeric_limits<int64_t>::min()) return std::nullopt;
  return static_cast<int64_t>(*v);
}

}  // namespace

// The bounds of Dims' values (dim.h: lower_bound), with Dim's representation at hand.
struct DimBounding {
  // How many min or max terms one bound may take in turn (each doubles the work).
  static constexpr int kSplits = 4;

  static Interval interval(const Dim& d, const DimBounds& bounds, int splits = kSplits) {
    if (d.is_unknown()) return {};
    if (d.is_constant()) return {Wide{d.constant_}, Wide{d.constant_}};
    if (splits > 0)
      if (auto split = split_extreme(d, bounds, splits)) return *split;
    return {relaxed_end(d, bounds, /*lower=*/true), relaxed_end(d, bounds, /*lower=*/false)};
  }

  // A min or max term M of d's monomials is one of its two arguments at every point, so d
  // lies within the hull of d with M replaced by each; where d is k*M plus terms without
  // M, one side is tighter: k*min(x,y) is at most k*x and k*y for k > 0.
  static std::optional<Interval> split_extreme(const Dim& d, const DimBounds& bounds, int splits) {
    const std::string* key = nullptr;
    size_t uses = 0;
    int64_t k = 0;
    for (const auto& [monomial, coefficient] : d.term_map())
      for (const auto& f : monomial) {
        if (!is_extreme_key(f) || (key && f != *key)) continue;
        key = &f;
        ++uses;
        k = monomial.size() == 1 ? coefficient : 0;
      }
    if (!key) return std::nullopt;
    const ExtremeTerm& t = interner().extreme_term(*key);
    const Dim with_first = replace(d, *key, t.first), with_second = replace(d, *key, t.second);
    if (with_first.is_unknown() || with_second.is_unknown()) return std::nullopt;
    const Interval x = interval(with_first, bounds, splits - 1), y = interval(with_second, bounds, splits - 1);
    auto least = [](std::optional<Wide> p, std::optional<Wide> q, bool either) -> std::optional<Wide> {
      if (p && q) return std::min(*p, *q);
      return either ? (p ? p : q) : std::nullopt;
    };
    auto most = [](std::optional<Wide> p, std::optional<Wide> q, bool either) -> std::optional<Wide> {
      if (p && q) return std::max(*p, *q);
      return either ? (p ? p : q) : std::nullopt;
    };
    // d = k*M + rest: for a min, d <= both when k > 0 and d >= both when k < 0.
    const bool alone = uses == 1 && k != 0;
    const bool below_both = alone && ((!t.is_max && k > 0) || (t.is_max && k < 0));
    const bool above_both = alone && ((!t.is_max && k < 0) || (t.is_max && k > 0));
    return Interval{above_both ? most(x.lo, y.lo, true) : least(x.lo, y.lo, false),
                    below_both ? least(x.hi, y.hi, true) : most(x.hi, y.hi, false)};
  }

  // d with the factor `key` replaced by `with` wherever it stands.
  static Dim replace(const Dim& d, const std::string& key, const Dim& with) {
    const Dim::MaxTerms widest(Dim::kMaxTermsCeiling);
    Dim out = Dim::constant(d.constant_);
    for (const auto& [monomial, coefficient] : d.term_map()) {
      Dim term = Dim::constant(coefficient);
      for (const auto& f : monomial) term = term * (f == key ? with : Dim::factor(f));
      out = out + term;
    }
    return out;
  }

  // One end of d's interval. With L the least common multiple of the divisors of the
  // floor terms that make up a monomial alone, L*d is bounded by the polynomial where
  // each k*floor(p/c) is replaced by k*(L/c)*p, less k*(L/c)*(c-1) where that makes the
  // bound hold (k > 0 for the lower end, k < 0 for the upper): floor(p/c) lies in
  // [(p-c+1)/c, p/c]. That keeps the floor's correlation with the rest (N - 2*floor(N/2)
  // is at least N - N); other factors are bounded one by one (monomial_intervals).
  static std::optional<Wide> relaxed_end(const Dim& d, const DimBounds& bounds, bool lower) {
    int64_t lcm = 1;
    bool any = false;
    for (const auto& [monomial, coefficient] : d.term_map()) {
      if (monomial.size() != 1 || !is_floor_key(monomial.front())) continue;
      const int64_t c = interner().floor_term(monomial.front()).divisor;
      const int64_t g = gcd(lcm, c);
      if (__builtin_mul_overflow(lcm / g, c, &lcm) || lcm > (int64_t{1} << 20)) {
        any = false;
        break;
      }
      any = true;
    }
    Dim relaxed;
    if (any) {
      const Dim::MaxTerms widest(Dim::kMaxTermsCeiling);
      Dim::TermMap rest;
      relaxed = Dim::constant(0);
      for (const auto& [monomial, coefficient] : d.term_map()) {
        if (monomial.size() != 1 || !is_floor_key(monomial.front())) {
          rest.emplace(monomial, coefficient);
          continue;
        }
        const FloorTerm& f = interner().floor_term(monomial.front());
        const Dim k = Dim::constant(coefficient) * Dim::constant(lcm / f.divisor);
        relaxed = relaxed + k * f.inner;
        if ((coefficient > 0) == lower) relaxed = relaxed - k * Dim::constant(f.divisor - 1);
      }
      relaxed = relaxed + Dim::constant(lcm) * Dim::from_terms(std::move(rest), d.constant_, Dim::kMaxTermsCeiling);
    }
    if (!any || relaxed.is_unknown()) {
      const Interval whole = monomial_intervals(d, bounds);
      return lower ? whole.lo : whole.hi;
    }
    const Interval scaled = interval(relaxed, bounds);
    if (lower) return scaled.lo ? std::optional<Wide>(-floor_wide(-*scaled.lo, lcm)) : std::nullopt;
    return scaled.hi ? std::optional<Wide>(floor_wide(*scaled.hi, lcm)) : std::nullopt;
  }

  // The interval of each monomial, its factors bounded one by one, summed.
  static Interval monomial_intervals(const Dim& d, const DimBounds& bounds) {
    Interval total{Wide{d.constant_}, Wide{d.constant_}};
    for (const auto& [monomial, coefficient] : d.term_map()) {
      Interval product{Wide{coefficient}, Wide{coefficient}};
      for (const auto& key : monomial) product = multiply(product, factor_interval(key, bounds));
      total = add(total, product);
      if (!total.lo && !total.hi) break;
    }
    return total;
  }

  // The values one factor takes: a symbol's range, floor(p/c) for p in its interval, the
  // least or the greatest of two intervals' values.
  static Interval factor_interval(const std::string& key, const DimBounds& bounds) {
    if (is_floor_key(key)) {
      const FloorTerm& f = interner().floor_term(key);
      const Interval inner = interval(f.inner, bounds);
      return {inner.lo ? std::optional<Wide>(floor_wide(*inner.lo, f.divisor)) : std::nullopt,
              inner.hi ? std::optional<Wide>(floor_wide(*inner.hi, f.divisor)) : std::nullopt};
    }
    if (is_extreme_key(key)) {
      const ExtremeTerm& t = interner().extreme_term(key);
      const Interval x = interval(t.first, bounds), y = interval(t.second, bounds);
      auto pick = [](std::optional<Wide> p, std::optional<Wide> q, bool low, bool unbounded_wins) -> std::optional<Wide> {
        if (p && q) return low ? std::min(*p, *q) : std::max(*p, *q);
        return unbounded_wins ? std::nullopt : (p ? p : q);
      };
      // min: lo the lesser (unbounded if either is), hi the lesser (either bounds it).
      if (!t.is_max) return {pick(x.lo, y.lo, true, true), pick(x.hi, y.hi, true, false)};
      return {pick(x.lo, y.lo, false, false), pick(x.hi, y.hi, false, true)};
    }
    const DimBounds::Range r = bounds.range(display(key));
    return {Wide{r.min}, r.max ? std::optional<Wide>(Wide{*r.max}) : std::nullopt};
  }
};

std::optional<int64_t> Dim::lower_bound(const DimBounds& bounds) const { return narrow(DimBounding::interval(*this, bounds).lo); }
std::optional<int64_t> Dim::upper_bound(const DimBounds& bounds) const { return narrow(DimBounding::interval(*this, bounds).hi); }

std::optional<int64_t> Dim::min_value(int64_t symbol_min) const {
  if (symbol_min < 0) return std::nullopt;
  return lower_bound(DimBounds(symbol_min));
}

std::optional<int64_t> Dim::as_constant() const {
  if (!is_constant()) return std::nullopt;
  return constant_;
}

bool Dim::is_symbol() const {
  if (is_unknown() || is_constant() || constant_ != 0) return false;
  const TermMap& terms = terms_->map;
  return terms.size() == 1 && terms.begin()->first.size() == 1 && terms.begin()->second == 1 &&
         !is_floor_key(terms.begin()->first.front()) && !is_extreme_key(terms.begin()->first.front());
}

std::optional<std::string> Dim::as_symbol() const {
  if (!is_symbol()) return std::nullopt;
  return std::string(display(terms_->map.begin()->first.front()));
}

std::vector<std::string> Dim::symbols() const {
  std::vector<std::string> out;
  any_symbol([&out](std::string_view name) {
    if (std::find(out.begin(), out.end(), name) == out.end()) out.emplace_back(name);
    return false;  // every symbol
  });
  return out;
}

bool Dim::any_symbol(const std::function<bool(std::string_view symbol)>& pred) const {
  for (const auto& [monomial, coefficient] : term_map())
    for (const auto& key : monomial) {
      if (is_floor_key(key)) {
        if (interner().floor_term(key).inner.any_symbol(pred)) return true;
      } else if (is_extreme_key(key)) {
        const ExtremeTerm& t = interner().extreme_term(key);
        if (t.first.any_symbol(pred) || t.second.any_symbol(pred)) return true;
      } else if (pred(display(key))) {
        return true;
      }
    }
  return false;
}

Dim Dim::substitute(const SymbolMap& to) const {
  if (is_unknown() || is_constant()) return *this;
  // Most substitutions replace none of a Dim's symbols (a call's renaming touches only
  // fresh ones), and computing the Dim anew interns every partial sum and product: the
  // symbols are asked first, and a Dim none of whose symbols is replaced is itself.
  if (!any_symbol([&to](std::string_view symbol) { return to(std::string(symbol)).has_value(); })) return *this;
  Dim out = constant(constant_);
  for (const auto& [monomial, coefficient] : term_map()) {
    Dim term = constant(coefficient);
    for (const auto& key : monomial) {
      if (is_floor_key(key)) {
        const FloorTerm& f = interner().floor_term(key);
        term = term * floor_div(f.inner.substitute(to), constant(f.divisor));
        continue;
      }
      if (is_extreme_key(key)) {
        const ExtremeTerm& t = interner().extreme_term(key);
        term = term * extreme(t.is_max, t.first.substitute(to), t.second.substitute(to));
        continue;
      }
      const std::optional<Dim> replaced = to(std::string(display(key)));
      term = term * (replaced ? *replaced : factor(key));
    }
    out = out + term;
  }
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

Dim Dim::exact_div(const Dim& a, const Dim& b) {
  if (a.is_unknown() || b.is_unknown()) return unknown();
  if (!b.is_constant()) {
    // A monomial k*m divides each term of a whose monomial holds m's factors and whose
    // coefficient k divides: 4*B*S / (4*B) = S.
    const TermMap& divisor = b.term_map();
    if (b.constant_ != 0 || divisor.size() != 1 || a.constant_ != 0) return unknown();
    const auto& [m, k] = *divisor.begin();
    if (k < 0) return k == std::numeric_limits<int64_t>::min() ? unknown() : exact_div(-a, -b);
    TermMap terms;
    for (const auto& [monomial, coefficient] : a.term_map()) {
      Monomial rest;
      if (coefficient % k != 0 || !std::includes(monomial.begin(), monomial.end(), m.begin(), m.end())) return unknown();
      std::set_difference(monomial.begin(), monomial.end(), m.begin(), m.end(), std::back_inserter(rest));
      terms[std::move(rest)] += coefficient / k;  // distinct monomials stay distinct
    }
    const auto constant_term = terms.find(Monomial{});
    int64_t constant = 0;
    if (constant_term != terms.end()) {
      constant = constant_term->second;
      terms.erase(constant_term);
    }
    return from_terms(std::move(terms), constant);
  }
  if (b.constant_ == 0) return unknown();
  const int64_t c = b.constant_;
  // Dividing by -1 is negation, which reports INT64_MIN / -1 as overflow; it also keeps
  // INT64_MIN % -1 (undefined behaviour) out of the code below.
  if (c == -1) return -a;
  if (a.constant_ % c != 0) return unknown();
  if (a.is_constant()) return constant(a.constant_ / c);
  auto terms = a.term_map();
  for (auto& [monomial, coefficient] : terms) {
    if (coefficient % c != 0) return unknown();
    coefficient /= c;
  }
  return from_terms(std::move(terms), a.constant_ / c);
}

Dim Dim::floor_term(const Dim& a, int64_t c, size_t term_limit) {
  // a = c*q + r term by term, each coefficient of r in [0, c): floor(a/c) = q + floor(r/c),
  // the symbols and floor terms being integers.
  if (a.is_unknown()) return unknown();
  if (a.is_constant()) return constant(floor_quotient(a.constant_, c));
  // The remainder is computed in 128 bits: q*c may lie below INT64_MIN.
  auto split = [c](int64_t k) { return std::make_pair(floor_quotient(k, c), static_cast<int64_t>(k - Wide{floor_quotient(k, c)} * c)); };
  TermMap quotient, remainder;
  for (const auto& [monomial, coefficient] : a.term_map()) {
    const auto [q, r] = split(coefficient);
    if (q != 0) quotient.emplace(monomial, q);
    if (r != 0) remainder.emplace(monomial, r);
  }
  const auto [q0, low] = split(a.constant_);
  int64_t r0 = low;
  const Dim q = from_terms(std::move(quotient), q0, term_limit);
  if (remainder.empty()) return q;  // floor(r0/c) = 0 for 0 <= r0 < c
  // floor(r/c) = floor((r/g)/(c/g)) for g dividing r's coefficients and c.
  int64_t g = gcd(c, r0);
  for (const auto& [monomial, coefficient] : remainder) g = gcd(g, coefficient);
  int64_t divisor = c / g;
  for (auto& [monomial, coefficient] : remainder) coefficient /= g;
  r0 /= g;
  // floor((floor(x/d) + r0)/c) = floor((x + d*r0)/(d*c)): one floor instead of two.
  if (remainder.size() == 1 && remainder.begin()->second == 1 && remainder.begin()->first.size() == 1 &&
      is_floor_key(remainder.begin()->first.front())) {
    const FloorTerm& f = interner().floor_term(remainder.begin()->first.front());
    int64_t shift, wider;
    if (!__builtin_mul_overflow(f.divisor, r0, &shift) && !__builtin_mul_overflow(f.divisor, divisor, &wider))
      return q + floor_term(f.inner + constant(shift), wider, term_limit);
  }
  const int depth = floor_depth(remainder) + 1;
  const Dim r = from_terms(std::move(remainder), r0, term_limit);
  if (r.is_unknown() || r.is_constant() || !r.terms_->composable || depth > kMaxFloorDepth) return unknown();
  return q + factor(interner().floor_key(r, divisor, depth));
}

Dim Dim::floor_div(const Dim& a, const Dim& b) {
  if (a.is_unknown() || !b.is_constant() || b.constant_ == 0) return unknown();
  const int64_t c = b.constant_;
  if (c == -1) return -a;  // see exact_div
  if (a.is_constant()) {
    int64_t q = a.constant_ / c;  // truncates
    if (a.constant_ % c != 0 && (a.constant_ < 0) != (c < 0)) --q;
    return constant(q);
  }
  if (c == 1) return a;
  // floor(a/c) = floor(-a/-c); -INT64_MIN does not fit.
  if (c < 0) return c == std::numeric_limits<int64_t>::min() ? unknown() : floor_div(-a, constant(-c));
  return floor_term(a, c, max_terms());
}

Dim Dim::trunc_div(const Dim& a, const Dim& b) {
  if (a.is_constant() && b.is_constant() && b.constant_ != 0) {
    if (b.constant_ == -1) return -a;
    return constant(a.constant_ / b.constant_);
  }
  return exact_div(a, b);
}

Dim Dim::mod(const Dim& a, const Dim& b) {
  if (a.is_unknown() || !b.is_constant() || b.constant_ == 0) return unknown();
  const int64_t c = b.constant_;
  if (c == -1 || c == 1) return constant(0);  // INT64_MIN % -1 is undefined behaviour
  if (a.is_constant()) {
    int64_t r = a.constant_ % c;  // sign of the dividend; move it to the divisor's
    if (r != 0 && (r < 0) != (c < 0)) r += c;
    return constant(r);
  }
  return a - b * floor_div(a, b);
}

Dim Dim::ceil_div(const Dim& a, const Dim& b) {
  if (a.is_unknown() || !b.is_constant() || b.constant_ == 0) return unknown();
  // ceil(a/b) = ceil(-a/-b), and for c > 0 ceil(a/c) = floor((a+c-1)/c): the spelling
  // floor_div gives, so that ceil(N/2) and floor((N+1)/2) are one Dim.
  if (b.constant_ < 0)
    return b.constant_ == std::numeric_limits<int64_t>::min() ? unknown() : ceil_div(-a, constant(-b.constant_));
  if (a.is_constant()) return constant(a.constant_ / b.constant_ + (a.constant_ % b.constant_ > 0 ? 1 : 0));
  return floor_div(a + constant(b.constant_ - 1), b);
}

Dim Dim::min(const Dim& a, const Dim& b) { return extreme(false, a, b); }
Dim Dim::max(const Dim& a, const Dim& b) { return extreme(true, a, b); }

Dim Dim::extreme(bool is_max, const Dim& a, const Dim& b) {
  if (a.is_unknown() || b.is_unknown()) return unknown();
  auto pick = [is_max, &a, &b](bool a_at_least_b) { return a_at_least_b == is_max ? a : b; };
  // Terms alike (interned terms are equal exactly when their pointers are): the constants decide.
  if (a.terms_ == b.terms_) return pick(a.constant_ >= b.constant_);
  // Decided where the bounds in force tell the sign of p - q, p and q being a and b in
  // canonical order (operator<), so that min(a,b) and min(b,a) make the same
  // computation: the bounds of a difference and of its negation may differ where a
  // coefficient overflows (a fuzz finding of `dim`: max(a,b) was decided and max(b,a) not,
  // with a -2^63 coefficient in b). Noted where DimBounds() alone would not decide.
  // (q - p where p - q cannot be written: an opaque symbol stands alone only.)
  const bool a_lesser = a < b;
  const Dim& p = a_lesser ? a : b;
  const Dim& q = a_lesser ? b : a;
  bool swapped = false;
  const Dim difference = [&] {
    const MaxTerms widest(kMaxTermsCeiling);
    const Dim d = p - q;
    if (!d.is_unknown()) return d;
    swapped = true;
    return q - p;
  }();
  if (!difference.is_unknown()) {
    const DimBounds& bounds = DimBounds::current();
    // What the sign of p - q is within `in`: 1 (>= 0), -1 (<= 0), 0 (both: equal
    // everywhere, when the lesser by operator< is taken, whichever order they come in),
    // or none.
    auto sign = [&difference, swapped](const DimBounds& in) -> std::optional<int> {
      const Interval i = DimBounding::interval(difference, in);
      const bool at_least = i.lo && *i.lo >= 0, at_most = i.hi && *i.hi <= 0;
      if (at_least && at_most) return 0;
      if (at_least || at_most) return at_least != swapped ? 1 : -1;
      return std::nullopt;
    };
    auto decide = [&](const DimBounds& in) -> std::optional<bool> {  // whether a >= b
      const auto s = sign(in);
      if (!s) return std::nullopt;
      if (*s == 0) return a_lesser == is_max;
      return (*s > 0) == a_lesser;  // p >= q, and p is a
    };
    if (const auto a_at_least_b = decide(bounds)) {
      if (!bounds.is_default() && decide(DimBounds()) != a_at_least_b) DimBounds::note_relied();
      return pick(*a_at_least_b);
    }
  }
  if ((!a.is_constant() && !a.terms_->composable) || (!b.is_constant() && !b.terms_->composable)) return unknown();
  // A min of a min with a constant second argument, and a constant: one min
  // (min(min(S,128)+k, c) is min(S+k, min(128+k, c))).
  const Dim& term = a.is_constant() ? b : a;
  const Dim& other = a.is_constant() ? a : b;
  if (other.is_constant() && !term.is_constant()) {
    const TermMap& map = term.terms_->map;
    if (map.size() == 1 && map.begin()->second == 1 && map.begin()->first.size() == 1 &&
        is_extreme_key(map.begin()->first.front())) {
      const ExtremeTerm& inner = interner().extreme_term(map.begin()->first.front());
      if (inner.is_max == is_max && inner.second.is_constant()) {
        const Dim shift = constant(term.constant_);
        const Dim bound = extreme(is_max, inner.second + shift, other);
        if (!bound.is_unknown()) return extreme(is_max, inner.first + shift, bound);
      }
    }
  }
  // Canonical order: a constant last, otherwise by the terms' text; then the first one's
  // constant is taken out.
  const bool a_first = b.is_constant() || (!a.is_constant() && a.terms_->text < b.terms_->text);
  const Dim& first = a_first ? a : b;
  const Dim& second = a_first ? b : a;
  const int64_t shift = first.constant_;
  const Dim first_bare = with_constant(first, 0);
  const Dim second_bare = second - constant(shift);
  if (first_bare.is_unknown() || second_bare.is_unknown()) return unknown();
  const int depth = 1 + std::max(floor_depth(first_bare.term_map()), floor_depth(second_bare.term_map()));
  if (depth > kMaxFloorDepth) return unknown();
  return factor(interner().extreme_key(is_max, first_bare, second_bare, depth)) + constant(shift);
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
