// Dim: one dimension of a shape, or one element of a shape value.
//
// A Dim is a known integer, a named symbol (an ONNX dim_param such as "batch"), a bounded
// polynomial over symbols with integer coefficients ("2*N", "N+M", "N*M+1"), or unknown.
// Canonical form makes structurally equal Dims compare and hash equal, and str() gives a
// stable dim_param text that parse() reads back to the same Dim.
//
// Symbols are identifiers ([A-Za-z_][A-Za-z0-9_]*) or *opaque*: a dim_param outside the
// expression grammar ("batch size") is kept whole as one symbol. An opaque symbol can only
// stand alone, because inside a larger expression its text could not be parsed back;
// arithmetic that would build such an expression gives unknown instead.
//
// Representation: a Dim is 16 bytes, a constant plus a pointer to its non-constant terms,
// which are interned (one immutable object per distinct polynomial, with its text and hash
// computed once), so that copying, comparing and hashing Dims allocates nothing and costs a
// few instructions. Interned terms live as long as the process: they grow with the number
// of distinct symbolic expressions ever seen, not with model size. Interning is thread-safe.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace shapeprop {

class Dim {
 public:
  // Bounds beyond which arithmetic gives an unknown Dim instead of a larger expression.
  // Monomials, not counting the constant: max_terms(), this thread's bound, which MaxTerms
  // sets for the length of a run (Limits::max_dim_terms, --max-dim-terms; the library's
  // entry points set it from their options). parse() reads expressions of up to
  // kMaxTermsCeiling terms, the most any setting allows, so that what one run wrote reads
  // back the same under any setting.
  static constexpr size_t kDefaultMaxTerms = 8;
  static constexpr size_t kMaxTermsCeiling = 64;
  static constexpr size_t kMaxDegree = 4;  // symbols in one monomial (with repetition)
  static size_t max_terms();
  class MaxTerms {
   public:
    explicit MaxTerms(size_t terms);  // clamped to [1, kMaxTermsCeiling]
    ~MaxTerms();
    MaxTerms(const MaxTerms&) = delete;
    MaxTerms& operator=(const MaxTerms&) = delete;

   private:
    size_t previous_;
  };

  Dim() = default;  // unknown
  static Dim unknown() { return Dim(); }
  static Dim constant(int64_t value);
  // An identifier is a symbol. Any other name means what parse(name) gives: symbol("a-b")
  // is the expression a-b, symbol("batch size") an opaque symbol, symbol("") unknown.
  static Dim symbol(std::string name);

  // A model's own dim_param: always a name, never an expression. An identifier is a
  // symbol, any other text ("2*N", "batch size", "seq-len") one opaque symbol spelled as
  // it was: a model's "2*N" names some size, which need not be twice N. "" and "?" are
  // unknown.
  static Dim named(std::string_view dim_param);

  // The Dim that text in str()'s grammar stands for: parse("2*N") is 2*N, parse("batch")
  // the symbol batch. For shapeprop's own texts (the expressions it wrote, which a model
  // lists in its metadata; see infer.h), never for a model's names (named()). Text is
  // read as an expression only when it is exactly what str() writes for a
  // non-constant expression (terms joined by '+' or '-', only the first with a leading
  // '-', a term an integer or an optional "integer*" then identifiers joined by '*', in
  // canonical order, no spaces); anything else ("batch size", "seq-len", "1+N", "7") is
  // one opaque symbol spelled as it was, so that a model's own dim_params are kept.
  // "" and "?" are unknown. parse(d.str()) == d for every Dim d but constants (which
  // ONNX writes as dim_value, never as a dim_param), and parse(s).str() == s for every s.
  static Dim parse(std::string_view dim_param);

  bool is_unknown() const { return terms_ == unknown_terms(); }
  bool is_constant() const { return terms_ == nullptr; }
  std::optional<int64_t> as_constant() const;
  bool is_symbol() const;                  // exactly one symbol, coefficient 1, no constant
  std::optional<std::string> as_symbol() const;

  // Canonical text: "3", "N", "2*N", "M+N", "M*N", N+(-1) is written "N-1", -1*N as "-N",
  // N squared as "N*N". Monomials are sorted by degree, highest first, then
  // lexicographically by their (sorted) symbol names; the constant comes last. Unknown is
  // "?". An opaque symbol prints as its text ("batch size").
  std::string str() const;

