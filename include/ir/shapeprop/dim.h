// Dim: one dimension of a shape, or one element of a shape value.
//
// A Dim is a known integer, a named symbol (an ONNX dim_param such as "batch"), a bounded
// polynomial over symbols with integer coefficients ("2*N", "N+M", "N*M+1"), or unknown.
// A polynomial's factors may also be floor terms, floor(p/c) for a polynomial p and a
// constant c >= 2 ("floor((H+1)/2)", what a strided convolution or a split in halves
// gives), kept in a canonical form: p's coefficients lie in [0, c) with no common factor
// with c, whatever is a multiple of c is taken out ("floor((2*N+3)/2)" is N+1), and a
// floor of a floor plus a constant is one floor ("floor((floor((H+1)/2)+1)/2)" is
// "floor((H+3)/4)"). Canonical form makes structurally equal Dims compare and hash equal,
// and str() gives a stable dim_param text that parse() reads back to the same Dim.
//
// Symbols are identifiers ([A-Za-z_][A-Za-z0-9_]*) or *opaque*: a dim_param outside the
// expression grammar ("batch size") is kept whole as one symbol. An opaque symbol can only
// stand alone, because inside a larger expression its text could not be parsed back;
// arithmetic that would build such an expression gives unknown instead.
//
// Symbols spelled like shapeprop's fresh symbols of data-dependent sizes ("dyn__" and
// digits: how many elements NonZero finds) may be 0 even where symbolic dims are assumed
// to be at least 1 (min_value), since no exporter promises anything of them.
//
// Representation: a Dim is 16 bytes, a constant plus a pointer to its non-constant terms,
// which are interned (one immutable object per distinct polynomial, with its text and hash
// computed once), so that copying, comparing and hashing Dims allocates nothing and costs a
// few instructions. Interned terms live as long as the process: they grow with the number
// of distinct symbolic expressions ever seen, not with model size. Interning is thread-safe.
#pragma once

#include <cstdint>
#include <functional>
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
  // Division by a constant rounding toward negative infinity (ONNX's integer Div
  // truncates toward zero instead; callers choose): exact where it is (2*N / 2 = N,
  // (2*N+1) / 2 = N), otherwise a floor term (N / 2 = floor(N/2)); unknown for a divisor
  // that is not a nonzero constant, or beyond the bounds.
  static Dim floor_div(const Dim& a, const Dim& b);
  // Division that must come out even, as Reshape's -1 and equal splits need: constants
  // that divide, or a polynomial whose every coefficient a constant divisor divides
  // (2*N / 2 = N). Otherwise unknown.
  static Dim exact_div(const Dim& a, const Dim& b);
  // Division truncating toward zero, for any values of the symbols: constants, and exact
  // division (exact_div); otherwise unknown (for a dividend known to be non-negative,
  // floor_div gives the same).
  static Dim trunc_div(const Dim& a, const Dim& b);
  // Remainder with the sign of the divisor (Python/ONNX Mod fmod=0): a - b*floor(a/b).
  static Dim mod(const Dim& a, const Dim& b);
  // Known when a-b is a constant (both constants, equal, or max(N, N+1) = N+1); else unknown.
  static Dim min(const Dim& a, const Dim& b);
  static Dim max(const Dim& a, const Dim& b);

  // A lower bound of the values this Dim takes when every symbol is at least
  // `symbol_min` (a fresh symbol of a data-dependent size at least 0 whatever
  // `symbol_min` says), if one is known: a constant, or a polynomial whose coefficients
  // are all non-negative (so that it grows with each symbol), where a floor term
  // subtracted counts as at most its p/c. Dims are sizes, so symbols are at least 0;
  // callers that assume non-empty dimensions pass 1.
  std::optional<int64_t> min_value(int64_t symbol_min) const;
  // Whether `symbol` is spelled like a fresh symbol of a data-dependent size ("dyn__" and
  // digits), which min_value takes to be possibly 0.
  static bool is_fresh_symbol(std::string_view symbol);

  // How many entries the process-wide tables behind Dim hold (distinct terms, floor
  // terms, and the dim_params read): a run adds only what it has not met before, so
  // repeated runs on one model leave it where the first left it (tests watch that).
  static size_t interned_entries();

  // The symbols this Dim mentions, those inside floor terms included, each once, in order
  // (none for a constant or unknown).
  std::vector<std::string> symbols() const;
  // Whether `pred` holds for one of those symbols (asked in that order, until it does;
  // nothing is copied).
  bool any_symbol(const std::function<bool(std::string_view symbol)>& pred) const;
  // This Dim with each symbol s for which to(s) gives a Dim replaced by that Dim, the rest
  // kept (computed with the arithmetic above: unknown where that would be; floor terms
  // are computed again from what replaces their symbols). A Dim none of whose symbols
  // to() replaces is given back as it is, not computed again.
  using SymbolMap = std::function<std::optional<Dim>(const std::string& symbol)>;
  Dim substitute(const SymbolMap& to) const;

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
  using Monomial = std::vector<std::string>;  // sorted factor keys (dim.cc), with repetition
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
  // floor(a/c) for c >= 2: the quotient taken out, the rest a floor term (dim.cc).
  static Dim floor_term(const Dim& a, int64_t c, size_t term_limit);
  // One factor of a monomial as a Dim: a symbol, or a floor term.
  static Dim factor(const std::string& key);
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
