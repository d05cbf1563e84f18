// Fact: what is known of one value at one place in one calling context.
//
// The element type; the shape (rank and Dims) when the rank is known; and, for small
// tensors, the elements: integral and bool elements as Dims (so a shape value, the Dims
// a 1-D int64 tensor holds as Shape produces, is a Fact whose elements are symbolic), and
// floating elements as doubles. Values of other kinds (sequence, optional, map, sparse)
// keep ONNX's TypeProto.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "onnx/onnx_pb.h"
#include "shapeprop/diagnostics.h"
#include "shapeprop/dim.h"

namespace shapeprop {

class Fact {
 public:
  // Elements are kept for tensors up to these sizes; beyond, only type and shape.
  static constexpr size_t kMaxIntElements = 1024;
  static constexpr size_t kMaxRealElements = 64;

  int32_t elem_type = 0;                      // onnx::TensorProto::DataType; 0 when unknown
  std::optional<std::vector<Dim>> shape;      // nullopt when the rank is unknown
  std::optional<std::vector<Dim>> ints;       // elements of an integral or bool tensor, row-major
  std::optional<std::vector<double>> reals;   // elements of a floating tensor, row-major
  std::optional<onnx::TypeProto> other;       // a non-tensor type, as ONNX states it

  // A type as a fact. Its dim_params are names (Dim::named: a model's "2*N" is one
  // symbol), but for the texts in `ours`, expressions shapeprop itself wrote (a model
  // lists them in its metadata, see infer.h), which parse back to those expressions.
  static Fact of_type(const onnx::TypeProto& type, const std::set<std::string>* ours = nullptr);
  static Fact of_tensor(const onnx::TensorProto& tensor);  // a constant: type, shape and (small) data
  static Fact tensor(int32_t elem_type, std::vector<Dim> shape);
  static Fact int_tensor(int32_t elem_type, std::vector<Dim> shape, std::vector<Dim> elements);
  static Fact real_tensor(int32_t elem_type, std::vector<Dim> shape, std::vector<double> elements);

  bool known() const { return elem_type != 0 || shape || other; }
  bool is_tensor() const { return !other; }
  std::optional<size_t> rank() const { return shape ? std::optional<size_t>(shape->size()) : std::nullopt; }
  // The number of elements when every dim is a constant.
  std::optional<int64_t> static_size() const;
  bool has_elements() const { return ints || reals; }
  // Every element is a known number.
  bool is_constant() const;
  std::optional<int64_t> scalar_int() const;  // a one-element constant integral/bool tensor
  std::optional<double> scalar_real() const;  // a one-element constant tensor of any numeric type

  // The ONNX type: unknown dims are left empty, symbols and expressions become dim_params.
  onnx::TypeProto type() const;
  // The tensor when is_constant() (and the shape and element type allow writing it).
  std::optional<onnx::TensorProto> to_tensor() const;
  // to_tensor() would give a tensor (without building it).
  bool has_tensor() const;
  // A 0-D or 1-D integral tensor's elements as an ONNX shape (ONNX's "symbolic input").
  std::optional<onnx::TensorShapeProto> as_shape_value() const;

  // What holds of a value that is `a` in some contexts and `b` in others.
  friend Fact join(const Fact& a, const Fact& b);
  // One value described twice (by two inference rules, or declared and inferred): the
  // fact that holds both. Where both know something different, `a` wins if `b` is
  // merely less precise; contradictions (element type, rank, two different constants)
  // are an error naming them.
  static Result<Fact> refine(const Fact& a, const Fact& b);
  // `*this` says nothing that `declared` contradicts, and at least what `declared` says.
  bool at_least_as_precise_as(const Fact& declared) const;

  bool operator==(const Fact& other) const;
  bool operator!=(const Fact& o) const { return !(*this == o); }
  size_t hash() const;
  // "float[N,3]", "int64[2] {N,3}", "bool {1}", "?" for nothing known.
  std::string str() const;
};

// Declared at namespace scope too, so that a qualified call finds it.
Fact join(const Fact& a, const Fact& b);

bool is_integral_type(int32_t elem_type);  // ints and bool: elements kept as Dims
bool is_floating_type(int32_t elem_type);
std::string elem_type_name(int32_t elem_type);

}  // namespace shapeprop