  // Arithmetic. Unknown in, unknown out; overflow or a result beyond the bounds is unknown.
  friend Dim operator+(const Dim& a, const Dim& b);
  friend Dim operator-(const Dim& a, const Dim& b);
  friend Dim operator*(const Dim& a, const Dim& b);
  Dim operator-() const;
  // Division rounding toward negative infinity (ONNX's integer Div truncates toward zero
  // instead; callers choose). Exact results only: constants, or a polynomial whose every
  // coefficient is divisible by a constant divisor (2*N / 2 = N). Otherwise unknown.
  static Dim floor_div(const Dim& a, const Dim& b);
  static Dim trunc_div(const Dim& a, const Dim& b);
  // Remainder with the sign of the divisor (Python/ONNX Mod fmod=0); constants only,
  // or 0 when the polynomial's coefficients are all divisible by a constant divisor.
  static Dim mod(const Dim& a, const Dim& b);
  // Known when a-b is a constant (both constants, equal, or max(N, N+1) = N+1); else unknown.
  static Dim min(const Dim& a, const Dim& b);
  static Dim max(const Dim& a, const Dim& b);

  // The least value this Dim takes when every symbol is at least `symbol_min`, if that
  // is known: a constant, or a polynomial whose coefficients are all non-negative (so
  // that it grows with each symbol). Dims are sizes, so symbols are at least 0; callers
  // that assume non-empty dimensions pass 1.
  std::optional<int64_t> min_value(int64_t symbol_min) const;

  // The symbols this Dim mentions, each once, in order (none for a constant or unknown).
  std::vector<std::string> symbols() const;
  // This Dim with each symbol s for which to(s) gives a Dim replaced by that Dim, the rest
  // kept (computed with the arithmetic above: unknown where that would be).
  template <class To>
  Dim substitute(To&& to) const {
    if (is_unknown() || is_constant()) return *this;
    Dim out = constant(constant_);
    for (const auto& [monomial, coefficient] : term_map()) {
      Dim term = constant(coefficient);
      for (const auto& name : monomial) {
        const std::optional<Dim> replaced = to(name);
        term = term * (replaced ? *replaced : opaque(name));
      }
      out = out + term;
    }
    return out;
  }

  // What is known about equality: true when canonically equal (and not unknown), false
  // when the difference is a nonzero constant, nullopt otherwise.
  std::optional<bool> equals(const Dim& other) const;

  // Structural equality and order (unknown == unknown here): for hashing and canonical
  // contexts, not for deciding equality of values (use equals()).
  bool operator==(const Dim& other) const { return terms_ == other.terms_ && constant_ == other.constant_; }
  bool operator!=(const Dim& other) const { return !(*this == other); }
  bool operator<(const Dim& other) const;  // unknown first, then constants, then by terms
  size_t hash() const;

  // Representation (see the top of this file); dim.cc's interning table needs the names.
  using Monomial = std::vector<std::string>;  // sorted symbol names, with repetition
  using TermMap = std::map<Monomial, int64_t>;  // nonzero coefficients only; excludes the constant
  struct Terms;                                 // an interned TermMap, defined in dim.cc

 private:

  // nullptr for a constant, unknown_terms() for unknown, else interned non-empty terms.
  const Terms* terms_ = unknown_terms();
  int64_t constant_ = 0;

  static const Terms kUnknownTerms;  // a sentinel, never dereferenced for its terms
  static const Terms* unknown_terms() { return &kUnknownTerms; }
  const TermMap& term_map() const;  // empty for constants
  // The canonical Dim for these terms: drops zero coefficients; unknown beyond the bounds
  // or when an opaque symbol would not stand alone.
  static Dim from_terms(TermMap terms, int64_t constant, size_t term_limit = Dim::max_terms());
  static Dim divide(const Dim& a, const Dim& b, bool floor);
  // d's terms with another constant (unknown where an opaque symbol would not stand alone).
  static Dim with_constant(const Dim& d, int64_t constant);
  // The symbol spelled `name`, whatever the text (an identifier is an ordinary symbol).
  static Dim opaque(std::string_view name);
};

std::ostream& operator<<(std::ostream& os, const Dim& d);  // writes str()

struct DimHash {
  size_t operator()(const Dim& d) const { return d.hash(); }
};

}  // namespace shapeprop
