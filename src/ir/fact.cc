#include "shapeprop/fact.h"

#include <cmath>
#include <cstring>
#include <sstream>

#include "onnx/defs/parser.h"
#include "shapeprop/hash_combine.h"
#include "support/tensor_data.h"

namespace shapeprop {

using onnx::TensorProto;

bool is_integral_type(int32_t t) {
  switch (t) {
    case TensorProto::INT8: case TensorProto::INT16: case TensorProto::INT32: case TensorProto::INT64:
    case TensorProto::UINT8: case TensorProto::UINT16: case TensorProto::UINT32: case TensorProto::UINT64:
    case TensorProto::BOOL:
      return true;
    default:
      return false;
  }
}

bool is_floating_type(int32_t t) {
  return t == TensorProto::FLOAT || t == TensorProto::DOUBLE || t == TensorProto::FLOAT16 || t == TensorProto::BFLOAT16;
}

std::string elem_type_name(int32_t t) {
  if (t == 0) return "?";
  const std::string& name = onnx::PrimitiveTypeNameMap::ToString(t);
  return name.empty() ? "type" + std::to_string(t) : name;
}

namespace {

std::vector<Dim> dims_of(const onnx::TensorShapeProto& shape, const std::set<std::string>* ours) {
  std::vector<Dim> dims;
  dims.reserve(static_cast<size_t>(shape.dim_size()));
  for (const auto& d : shape.dim()) {
    if (d.has_dim_value())
      dims.push_back(Dim::constant(d.dim_value()));
    else if (d.has_dim_param())
      dims.push_back(ours && ours->count(d.dim_param()) ? Dim::parse(d.dim_param()) : Dim::named(d.dim_param()));
    else
      dims.push_back(Dim::unknown());
  }
  return dims;
}

void set_dim(onnx::TensorShapeProto_Dimension* out, const Dim& d) {
  if (auto c = d.as_constant())
    out->set_dim_value(*c);
  else if (!d.is_unknown())
    out->set_dim_param(d.str());
}

}  // namespace

Fact Fact::tensor(int32_t elem_type, std::vector<Dim> shape) {
  Fact f;
  f.elem_type = elem_type;
  f.shape = std::move(shape);
  return f;
}

Fact Fact::int_tensor(int32_t elem_type, std::vector<Dim> shape, std::vector<Dim> elements) {
  Fact f = tensor(elem_type, std::move(shape));
  if (elements.size() <= kMaxIntElements) f.ints = std::move(elements);
  return f;
}

Fact Fact::real_tensor(int32_t elem_type, std::vector<Dim> shape, std::vector<double> elements) {
  Fact f = tensor(elem_type, std::move(shape));
  if (elements.size() <= kMaxRealElements) f.reals = std::move(elements);
  return f;
}

Fact Fact::of_type(const onnx::TypeProto& type, const std::set<std::string>* ours) {
  Fact f;
  if (type.value_case() == onnx::TypeProto::kTensorType) {
    f.elem_type = type.tensor_type().elem_type();
    if (type.tensor_type().has_shape()) f.shape = dims_of(type.tensor_type().shape(), ours);
  } else if (type.value_case() != onnx::TypeProto::VALUE_NOT_SET) {
    f.other = type;
  }
  return f;
}

Fact Fact::of_tensor(const TensorProto& t) {
  std::vector<Dim> shape;
  int64_t count = 1;  // -1 when a dim is negative or the product overflows: no elements then
  for (int64_t d : t.dims()) {
    shape.push_back(Dim::constant(d));
    if (count >= 0 && (d < 0 || __builtin_mul_overflow(count, d, &count))) count = -1;
  }
  const int32_t type = t.data_type();
  if (t.data_location() == TensorProto::EXTERNAL || t.segment().begin() != 0 || t.segment().end() != 0)
    return tensor(type, std::move(shape));
  const bool small = is_integral_type(type) ? static_cast<size_t>(count) <= kMaxIntElements
                                            : static_cast<size_t>(count) <= kMaxRealElements;
  if (!small || count < 0) return tensor(type, std::move(shape));
  const TensorProto typed = t.has_raw_data() ? typed_tensor(t) : t;
  auto take_ints = [&](const auto& field) -> Fact {
    if (field.size() != count) return tensor(type, std::move(shape));
    std::vector<Dim> e;
    e.reserve(static_cast<size_t>(count));
    for (auto v : field) e.push_back(Dim::constant(static_cast<int64_t>(v)));
    return int_tensor(type, std::move(shape), std::move(e));
  };
  auto take_reals = [&](const auto& field, auto convert) -> Fact {
    if (field.size() != count) return tensor(type, std::move(shape));
    std::vector<double> e;
    e.reserve(static_cast<size_t>(count));
    for (auto v : field) e.push_back(convert(v));
    return real_tensor(type, std::move(shape), std::move(e));
  };
  switch (type) {
    case TensorProto::INT64: return take_ints(typed.int64_data());
    case TensorProto::INT32: case TensorProto::INT16: case TensorProto::INT8:
    case TensorProto::UINT8: case TensorProto::UINT16: case TensorProto::BOOL:
      return take_ints(typed.int32_data());
    case TensorProto::UINT32: return take_ints(typed.uint64_data());
    case TensorProto::FLOAT: return take_reals(typed.float_data(), [](float v) { return double{v}; });
    case TensorProto::DOUBLE: return take_reals(typed.double_data(), [](double v) { return v; });
    case TensorProto::FLOAT16:
      return take_reals(typed.int32_data(), [](int32_t v) { return double{half_to_float(static_cast<uint16_t>(v))}; });
    case TensorProto::BFLOAT16:
      return take_reals(typed.int32_data(), [](int32_t v) { return double{bfloat16_to_float(static_cast<uint16_t>(v))}; });
    default:  // uint64 (may not fit int64), strings, complex, 8-bit floats, 4-bit ints
      return tensor(type, std::move(shape));
  }
}

std::optional<int64_t> Fact::static_size() const {
  if (!shape) return std::nullopt;
  int64_t n = 1;
  for (const Dim& d : *shape) {
    auto c = d.as_constant();
    if (!c || *c < 0 || __builtin_mul_overflow(n, *c, &n)) return std::nullopt;
  }
  return n;
}

bool Fact::is_constant() const {
  if (reals) return true;
  if (!ints) return false;
  for (const Dim& d : *ints)
    if (!d.is_constant()) return false;
  return true;
}

std::optional<int64_t> Fact::scalar_int() const {
  if (!ints || ints->size() != 1) return std::nullopt;
  return (*ints)[0].as_constant();
}

std::optional<double> Fact::scalar_real() const {
  if (reals && reals->size() == 1) return (*reals)[0];
  if (auto i = scalar_int()) return static_cast<double>(*i);
  return std::nullopt;
}

onnx::TypeProto Fact::type() const {
  if (other) return *other;
  onnx::TypeProto t;
  auto* tensor_type = t.mutable_tensor_type();
  tensor_type->set_elem_type(elem_type);
  if (shape) {
    auto* s = tensor_type->mutable_shape();
    for (const Dim& d : *shape) set_dim(s->add_dim(), d);
  }
  return t;
}

bool Fact::has_tensor() const {
  if (!is_constant() || !shape) return false;
  auto size = static_size();
  if (!size) return false;
  if (ints) return static_cast<size_t>(*size) == ints->size();
  return static_cast<size_t>(*size) == reals->size() &&
         (elem_type == TensorProto::FLOAT || elem_type == TensorProto::DOUBLE || elem_type == TensorProto::FLOAT16 ||
          elem_type == TensorProto::BFLOAT16);
}

std::optional<TensorProto> Fact::to_tensor() const {
  if (!has_tensor()) return std::nullopt;
  TensorProto t;
  t.set_data_type(elem_type);
  for (const Dim& d : *shape) t.add_dims(*d.as_constant());
  if (ints) {
    for (const Dim& d : *ints) {
      const int64_t v = *d.as_constant();
      switch (elem_type) {
        case TensorProto::INT64: t.add_int64_data(v); break;
        case TensorProto::UINT32: case TensorProto::UINT64: t.add_uint64_data(static_cast<uint64_t>(v)); break;
        default: t.add_int32_data(static_cast<int32_t>(v)); break;
      }
    }
  } else {
    for (double v : *reals) {
      switch (elem_type) {
        case TensorProto::FLOAT: t.add_float_data(static_cast<float>(v)); break;
        case TensorProto::DOUBLE: t.add_double_data(v); break;
        case TensorProto::FLOAT16: t.add_int32_data(float_to_half(static_cast<float>(v))); break;
        default: t.add_int32_data(float_to_bfloat16(static_cast<float>(v))); break;  // BFLOAT16
      }
    }
  }
  return t;
}

std::optional<onnx::TensorShapeProto> Fact::as_shape_value() const {
  if (!ints || !shape || shape->size() > 1) return std::nullopt;
  onnx::TensorShapeProto s;
  for (const Dim& d : *ints) set_dim(s.add_dim(), d);
  return s;
}

namespace {

// The join of two dims of ONNX's TypeProto: kept when equal, else unknown.
void join_dims(const onnx::TensorShapeProto& a, const onnx::TensorShapeProto& b, onnx::TensorShapeProto& out) {
  for (int i = 0; i < a.dim_size(); ++i) {
    const auto& x = a.dim(i);
    const auto& y = b.dim(i);
    auto* d = out.add_dim();
    if (x.has_dim_value() && y.has_dim_value() && x.dim_value() == y.dim_value())
      d->set_dim_value(x.dim_value());
    else if (x.has_dim_param() && y.has_dim_param() && x.dim_param() == y.dim_param())
      d->set_dim_param(x.dim_param());
  }
}

// Dense or sparse tensor types (TypeProto::Tensor, TypeProto::SparseTensor): false when the
// element types differ or are undefined.
template <class T>
bool join_tensor_types(const T& x, const T& y, T& out) {
  if (x.elem_type() == 0 || x.elem_type() != y.elem_type()) return false;
  out.set_elem_type(x.elem_type());
  if (x.has_shape() && y.has_shape() && x.shape().dim_size() == y.shape().dim_size())
    join_dims(x.shape(), y.shape(), *out.mutable_shape());
  return true;
}

// What holds of a value of type `a` or of type `b`, through sequence, optional and map
// types: optional(float[1]) and optional(float[5]) give optional(float[?]). Element types
// must agree (a tensor type without one is not something ONNX's checker takes inside a
// sequence); nullopt when nothing of the kind can be said.
std::optional<onnx::TypeProto> join_types(const onnx::TypeProto& a, const onnx::TypeProto& b) {
  onnx::TypeProto out;
  // ONNX takes a value where an optional of its type is expected (a Loop's state carried
  // in as optional(seq) and out as seq): optional(T) and U give optional(T joined with U).
  const bool a_optional = a.has_optional_type(), b_optional = b.has_optional_type();
  if (a_optional != b_optional) {
    auto elem = a_optional ? join_types(a.optional_type().elem_type(), b) : join_types(a, b.optional_type().elem_type());
    if (!elem) return std::nullopt;
    *out.mutable_optional_type()->mutable_elem_type() = std::move(*elem);
    return out;
  }
  if (a.value_case() != b.value_case()) return std::nullopt;
  switch (a.value_case()) {
    case onnx::TypeProto::kTensorType:
      return join_tensor_types(a.tensor_type(), b.tensor_type(), *out.mutable_tensor_type()) ? std::optional(out)
                                                                                               : std::nullopt;
    case onnx::TypeProto::kSparseTensorType:
      return join_tensor_types(a.sparse_tensor_type(), b.sparse_tensor_type(), *out.mutable_sparse_tensor_type())
                 ? std::optional(out)
                 : std::nullopt;
    case onnx::TypeProto::kSequenceType: {
      auto elem = join_types(a.sequence_type().elem_type(), b.sequence_type().elem_type());
      if (!elem) return std::nullopt;
      *out.mutable_sequence_type()->mutable_elem_type() = std::move(*elem);
      return out;
    }
    case onnx::TypeProto::kOptionalType: {
      auto elem = join_types(a.optional_type().elem_type(), b.optional_type().elem_type());
      if (!elem) return std::nullopt;
      *out.mutable_optional_type()->mutable_elem_type() = std::move(*elem);
      return out;
    }
    case onnx::TypeProto::kMapType: {
      if (a.map_type().key_type() != b.map_type().key_type()) return std::nullopt;
      auto value = join_types(a.map_type().value_type(), b.map_type().value_type());
      if (!value) return std::nullopt;
      out.mutable_map_type()->set_key_type(a.map_type().key_type());
      *out.mutable_map_type()->mutable_value_type() = std::move(*value);
      return out;
    }
    default: return std::nullopt;
  }
}

}  // namespace

Fact join(const Fact& a, const Fact& b) {
  if (a == b) return a;
  Fact f;
  if (a.other || b.other) {
    // Non-tensor types join structurally; a tensor and a non-tensor give nothing.
    if (a.other && b.other) f.other = join_types(*a.other, *b.other);
    return f;
  }
  if (a.elem_type == b.elem_type) f.elem_type = a.elem_type;
  if (a.shape && b.shape && a.shape->size() == b.shape->size()) {
    std::vector<Dim> dims;
    for (size_t i = 0; i < a.shape->size(); ++i)
      dims.push_back((*a.shape)[i] == (*b.shape)[i] ? (*a.shape)[i] : Dim::unknown());
    f.shape = std::move(dims);
  }
  if (a.ints && a.ints == b.ints) f.ints = a.ints;
  if (a.reals && a.reals == b.reals) f.reals = a.reals;
  return f;
}

namespace {

// The more precise of two descriptions of one dim, or nullopt when they contradict.
std::optional<Dim> refine_dim(const Dim& a, const Dim& b) {
  if (a.is_unknown()) return b;
  if (b.is_unknown()) return a;
  if (a.is_constant() && b.is_constant()) return *a.as_constant() == *b.as_constant() ? std::optional<Dim>(a) : std::nullopt;
  // A constant says more than a symbol (within this context the symbol has that value).
  if (b.is_constant()) return b;
  return a;
}

}  // namespace

Result<Fact> Fact::refine(const Fact& a, const Fact& b) {
  if (!b.known() && !b.has_elements()) return a;
  if (!a.known() && !a.has_elements()) return b;
  if (a.other || b.other) return a.other ? a : b;
  Fact f = a;
  if (a.elem_type != 0 && b.elem_type != 0 && a.elem_type != b.elem_type)
    return Diagnostic::error("element type " + elem_type_name(a.elem_type) + " contradicts " + elem_type_name(b.elem_type));
  if (f.elem_type == 0) f.elem_type = b.elem_type;
  if (a.shape && b.shape) {
    if (a.shape->size() != b.shape->size())
      return Diagnostic::error("rank " + std::to_string(a.shape->size()) + " contradicts rank " + std::to_string(b.shape->size()) +
                               " (" + a.str() + " vs " + b.str() + ")");
    for (size_t i = 0; i < a.shape->size(); ++i) {
      auto d = refine_dim((*a.shape)[i], (*b.shape)[i]);
      if (!d)
        return Diagnostic::error("dim " + std::to_string(i) + " is " + (*a.shape)[i].str() + " and " + (*b.shape)[i].str() +
                                 " (" + a.str() + " vs " + b.str() + ")");
      (*f.shape)[i] = *d;
    }
  } else if (!a.shape) {
    f.shape = b.shape;
  }
  if (a.ints && b.ints) {
    if (a.ints->size() != b.ints->size()) return Diagnostic::error("element counts differ (" + a.str() + " vs " + b.str() + ")");
    for (size_t i = 0; i < a.ints->size(); ++i) {
      auto d = refine_dim((*a.ints)[i], (*b.ints)[i]);
      if (!d) return Diagnostic::error("values differ (" + a.str() + " vs " + b.str() + ")");
      (*f.ints)[i] = *d;
    }
  } else if (!a.ints) {
    f.ints = b.ints;
  }
  if (!a.reals) f.reals = b.reals;
  return f;
}

bool Fact::at_least_as_precise_as(const Fact& declared) const {
  auto r = refine(*this, declared);
  return r.ok() && *r == *this;
}

bool Fact::operator==(const Fact& o) const {
  if (elem_type != o.elem_type || shape != o.shape || ints != o.ints || other.has_value() != o.other.has_value()) return false;
  if (reals.has_value() != o.reals.has_value()) return false;
  if (reals) {
    // Bitwise, so that NaN equals NaN and a context hashes like itself.
    if (reals->size() != o.reals->size()) return false;
    // (Not for none: memcmp of an empty vector's null data is undefined, UBSan says.)
    if (!reals->empty() && std::memcmp(reals->data(), o.reals->data(), reals->size() * sizeof(double)) != 0)
      return false;
  }
  return !other || other->SerializeAsString() == o.other->SerializeAsString();
}

size_t Fact::hash() const {
  size_t h = std::hash<int32_t>()(elem_type);
  if (shape) {
    hash_combine(h, shape->size() + 1);
    for (const Dim& d : *shape) hash_combine(h, d.hash());
  }
  if (ints)
    for (const Dim& d : *ints) hash_combine(h, d.hash());
  if (reals)
    for (double v : *reals) {
      uint64_t bits;
      std::memcpy(&bits, &v, sizeof bits);
      hash_combine(h, std::hash<uint64_t>()(bits));
    }
  if (other) hash_combine(h, std::hash<std::string>()(other->SerializeAsString()));
  return h;
}

namespace {

// A type as the text printer spells it (seq(float[N,2]), map(int64, float), ...), for the
// types a Fact keeps whole. Under protobuf-lite there is no ShortDebugString, and the
// printer is in the io layer, above this one.
std::string type_text(const onnx::TypeProto& t) {
  const auto tensor = [](int32_t elem, bool has_shape, const onnx::TensorShapeProto& shape) {
    std::string s = elem_type_name(elem);
    if (!has_shape) return s + "[]";
    for (int i = 0; i < shape.dim_size(); ++i) {
      const auto& d = shape.dim(i);
      s += (i ? "," : "[") + (d.has_dim_value() ? std::to_string(d.dim_value()) : d.has_dim_param() ? d.dim_param() : "?");
    }
    return shape.dim_size() ? s + "]" : s;
  };
  switch (t.value_case()) {
    case onnx::TypeProto::kTensorType:
      return tensor(t.tensor_type().elem_type(), t.tensor_type().has_shape(), t.tensor_type().shape());
    case onnx::TypeProto::kSparseTensorType:
      return "sparse_tensor(" +
             tensor(t.sparse_tensor_type().elem_type(), t.sparse_tensor_type().has_shape(), t.sparse_tensor_type().shape()) +
             ")";
    case onnx::TypeProto::kSequenceType:
      return "seq(" + type_text(t.sequence_type().elem_type()) + ")";
    case onnx::TypeProto::kOptionalType:
      return "optional(" + type_text(t.optional_type().elem_type()) + ")";
    case onnx::TypeProto::kMapType:
      return "map(" + elem_type_name(t.map_type().key_type()) + ", " + type_text(t.map_type().value_type()) + ")";
    default:
      return "";
  }
}

}  // namespace

std::string Fact::str() const {
  if (other) return type_text(*other);
  if (!known() && !has_elements()) return "?";
  std::string s = elem_type_name(elem_type);
  if (!shape) {
    s += "[]";
  } else if (!shape->empty()) {
    s += '[';
    for (size_t i = 0; i < shape->size(); ++i) s += (i ? "," : "") + (*shape)[i].str();
    s += ']';
  }
  if (ints) {
    s += " {";
    for (size_t i = 0; i < ints->size() && i < 16; ++i) s += (i ? "," : "") + (*ints)[i].str();
    if (ints->size() > 16) s += ",...";
    s += '}';
  } else if (reals) {
    s += " {";
    for (size_t i = 0; i < reals->size() && i < 8; ++i) {
      std::ostringstream os;
      os << (*reals)[i];
      s += (i ? "," : "") + os.str();
    }
    if (reals->size() > 8) s += ",...";
    s += '}';
  }
  return s;
}

}  // namespace shapeprop
