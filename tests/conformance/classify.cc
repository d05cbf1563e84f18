#include "classify.h"

#include <algorithm>
#include <cstdint>

#include "onnx/defs/printer.h"

namespace shapeprop::conformance {

namespace {

Verdict worst(Verdict a, Verdict b) { return std::max(a, b); }

// For a fact one side may simply not have: who knows more.
Verdict compare_presence(bool declared_known, bool inferred_known) {
  if (declared_known == inferred_known) return Verdict::agree;
  return declared_known ? Verdict::less_precise : Verdict::more_precise;
}

// Element types, and map key types; 0 (UNDEFINED) means unknown.
Verdict classify_elem(int32_t declared, int32_t inferred) {
  if (declared != 0 && inferred != 0) return declared == inferred ? Verdict::agree : Verdict::disagree;
  return compare_presence(declared != 0, inferred != 0);
}

Verdict classify_dim(const onnx::TensorShapeProto::Dimension& declared,
                     const onnx::TensorShapeProto::Dimension& inferred) {
  if (declared.has_dim_value() && inferred.has_dim_value())
    return declared.dim_value() == inferred.dim_value() ? Verdict::agree : Verdict::disagree;
  return compare_presence(declared.has_dim_value(), inferred.has_dim_value());
}

// A tensor without a shape has unknown rank; a shape without dims is a scalar.
template <typename TensorType>
Verdict classify_shape(const TensorType& declared, const TensorType& inferred) {
  if (!declared.has_shape() || !inferred.has_shape())
    return compare_presence(declared.has_shape(), inferred.has_shape());
  const auto& declared_dims = declared.shape().dim();
  const auto& inferred_dims = inferred.shape().dim();
  if (declared_dims.size() != inferred_dims.size()) return Verdict::disagree;
  Verdict verdict = Verdict::agree;
  for (int i = 0; i < declared_dims.size(); ++i)
    verdict = worst(verdict, classify_dim(declared_dims[i], inferred_dims[i]));
  return verdict;
}

// Dense and sparse tensor types have the same two fields.
template <typename TensorType>
Verdict classify_tensor(const TensorType& declared, const TensorType& inferred) {
  return worst(classify_elem(declared.elem_type(), inferred.elem_type()), classify_shape(declared, inferred));
}

}  // namespace

std::string_view to_string(Verdict verdict) {
  switch (verdict) {
    case Verdict::agree: return "agree";
    case Verdict::more_precise: return "more precise";
    case Verdict::less_precise: return "less precise";
    case Verdict::disagree: return "disagree";
    case Verdict::error: return "error";
  }
  return "?";  // not reached: the switch covers every verdict
}

Verdict classify(const onnx::TypeProto& declared, const onnx::TypeProto& inferred) {
  using Case = onnx::TypeProto::ValueCase;
  const Case kind = declared.value_case();
  if (kind != inferred.value_case()) {
    if (kind == Case::VALUE_NOT_SET || inferred.value_case() == Case::VALUE_NOT_SET)
      return compare_presence(kind != Case::VALUE_NOT_SET, inferred.value_case() != Case::VALUE_NOT_SET);
    return Verdict::disagree;
  }
  switch (kind) {
    case Case::VALUE_NOT_SET: return Verdict::agree;
    case Case::kTensorType: return classify_tensor(declared.tensor_type(), inferred.tensor_type());
    case Case::kSparseTensorType: return classify_tensor(declared.sparse_tensor_type(), inferred.sparse_tensor_type());
    case Case::kSequenceType:
      return classify(declared.sequence_type().elem_type(), inferred.sequence_type().elem_type());
    case Case::kOptionalType:
      return classify(declared.optional_type().elem_type(), inferred.optional_type().elem_type());
    case Case::kMapType:
      return worst(classify_elem(declared.map_type().key_type(), inferred.map_type().key_type()),
                   classify(declared.map_type().value_type(), inferred.map_type().value_type()));
    case Case::kOpaqueType: {
      const auto& d = declared.opaque_type();
      const auto& i = inferred.opaque_type();
      return d.domain() == i.domain() && d.name() == i.name() ? Verdict::agree : Verdict::disagree;
    }
  }
  return Verdict::disagree;  // not reached: the switch covers every case
}

Classification classify_outputs(const google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>& declared,
                                const google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>& inferred) {
  if (declared.size() != inferred.size())
    return {Verdict::error, "the engine changed the number of graph outputs from " + std::to_string(declared.size()) +
                                " to " + std::to_string(inferred.size())};
  Classification result;
  for (int i = 0; i < declared.size(); ++i) {
    const Verdict verdict = classify(declared[i].type(), inferred[i].type());
    if (verdict > result.verdict) result = {verdict, describe_output(declared[i], inferred[i])};
  }
  return result;
}

std::string describe_output(const onnx::ValueInfoProto& declared, const onnx::ValueInfoProto& inferred) {
  return "output '" + declared.name() + "': declared " + describe(declared.type()) + ", inferred " +
         describe(inferred.type());
}

std::string describe(const onnx::TypeProto& type) {
  switch (type.value_case()) {
    case onnx::TypeProto::VALUE_NOT_SET: return "(none)";
    // ONNX's printer writes nothing for opaque types.
    case onnx::TypeProto::kOpaqueType:
      return "opaque(" + type.opaque_type().domain() + "." + type.opaque_type().name() + ")";
    default: return onnx::ProtoToString(type);
  }
}

}  // namespace shapeprop::conformance
