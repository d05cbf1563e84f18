// The texts of dims, as shapeprop reads and writes them.
//
// A model's dim_params are names: "2*N" in a model names some size, which need not be
// twice N (Dim::named). The expressions shapeprop writes ("2*N" for twice N) are listed in
// the model's metadata_props under kDimExpressionsKey, so that a later run reads exactly
// those back as expressions (and so changes nothing on its own output); and an expression
// is never written with a text the model uses as a name of its own (the dim is left
// unknown there), so that no reader, a later run included, can take one for the other.
#pragma once

#include <set>
#include <string>

#include "onnx/onnx_pb.h"
#include "shapeprop/fact.h"

namespace shapeprop::infer {

inline constexpr const char* kDimExpressionsKey = "shapeprop.dim_expressions";

// The expression texts a model lists as shapeprop's (comma-separated in its metadata).
std::set<std::string> listed_expressions(const onnx::ModelProto& model);

class DimTexts {
 public:
  explicit DimTexts(const onnx::ModelProto& model);

  // Fact::type(), but with an expression whose text the model uses as a name left unknown;
  // the expression texts written are remembered.
  onnx::TypeProto type_of(const Fact& f);

  // The expression texts the model lists as shapeprop's (for Fact::of_type).
  const std::set<std::string>& ours() const { return ours_; }

  // Lists in the model's metadata the expression texts its types now hold that are
  // shapeprop's (written now, or listed before); removes the entry when there are none.
  void record_in(onnx::ModelProto& model) const;

 private:
  std::set<std::string> ours_;      // listed by the model as shapeprop's
  std::set<std::string> reserved_;  // the model's own names that read like expressions
  std::set<std::string> written_;
};

}  // namespace shapeprop::infer
