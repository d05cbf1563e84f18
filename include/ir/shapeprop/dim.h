// Dim: one dimension of a shape, or one element of a shape value.
//
// A Dim is a known integer, a named symbol (an ONNX dim_param such as "batch"), a bounded
// polynomial over symbols with integer coefficients ("2*N", "N+M", "N*M+1"), or unknown.
// A polynomial's factors may also be function terms, each in a canonical form of its own:
// - floor(p/c) for a polynomial p and a constant c >= 2 ("floor((H+1)/2)", what a strided
//   convolution or a split in halves gives): p's coefficients lie in [0, c) with no common
//   factor with c, whatever is a multiple of c is taken out ("floor((2*N+3)/2)" is N+1),
//   and a floor of a floor plus a constant is one floor ("floor((floor((H+1)/2)+1)/2)" is
//   "floor((H+3)/4)"). ceil(p/c) is floor((p+c-1)/c) and p mod c is p-c*floor(p/c), so
//   that each value has one spelling: ceil(S/2) is "floor((S+1)/2)", and
//   floor(S/2)*2 + S mod 2 is S.
// - min(a,b) and max(a,b) of two Dims whose difference is not decided by the bounds the
//   symbols are known to lie in (DimBounds): "min(S,128)" (a Slice of a 128-long table to
//   S), with the two arguments in a fixed order (the one whose terms print first first, a
//   constant last) and the first one's constant taken out ("min(S+1,129)" is
//   "min(S,128)+1"), so that a min of min with a constant is one min.
// Canonical form makes structurally equal Dims compare and hash equal, and str() gives a
// stable dim_param text that parse() reads back to the same Dim. The text is one that
// ONNX Runtime's symbolic_shape_infer (which takes any dim_param as a name) and
// onnx-shape-inference (floor, min, max, + - * / and integers) read; docs/dims.md spells
// out the grammar.
//
// Symbols are identifiers ([A-Za-z_][A-Za-z0-9_]*) or *opaque*: a dim_param outside the
// expression grammar ("batch size") is kept whole as one symbol. An opaque symbol can only
// stand alone, because inside a larger expression its text could not be parsed back;
// arithmetic that would build such an expression gives unknown instead.
//
// Symbols name sizes, so every symbol is at least 0; what more is known of them (at least
// 1 where empty dims are assumed away, a range a user gives) is a DimBounds, in force on a
// thread while a DimBounds::Scope is alive, and consulted in one place: the bounds of a
// Dim's values (lower_bound, upper_bound), through which min and max are decided. Symbols
// spelled like shapeprop's fresh symbols of data-dependent sizes ("dyn__" and digits: how
// many elements NonZero finds) may be 0 whatever the bounds say of symbols in general,
// since no exporter promises anything of them.
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

// What is known of the values symbols take: the one place Dim's simplifications and
// bounds ask (issue 39). Every symbol is at least 0 (it names a size) and at most
// INT64_MAX; DimBounds(1) says every symbol is at least 1 (AnalysisOptions::
// assume_positive_dims: empty dims assumed away), except fresh symbols of data-dependent
// sizes (Dim::is_fresh_symbol), which stay at least 0; set_range bounds one symbol by
// name on both sides (--dim-range NAME=MIN..MAX), within what the rest says.
//
// The analysis puts the bounds it may assume in force around each op's folding rules (a
// Scope), and records an assumption where a result needed more than DimBounds() (the
// Scope's relied()): a min or max decided, a slice's bound clamped, a comparison decided.
class DimBounds {
 public:
  struct Range {
    int64_t min = 0;
    std::optional<int64_t> max;  // none: INT64_MAX (a size is an int64)
    bool operator==(const Range&) const = default;
  };

  DimBounds() = default;  // every symbol >= 0
  explicit DimBounds(int64_t symbol_min) : symbol_min_(symbol_min < 0 ? 0 : symbol_min) {}

