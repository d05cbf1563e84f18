// Is a declared type false of a value, given what is proven of it in one context?
//
// Declarations are never facts here (DESIGN.md, guarantee 3): exporters declare the
// example's sizes and reuse dim names for different sizes. A declaration is compared with
// what the graph proves, and is false when some valid input makes it so: an element type,
// rank or constant dim other than the proven one; a constant where the graph leaves a
// symbol free (true only when the symbol takes that value); one dim_param naming two sizes
// that differ for some values of the symbols.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "onnx/onnx_pb.h"
#include "shapeprop/dim.h"
#include "shapeprop/fact.h"

namespace shapeprop::infer {

// The sizes the dim_params of one scope stand for: the main graph (its subgraphs
// included), or one call of a function. A dim_param is bound to the first proven dim it
// is declared for; a later one that surely differs from it for some sizes is a
// contradiction.
class DimParams {
 public:
  // The proven dims a dim_param of `type` stands for (graph inputs: the facts are their
  // own declarations), bound without checking.
  void bind_all(const onnx::TypeProto& type, const Fact& proven, const std::string& where);
  // nullopt, or why `name` cannot stand for `proven` at dim `dim` of `value` ("'x'",
  // "input 'x'": the place is written "'x' (dim 0)").
  std::optional<std::string> bind(const std::string& name, const Dim& proven, std::string_view value, int dim);
  // Whether every symbol is one of the scope's own sizes (a dim_param of the graph's
  // inputs, bound by bind_all): a declared text over them is an expression of them.
  bool sizes_of_scope(const std::vector<std::string>& symbols) const;
  // The dim_params some bind() found naming different sizes.
  const std::set<std::string>& contradicted() const { return contradicted_; }

  // The declared dims contradiction() could neither prove nor refute (a constant or an
  // expression where the graph leaves another expression that agrees with it at every
  // size tried), kept for a checker to warn of when it asks (collect_unproven); taken
  // (and cleared) by take_unproven.
  void collect_unproven() { collecting_ = true; }
  void note_unproven(std::string what) {
    if (collecting_) unproven_.push_back(std::move(what));
  }
  std::vector<std::string> take_unproven() { return std::exchange(unproven_, {}); }

 private:
  struct Binding {
    Dim dim;
    std::string where;
  };
  std::map<std::string, Binding> bound_;
  std::set<std::string> contradicted_;
  std::set<std::string> inputs_;  // the symbols of the graph's inputs (bind_all)
  bool collecting_ = false;
  std::vector<std::string> unproven_;
};

// nullopt when `declared` may hold of a value proven to be `proven`; otherwise the first
// contradiction: "dim 1 is 4, proven 3", "element type int64, proven float", "rank 1,
// proven 2", "dim 1 is 8 where the graph leaves it S", "dim 0 is S, which is 7 at 'a'
// (dim 0), proven 9". A declared constant or expression where the graph leaves another
// expression is a contradiction only with a counterexample (sizes_where_they_differ):
// otherwise it is noted as unproven (DimParams::note_unproven), not false. `where` names
// the value for later bindings ("'a'"). Unknown parts on either side contradict nothing,
// nor do proven dims that mention a fresh symbol.
std::optional<std::string> contradiction(const onnx::TypeProto& declared, const Fact& proven, DimParams& dim_params,
                                         const std::string& where);

// Whether `d` mentions a fresh symbol (Dim::is_fresh_symbol): a size the analysis names
// without knowing it, which no declaration can be compared with.
bool mentions_fresh(const Dim& d);

// Sizes of the symbols (each at least 1) for which `a` and `b` differ, both being sizes
// (at least 1) there, as "S=5, T=6"; nullopt when none is found (they may be equal for
// every size). Both are evaluated exactly at a few sizes, so a text returned is a
// witness; "" when they differ by a constant. Symbols with a range in force (DimBounds::
// current(), --dim-range) take sizes within it, and where the two also agree within the
// ranges the text says so (the declaration holds for part of them).
std::optional<std::string> sizes_where_they_differ(const Dim& a, const Dim& b);

// What a declared dim_param of a value inside a graph stands for, read the way exporters
// write expressions of the graph's sizes ("batch*seq", "4*batch", "s0 + 1", "(s0//2)",
// "floor(s0/2)", "ceiling(s0/2)", "2*s1 - 1"): the Dim when the text is such an
// expression over identifiers, otherwise unknown. For comparing a declaration with a
// proven dim only, never as a fact.
Dim declared_expression(std::string_view text);

// DeclaredTypes::Use (ONNX's contract): `proven` completed by `declared` where it proves
// nothing finer (an unknown element type, rank or dim, a dim that is a fresh symbol, the
// type of a sequence's, optional's or map's element); nullopt when the declaration adds
// nothing. Call it only with a declaration contradiction() found consistent.
std::optional<Fact> adopt_declared(const Fact& proven, const Fact& declared);

// "float[4,?]", "seq(float[N])": a declared type as diagnostics write it.
std::string type_text(const onnx::TypeProto& type);
// A proven fact the same way ("int64[2] {N,3}" for a tensor whose elements are known).
std::string fact_text(const Fact& fact);

// A graph input with an initializer: the initializer is its default value, so the input's
// declared type must hold of it (an initializer binds none of the graph's dim_params).
// nullopt when it does; otherwise "graph input 'w' is declared float[4] but its
// initializer is float[3] {1,2,3}: dim 0 is 4, proven 3".
std::optional<std::string> initializer_contradiction(const onnx::ValueInfoProto& input,
                                                     const onnx::TensorProto& initializer);

}  // namespace shapeprop::infer
