// The texts of dims, as shapeprop reads and writes them.
//
// A model's dim_params are names: "2*N" in a model names some size, which need not be
// twice N (Dim::named). The expressions shapeprop writes ("2*N" for twice N) are listed in
// the model's metadata_props under kDimExpressionsKey, so that a later run reads exactly
// those back as expressions (and so changes nothing on its own output); and an expression
// is never written with a text the graph's inputs use as a name of their own (the dim is
// left unknown there), so that no reader, a later run included, can take one for the
// other. Texts elsewhere in the model are declarations, compared with the proof
// (infer/declared_type.h); torch writes "batch*seq" for the very expression.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>

#include "onnx/onnx_pb.h"
#include "shapeprop/fact.h"

namespace shapeprop::infer {

inline constexpr const char* kDimExpressionsKey = "shapeprop.dim_expressions";
// The fresh symbols of data-dependent sizes (dyn__0, ...) an earlier run wrote. Each names
// the size one node found and nothing more: a later run reads it as unknown and names the
// size again (with the same name, the analysis being deterministic), so that its output
// equals its input, and a symbol an edited model put elsewhere equates nothing.
inline constexpr const char* kFreshSymbolsKey = "shapeprop.fresh_symbols";

// The expression texts a model lists as shapeprop's (comma-separated in its metadata).
std::set<std::string> listed_expressions(const onnx::ModelProto& model);
// The fresh symbols a model lists as shapeprop's.
std::set<std::string> listed_fresh_symbols(const onnx::ModelProto& model);

// Every identifier a dim_param of the model spells, alone or inside a longer text ("N"
// and "M" for "2*N+M"), except the fresh symbols it lists as shapeprop's (unless the main
// graph's inputs, which no run rewrites, spell them): the names a fresh symbol must not take.
std::set<std::string> names_taken(const onnx::ModelProto& model);

// Whether `name` is spelled as a name shapeprop mints: a fresh symbol of a data-dependent
// or unknown size (dyn__N) or a function's join of sizes that differ between calls (unk__N,
// ONNX's spelling of its own unknowns): names no user gives.
bool is_minted_name(std::string_view name);

// A declared type as a fact: the expressions in `ours` read as expressions, the fresh
// symbols in `fresh` as unknown dims.
Fact declared_fact(const onnx::TypeProto& type, const std::set<std::string>& ours, const std::set<std::string>& fresh);

class DimTexts {
 public:
  explicit DimTexts(const onnx::ModelProto& model);

  // Fact::type(), but with an expression whose text a graph input uses as a name left unknown;
  // the expression texts written are remembered.
  onnx::TypeProto type_of(const Fact& f);

  // A type the model declares, as a fact (declared_fact with the model's lists).
  Fact declared(const onnx::TypeProto& type) const { return declared_fact(type, ours_, fresh_); }
  // Whether the model lists `dim_param` as a fresh symbol an earlier run wrote.
  bool listed_fresh(const std::string& dim_param) const { return fresh_.count(dim_param) > 0; }

  // Lists in the model's metadata the expression texts and the fresh symbols its types now
  // hold that are shapeprop's (written now, or listed before); removes an entry when there
  // are none.
  void record_in(onnx::ModelProto& model) const;

 private:
  std::set<std::string> ours_;      // listed by the model as shapeprop's
  std::set<std::string> fresh_;     // fresh symbols listed by the model as shapeprop's
  std::set<std::string> taken_;     // the model's own names (names_taken)
  std::set<std::string> reserved_;  // the graph inputs' own names that read like expressions
  std::set<std::string> written_;
  // What type_of() writes for each dim it met: its text, or nothing.
  std::unordered_map<Dim, std::optional<std::string>, DimHash> texts_;
};

}  // namespace shapeprop::infer
