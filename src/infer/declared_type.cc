#include "declared_type.h"

namespace shapeprop::check {

namespace {

using onnx::TypeProto;

const char* kind_of(const TypeProto& t) {
  switch (t.value_case()) {
    case TypeProto::kTensorType: return "tensor";
    case TypeProto::kSparseTensorType: return "sparse tensor";
    case TypeProto::kSequenceType: return "sequence";
    case TypeProto::kOptionalType: return "optional";
    case TypeProto::kMapType: return "map";
    default: return "value of unknown kind";
  }
}

// A sparse tensor type as the dense tensor type of the same element type and shape.
TypeProto dense_of(const TypeProto& sparse) {
  TypeProto dense;
  auto* t = dense.mutable_tensor_type();
  t->set_elem_type(sparse.sparse_tensor_type().elem_type());
  if (sparse.sparse_tensor_type().has_shape()) *t->mutable_shape() = sparse.sparse_tensor_type().shape();
  return dense;
}

std::optional<std::string> compare_tensor(int32_t elem_type, const onnx::TensorShapeProto* shape, const Fact& proven,
                                          DimParams& dim_params, const std::string& where) {
  if (elem_type != 0 && proven.elem_type != 0 && elem_type != proven.elem_type)
    return "element type " + elem_type_name(elem_type) + ", proven " + elem_type_name(proven.elem_type);
  if (!shape || !proven.shape) return std::nullopt;
  if (static_cast<size_t>(shape->dim_size()) != proven.shape->size())
    return "rank " + std::to_string(shape->dim_size()) + ", proven " + std::to_string(proven.shape->size());
  for (int i = 0; i < shape->dim_size(); ++i) {
    const auto& d = shape->dim(i);
    const Dim& p = (*proven.shape)[static_cast<size_t>(i)];
    if (p.is_unknown()) continue;
    const std::string dim = "dim " + std::to_string(i);
    if (d.has_dim_value()) {
      if (p.equals(Dim::constant(d.dim_value())) == false)
        return dim + " is " + std::to_string(d.dim_value()) + ", proven " + p.str();
    } else if (d.has_dim_param() && !d.dim_param().empty()) {
      if (auto why = dim_params.bind(d.dim_param(), p, where + " (" + dim + ")")) return dim + " is " + *why;
    }
  }
  return std::nullopt;
}

// Both sides as ONNX types (values of other kinds than tensors keep their TypeProto).
std::optional<std::string> compare_types(const TypeProto& declared, const TypeProto& proven, DimParams& dim_params,
                                         const std::string& where) {
  if (declared.value_case() == TypeProto::VALUE_NOT_SET || proven.value_case() == TypeProto::VALUE_NOT_SET)
    return std::nullopt;
  if (declared.value_case() != proven.value_case())
    return std::string("a ") + kind_of(declared) + ", proven a " + kind_of(proven);
  switch (declared.value_case()) {
    case TypeProto::kTensorType:
      return contradiction(declared, Fact::of_type(proven), dim_params, where);
    case TypeProto::kSparseTensorType: {
      const auto& d = declared.sparse_tensor_type();
      return compare_tensor(d.elem_type(), d.has_shape() ? &d.shape() : nullptr, Fact::of_type(dense_of(proven)),
                            dim_params, where);
    }
    case TypeProto::kSequenceType:
      return compare_types(declared.sequence_type().elem_type(), proven.sequence_type().elem_type(), dim_params, where);
    case TypeProto::kOptionalType:
      return compare_types(declared.optional_type().elem_type(), proven.optional_type().elem_type(), dim_params, where);
    case TypeProto::kMapType:
      if (declared.map_type().key_type() != proven.map_type().key_type())
        return "key type " + elem_type_name(declared.map_type().key_type()) + ", proven " +
               elem_type_name(proven.map_type().key_type());
      return compare_types(declared.map_type().value_type(), proven.map_type().value_type(), dim_params, where);
    default:
      return std::nullopt;
  }
}

}  // namespace

void DimParams::bind_all(const onnx::TypeProto& type, const Fact& proven, const std::string& where) {
  if (type.value_case() != TypeProto::kTensorType || !type.tensor_type().has_shape() || !proven.shape) return;
  const auto& shape = type.tensor_type().shape();
  for (int i = 0; i < shape.dim_size() && static_cast<size_t>(i) < proven.shape->size(); ++i)
    if (shape.dim(i).has_dim_param() && !shape.dim(i).dim_param().empty())
      (void)bind(shape.dim(i).dim_param(), (*proven.shape)[static_cast<size_t>(i)], where + " (dim " + std::to_string(i) + ")");
}

std::optional<std::string> DimParams::bind(const std::string& name, const Dim& proven, const std::string& where) {
  if (proven.is_unknown()) return std::nullopt;
  auto [it, fresh] = bound_.try_emplace(name, Binding{proven, where});
  if (fresh || it->second.dim.equals(proven) != false) return std::nullopt;
  return name + ", which is " + it->second.dim.str() + " at " + it->second.where + ", proven " + proven.str();
}

std::optional<std::string> contradiction(const onnx::TypeProto& declared, const Fact& proven, DimParams& dim_params,
                                         const std::string& where) {
  if (declared.value_case() == TypeProto::VALUE_NOT_SET || !proven.known()) return std::nullopt;
  if (proven.other) return compare_types(declared, *proven.other, dim_params, where);
  if (declared.value_case() != TypeProto::kTensorType)
    return std::string("a ") + kind_of(declared) + ", proven a tensor";
  const auto& t = declared.tensor_type();
  return compare_tensor(t.elem_type(), t.has_shape() ? &t.shape() : nullptr, proven, dim_params, where);
}

std::string type_text(const onnx::TypeProto& type) {
  switch (type.value_case()) {
    case TypeProto::kTensorType: return Fact::of_type(type).str();
    case TypeProto::kSparseTensorType: return "sparse " + type_text(dense_of(type));
    case TypeProto::kSequenceType: return "seq(" + type_text(type.sequence_type().elem_type()) + ")";
    case TypeProto::kOptionalType: return "optional(" + type_text(type.optional_type().elem_type()) + ")";
    case TypeProto::kMapType:
      return "map(" + elem_type_name(type.map_type().key_type()) + ", " + type_text(type.map_type().value_type()) + ")";
    default: return "?";
  }
}

std::string fact_text(const Fact& fact) { return fact.other ? type_text(*fact.other) : fact.str(); }

}  // namespace shapeprop::check