  // Bounds `symbol` to [min, max] (max none: INT64_MAX), in place of what symbol_min says
  // of it; a negative min is taken as 0 (sizes). An empty range is kept as given
  // (callers refuse it).
  DimBounds& set_range(const std::string& symbol, Range range);
  // The range of values `symbol` takes (max always set).
  Range range(std::string_view symbol) const;
  int64_t symbol_min() const { return symbol_min_; }
  // Nothing known beyond "every symbol >= 0".
  bool is_default() const { return symbol_min_ == 0 && ranges_.empty(); }
  bool operator==(const DimBounds&) const = default;

  // The bounds in force on this thread: the innermost live Scope's, DimBounds() outside
  // any. Dim::parse() reads text under DimBounds(), whatever is in force.
  static const DimBounds& current();

  // Puts `bounds` (which must outlive it) in force on this thread while alive (scopes
  // nest), and notes whether a Dim operation needed them: a result that DimBounds() would
  // not give (note_relied).
  class Scope {
   public:
    explicit Scope(const DimBounds& bounds);
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;
    bool relied() const { return relied_; }
    // Forgets what was noted so far (a caller that tried something and dropped it).
    void reset_relied() { relied_ = false; }

   private:
    friend class DimBounds;
    const DimBounds* bounds_;  // the caller's, which outlive the scope
    Scope* previous_;
    bool relied_ = false;
  };
  // Tells the innermost live Scope that a result needed its bounds (no-op outside any).
  static void note_relied();

 private:
  int64_t symbol_min_ = 0;
  std::map<std::string, Range, std::less<>> ranges_;
};

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
  // that divide, a polynomial whose every coefficient a constant divisor divides
  // (2*N / 2 = N), or one a monomial divides term by term (4*B*S / (4*B) = S).
  // Otherwise unknown.
  static Dim exact_div(const Dim& a, const Dim& b);
  // Division truncating toward zero, for any values of the symbols: constants, and exact
  // division (exact_div); otherwise unknown (for a dividend known to be non-negative,
  // floor_div gives the same).
  static Dim trunc_div(const Dim& a, const Dim& b);
  // Division rounding toward positive infinity: -floor_div(-a, b), so ceil(N/2) is
  // floor((N+1)/2).
  static Dim ceil_div(const Dim& a, const Dim& b);
  // Remainder with the sign of the divisor (Python/ONNX Mod fmod=0): a - b*floor(a/b),
  // N mod 2 is N-2*floor(N/2).
  static Dim mod(const Dim& a, const Dim& b);
  // The lesser and the greater of two Dims: one of them where the bounds in force
  // (DimBounds::current()) decide the sign of a-b (max(N, N+1) is N+1, max(0, N-1) is
  // N-1 when N >= 1 is known, noted as DimBounds::note_relied), otherwise a min or max
  // term in canonical form (dim.h's top); unknown beyond the bounds or with an opaque
  // symbol.
  static Dim min(const Dim& a, const Dim& b);
  static Dim max(const Dim& a, const Dim& b);

  // Bounds of the values this Dim takes when every symbol lies within `bounds`, where
  // they are known (nullopt: none known, or beyond int64). Computed by intervals over the
  // monomials, after the function terms are replaced by what bounds them: a floor term
  // floor(p/c) lies in [(p-c+1)/c, p/c] (so that N - 2*floor(N/2) is at least 0), and a
  // min or max is one of its two arguments (each taken in turn). Sound, not tight: N - M
  // has no lower bound, nor N*N - N.
  std::optional<int64_t> lower_bound(const DimBounds& bounds = DimBounds::current()) const;
  std::optional<int64_t> upper_bound(const DimBounds& bounds = DimBounds::current()) const;
  // lower_bound(DimBounds(symbol_min)): a lower bound when every symbol (but fresh ones)
  // is at least `symbol_min`; nullopt for a negative symbol_min.
  std::optional<int64_t> min_value(int64_t symbol_min) const;
  // Whether `symbol` is spelled like a fresh symbol of a data-dependent size ("dyn__" and
  // digits), which DimBounds takes to be possibly 0.
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
  friend struct DimBounding;  // dim.cc: lower_bound and upper_bound

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
  // min (is_max false) or max of a and b, decided or in canonical form (dim.cc).
  static Dim extreme(bool is_max, const Dim& a, const Dim& b);
  // One factor of a monomial as a Dim: a symbol, or a function term.
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
