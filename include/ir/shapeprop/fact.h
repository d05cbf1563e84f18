// Fact: what is known of one value at one place in one calling context.
//
// The element type; the shape (rank and Dims) when the rank is known; and, for small
// tensors, the elements: integral and bool elements as Dims (so a shape value, the Dims
// a 1-D int64 tensor holds as Shape produces, is a Fact whose elements are symbolic), and
// floating elements as doubles. A value of another kind (sequence, optional, map, sparse
// tensor) is a NonTensor: its kind and the Fact of what it holds, so that every dim in it
// is a Dim as a tensor's are, never a dim_param text (the texts a model or ONNX's
// inference functions spell are read once, where a type becomes a Fact, and written once,
// where a Fact becomes a type).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "onnx/onnx_pb.h"
#include "shapeprop/diagnostics.h"
#include "shapeprop/dim.h"

namespace shapeprop {

struct NonTensor;

class Fact {
 public:
  // Elements are kept for tensors up to these sizes; beyond, only type and shape.
  static constexpr size_t kMaxIntElements = 1024;
  static constexpr size_t kMaxRealElements = 64;

  int32_t elem_type = 0;                      // onnx::TensorProto::DataType; 0 when unknown
  std::optional<std::vector<Dim>> shape;      // nullopt when the rank is unknown
  std::optional<std::vector<Dim>> ints;       // elements of an integral or bool tensor, row-major
  std::optional<std::vector<double>> reals;   // elements of a floating tensor, row-major
  std::shared_ptr<const NonTensor> other;     // a non-tensor value's type (immutable, shared)

  // How the dim_params of a type are read into Dims, and how Dims are written into a
  // type's dims (a dim with neither field set is unknown).
  using DimReader = std::function<Dim(const std::string& dim_param)>;
  using DimWriter = std::function<void(onnx::TensorShapeProto_Dimension& out, const Dim& d)>;

  // A type as a fact. Its dim_params are names (Dim::named: a model's "2*N" is one
  // symbol), but for the texts in `ours`, expressions shapeprop itself wrote (a model
  // lists them in its metadata, see infer.h), which parse back to those expressions.
  static Fact of_type(const onnx::TypeProto& type, const std::set<std::string>* ours = nullptr);
  // A type as a fact, every dim_param in it (inside sequences, optionals and maps too)
  // read by `read`.
  static Fact of_type(const onnx::TypeProto& type, const DimReader& read);
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
  // The ONNX type, every non-constant dim in it (nested ones too) written by `write`.
  onnx::TypeProto type(const DimWriter& write) const;
  // Whether type() gives what ONNX's checker takes as a value's type: a tensor's element
  // type known, or a non-tensor type whose parts are (a map's key type too).
  bool writable() const;

  // Calls fn on each tensor fact this one is or holds: itself if a tensor, else the
  // element of a sequence or optional, a map's value, a sparse tensor's (as a tensor
  // fact), however deeply nested. The mutable form copies a shared NonTensor first.
  void for_each_tensor(const std::function<void(const Fact&)>& fn) const;
  void for_each_tensor(const std::function<void(Fact&)>& fn);
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

// A value that is not a dense tensor: ONNX's sequence, optional, map and sparse tensor
// types (and opaque types, kept whole: they hold no dims).
struct NonTensor {
  enum class Kind : uint8_t { kSequence, kOptional, kMap, kSparseTensor, kOpaque };
  Kind kind = Kind::kSequence;
  int32_t key_type = 0;  // kMap: the key's element type
  // kSequence, kOptional: the element's fact (unknown where the type leaves it unset);
  // kMap: the value's; kSparseTensor: a tensor fact of its element type and shape.
  Fact element;
  // kSequence, kOptional, kMap: whether the type sets its element type at all.
  bool has_element = true;
  std::string opaque_domain, opaque_name;  // kOpaque

  bool operator==(const NonTensor& o) const;
};

bool is_integral_type(int32_t elem_type);  // ints and bool: elements kept as Dims
bool is_floating_type(int32_t elem_type);
std::string elem_type_name(int32_t elem_type);

}  // namespace shapeprop
