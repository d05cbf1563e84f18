// Is a declared type false of a value, given what is proven of it in one context?
#pragma once

#include <map>
#include <optional>
#include <string>

#include "onnx/onnx_pb.h"
#include "shapeprop/dim.h"
#include "shapeprop/fact.h"

namespace shapeprop::check {

// The sizes the dim_params of one scope stand for: the main graph (its subgraphs
// included), or one call of a function. A dim_param is bound to the first proven dim it
// is declared for; a later one that is surely another size is a contradiction.
class DimParams {
 public:
  // The proven dims a dim_param of `type` stands for (graph inputs: the facts are their
  // own declarations), bound without checking.
  void bind_all(const onnx::TypeProto& type, const Fact& proven, const std::string& where);
  // nullopt, or why `name` cannot stand for `proven` at `where`.
  std::optional<std::string> bind(const std::string& name, const Dim& proven, const std::string& where);

 private:
  struct Binding {
    Dim dim;
    std::string where;
  };
  std::map<std::string, Binding> bound_;
};

// nullopt when `declared` may hold of a value proven to be `proven`; otherwise the first
// contradiction: "dim 1 is 4, proven 3", "element type int64, proven float", "rank 1,
// proven 2", "dim 0 is S, which is 7 at 'a' (dim 0), proven 9". `where` names the value
// for later bindings ("'a'"). Unknown parts on either side contradict nothing.
std::optional<std::string> contradiction(const onnx::TypeProto& declared, const Fact& proven, DimParams& dim_params,
                                         const std::string& where);

// "float[4,?]", "seq(float[N])": a declared type as diagnostics write it.
std::string type_text(const onnx::TypeProto& type);
// A proven fact the same way ("int64[2] {N,3}" for a tensor whose elements are known).
std::string fact_text(const Fact& fact);

}  // namespace shapeprop::check
