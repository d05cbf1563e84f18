// The dim_params of one call's context renamed to placeholders, so that calls alike but
// for the names ONNX's inference makes up for unknown dims (a call on float[unk__12,4]
// and one on float[unk__40,4]) share one analysis; the analysis's results are renamed
// back for each call.
//
// Placeholders are given in the order of the names they stand for, so that a canonical
// expression ("M*N+2*N", see Dim) stays canonical when each of its symbols is renamed.
// A dim_param that is neither an identifier nor such an expression ("batch size") is an
// opaque name and is kept as it is. Renaming is sound because the analysis treats every
// symbol alike: what it proves of N it proves of any other name put in N's place.
#pragma once

#include <map>
#include <set>
#include <string>

#include "onnx/onnx_pb.h"

namespace shapeprop::check {

class SymbolRenaming {
 public:
  // `model_dim_params`: every dim_param of the model, which placeholders must avoid.
  explicit SymbolRenaming(const std::set<std::string>& model_dim_params);

  // First every type and shape value of the context is collected, then the placeholders
  // are given (in name order), then the context is renamed.
  void collect(const onnx::TypeProto& type);
  void collect(const onnx::TensorShapeProto& shape);
  void assign();
  void rename(onnx::TypeProto& type) const { apply(type, to_placeholder_); }
  void rename(onnx::TensorShapeProto& shape) const { apply(shape, to_placeholder_); }
  void restore(onnx::TypeProto& type) const { apply(type, to_original_); }
  void restore(onnx::TensorShapeProto& shape) const { apply(shape, to_original_); }
  // A message about the renamed context, with the original names.
  std::string restore(const std::string& text) const;

 private:
  using Map = std::map<std::string, std::string>;
  std::string prefix_;
  std::set<std::string> names_;
  Map to_placeholder_, to_original_;

  static void apply(onnx::TypeProto& type, const Map& map);
  static void apply(onnx::TensorShapeProto& shape, const Map& map);
};

}  // namespace shapeprop::check
