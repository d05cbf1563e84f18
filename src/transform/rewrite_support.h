// What the rewrite passes share: recognising ops, reading attributes and constant
// inputs, telling what the facts know of a shape.
#pragma once

#include <cmath>
#include <optional>
#include <string_view>
#include <vector>

#include "eval/fold_support.h"
#include "onnx/onnx_pb.h"
#include "pass.h"
#include "shapeprop/fact.h"
#include "shapeprop/function_id.h"
#include "support/op_names.h"
#include "support/subgraphs.h"

namespace shapeprop::transform {

using ir::tensor_value_hash;
using ir::same_tensor_value;
using ir::tensor_value_key;

inline bool is_op(const onnx::NodeProto& n, std::string_view op) {
  return FunctionId::is_default_domain(n.domain()) && n.op_type() == op;
}

// An attribute the node holds itself (folding replaced references by values already).
inline const onnx::AttributeProto* attribute(const onnx::NodeProto& n, std::string_view name) {
  for (const auto& a : n.attribute())
    if (a.name() == name && !a.has_ref_attr_name()) return &a;
  return nullptr;
}

inline bool has_reference(const onnx::NodeProto& n) {
  for (const auto& a : n.attribute())
    if (a.has_ref_attr_name()) return true;
  return false;
}

inline std::optional<int64_t> int_attribute(const onnx::NodeProto& n, std::string_view name) {
  const auto* a = attribute(n, name);
  if (!a || a->type() != onnx::AttributeProto::INT) return std::nullopt;
  return a->i();
}

inline std::optional<std::vector<int64_t>> ints_attribute(const onnx::NodeProto& n, std::string_view name) {
  const auto* a = attribute(n, name);
  if (!a || a->type() != onnx::AttributeProto::INTS) return std::nullopt;
  return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

// The elements of an integral value whose every element the facts (or a constant) know.
inline std::optional<std::vector<int64_t>> constant_ints(const MutableBody& body, ValueId v) {
  const Fact* f = body.fact(v);
  if (!f || !is_integral_type(f->elem_type)) return std::nullopt;
  return eval::detail::constant_ints(f);
}

// The dims of a value's shape when its rank is known and no dim is unknown (symbols are
// fine: equal symbols are equal sizes).
inline const std::vector<Dim>* known_dims(const Fact* f) {
  if (!f || !f->is_tensor() || !f->shape) return nullptr;
  for (const Dim& d : *f->shape)
    if (d.is_unknown()) return nullptr;
  return &*f->shape;
}

// Whether two values have the same known shape and the same known element type.
inline bool same_known_shape(const MutableBody& body, ValueId a, ValueId b) {
  const Fact* fa = body.fact(a);
  const Fact* fb = body.fact(b);
  const std::vector<Dim>* da = known_dims(fa);
  const std::vector<Dim>* db = known_dims(fb);
  return da && db && *da == *db && fa->elem_type == fb->elem_type && fa->elem_type != 0;
}

// Every element of the value is known to be `value` (true for 1, false for 0, with bools).
inline bool all_elements_are(const Fact* f, int64_t value) {
  if (!f || !f->is_tensor()) return false;
  if (f->ints) {
    if (f->ints->empty()) return false;
    for (const Dim& d : *f->ints)
      if (d.as_constant() != std::optional<int64_t>(value)) return false;
    return true;
  }
  if (f->reals) {
    if (f->reals->empty()) return false;
    for (double d : *f->reals)
      if (d != static_cast<double>(value)) return false;
    return true;
  }
  return false;
}

// The value of a constant of one element (a scalar or of shape [1]), if the fact knows it
// and it is a number.
inline std::optional<long double> one_element_value(const Fact* f) {
  if (!f || !f->is_tensor() || !f->shape || f->shape->size() > 1) return std::nullopt;
  if (f->reals && f->reals->size() == 1) {
    const double d = (*f->reals)[0];
    if (std::isnan(d)) return std::nullopt;
    return static_cast<long double>(d);
  }
  if (f->ints && f->ints->size() == 1)
    if (auto c = (*f->ints)[0].as_constant()) return static_cast<long double>(*c);
  return std::nullopt;
}

// The scalar (rank 0) constant's value, if the fact knows it and it is a number.
inline std::optional<long double> scalar_value(const Fact* f) {
  return f && f->shape && f->shape->empty() ? one_element_value(f) : std::nullopt;
}

inline std::optional<size_t> rank_of(const Fact* f) {
  return f && f->is_tensor() ? f->rank() : std::nullopt;
}

// A 1-D int64 tensor.
inline onnx::TensorProto int64_vector(const std::vector<int64_t>& values) {
  onnx::TensorProto t;
  t.set_data_type(onnx::TensorProto::INT64);
  t.add_dims(static_cast<int64_t>(values.size()));
  for (int64_t v : values) t.add_int64_data(v);
  return t;
}

inline void set_int_attribute(onnx::NodeProto& n, const std::string& name, int64_t value) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(value);
}

inline void set_ints_attribute(onnx::NodeProto& n, const std::string& name, const std::vector<int64_t>& values) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t v : values) a->add_ints(v);
}

}  // namespace shapeprop::transform
