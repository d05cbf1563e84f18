#include "shapeprop/fact.h"

#include <cmath>
#include <cstring>
#include <sstream>

#include "onnx/defs/parser.h"
#include "shapeprop/hash_combine.h"
#include "support/newer_onnx.h"
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
  // A type the linked ONNX does not know (IR 14's float6e2m3 for ONNX 1.21) by its name in
  // newer releases; ONNX names it "undefined" or nothing.
  if (!onnx::TensorProto_DataType_IsValid(t) || t == onnx::TensorProto::UNDEFINED) {
    const std::string_view newer = newer_onnx::newer_elem_type_name(t);
    return newer.empty() ? "type" + std::to_string(t) : std::string(newer);
  }
  const std::string& name = onnx::PrimitiveTypeNameMap::ToString(t);
  return name.empty() ? "type" + std::to_string(t) : name;
}

namespace {

std::vector<Dim> dims_of(const onnx::TensorShapeProto& shape, const Fact::DimReader& read) {
  std::vector<Dim> dims;
  dims.reserve(static_cast<size_t>(shape.dim_size()));
  for (const auto& d : shape.dim()) {
    if (d.has_dim_value())
      dims.push_back(Dim::constant(d.dim_value()));
    else if (d.has_dim_param())
      dims.push_back(read(d.dim_param()));
    else
      dims.push_back(Dim::unknown());
  }
  return dims;
}

void write_dims(onnx::TensorShapeProto& out, const std::vector<Dim>& dims, const Fact::DimWriter& write) {
  for (const Dim& d : dims) {
    auto* dim = out.add_dim();
    if (auto c = d.as_constant())
      dim->set_dim_value(*c);
    else if (!d.is_unknown())
      write(*dim, d);
  }
}

// A dim as its own text (what type() and as_shape_value() write).
void write_text(onnx::TensorShapeProto_Dimension& out, const Dim& d) { out.set_dim_param(d.str()); }

// A dense or sparse tensor type's element type and shape as a tensor fact.
template <class T>
Fact tensor_part(const T& t, const Fact::DimReader& read) {
  Fact f;
  f.elem_type = t.elem_type();
  if (t.has_shape()) f.shape = dims_of(t.shape(), read);
  return f;
}

// The element type and shape of a tensor fact into a dense or sparse tensor type.
template <class T>
void write_tensor_part(const Fact& f, T& out, const Fact::DimWriter& write) {
  out.set_elem_type(f.elem_type);
  if (f.shape) write_dims(*out.mutable_shape(), *f.shape, write);
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
  return of_type(type, [ours](const std::string& dim_param) {
    return ours && ours->count(dim_param) ? Dim::parse(dim_param) : Dim::named(dim_param);
  });
}

Fact Fact::of_type(const onnx::TypeProto& type, const DimReader& read) {
  using onnx::TypeProto;
  if (type.value_case() == TypeProto::kTensorType) return tensor_part(type.tensor_type(), read);
  if (type.value_case() == TypeProto::VALUE_NOT_SET) return Fact();
  auto n = std::make_shared<NonTensor>();
  // An element type that may be left unset (has) and its type.
  auto element = [&](bool has, const TypeProto& elem) {
    n->has_element = has;
    if (has) n->element = of_type(elem, read);
  };
  switch (type.value_case()) {
    case TypeProto::kSparseTensorType:
      n->kind = NonTensor::Kind::kSparseTensor;
      n->element = tensor_part(type.sparse_tensor_type(), read);
      break;
    case TypeProto::kSequenceType:
      n->kind = NonTensor::Kind::kSequence;
      element(type.sequence_type().has_elem_type(), type.sequence_type().elem_type());
      break;
    case TypeProto::kOptionalType:
      n->kind = NonTensor::Kind::kOptional;
      element(type.optional_type().has_elem_type(), type.optional_type().elem_type());
      break;
    case TypeProto::kMapType:
      n->kind = NonTensor::Kind::kMap;
      n->key_type = type.map_type().key_type();
      element(type.map_type().has_value_type(), type.map_type().value_type());
      break;
    default:  // an opaque type (ONNX-ML): no dims in it
      n->kind = NonTensor::Kind::kOpaque;
      n->opaque_domain = type.opaque_type().domain();
      n->opaque_name = type.opaque_type().name();
      break;
  }
  Fact f;
  f.other = std::move(n);
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
  std::optional<TensorProto> decoded;  // raw data, as typed fields (otherwise read in place)
  const TensorProto& typed = t.has_raw_data() ? decoded.emplace(typed_tensor(t)) : t;
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
  return type(write_text);
}

onnx::TypeProto Fact::type(const DimWriter& write) const {
  onnx::TypeProto t;
  if (!other) {
    write_tensor_part(*this, *t.mutable_tensor_type(), write);
    return t;
  }
  const NonTensor& n = *other;
  switch (n.kind) {
    case NonTensor::Kind::kSparseTensor:
      write_tensor_part(n.element, *t.mutable_sparse_tensor_type(), write);
      break;
    case NonTensor::Kind::kSequence: {
      auto* s = t.mutable_sequence_type();
      if (n.has_element) *s->mutable_elem_type() = n.element.type(write);
      break;
    }
    case NonTensor::Kind::kOptional: {
      auto* o = t.mutable_optional_type();
      if (n.has_element) *o->mutable_elem_type() = n.element.type(write);
      break;
    }
    case NonTensor::Kind::kMap: {
      auto* m = t.mutable_map_type();
      m->set_key_type(n.key_type);
      if (n.has_element) *m->mutable_value_type() = n.element.type(write);
      break;
    }
    case NonTensor::Kind::kOpaque: {
      auto* o = t.mutable_opaque_type();
      o->set_domain(n.opaque_domain);
      o->set_name(n.opaque_name);
      break;
    }
  }
  return t;
}

bool Fact::writable() const {
  if (!other) return elem_type != 0;
  switch (other->kind) {
    case NonTensor::Kind::kOpaque: return true;
    case NonTensor::Kind::kSparseTensor: return other->element.elem_type != 0;
    case NonTensor::Kind::kMap: return other->key_type != 0 && other->has_element && other->element.writable();
    default: return other->has_element && other->element.writable();
  }
}

void Fact::for_each_tensor(const std::function<void(const Fact&)>& fn) const {
  if (!other) return fn(*this);
  if (other->kind != NonTensor::Kind::kOpaque && other->has_element) other->element.for_each_tensor(fn);
}

void Fact::for_each_tensor(const std::function<void(Fact&)>& fn) {
  if (!other) return fn(*this);
  if (other->kind == NonTensor::Kind::kOpaque || !other->has_element) return;
  auto copy = std::make_shared<NonTensor>(*other);
  copy->element.for_each_tensor(fn);
  other = std::move(copy);
}

bool NonTensor::operator==(const NonTensor& o) const {
  return kind == o.kind && key_type == o.key_type && has_element == o.has_element && element == o.element &&
         opaque_domain == o.opaque_domain && opaque_name == o.opaque_name;
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
  write_dims(s, *ints, write_text);
  return s;
}

namespace {

// What holds of a value of type `a` or of type `b`, through sequence, optional and map
// types: optional(float[1]) and optional(float[5]) give optional(float[?]). Element types
// must agree (a tensor type without one is not something ONNX's checker takes inside a
// sequence); nullopt when nothing of the kind can be said. Only types: no elements.
std::optional<Fact> join_types(const Fact& a, const Fact& b) {
  using Kind = NonTensor::Kind;
  auto is_optional = [](const Fact& f) { return f.other && f.other->kind == Kind::kOptional; };
  auto wrap = [](Kind kind, Fact element, int32_t key_type = 0) {
    auto n = std::make_shared<NonTensor>();
    n->kind = kind;
    n->key_type = key_type;
    n->element = std::move(element);
    Fact f;
    f.other = std::move(n);
    return f;
  };
  // ONNX takes a value where an optional of its type is expected (a Loop's state carried
  // in as optional(seq) and out as seq): optional(T) and U give optional(T joined with U).
  if (is_optional(a) != is_optional(b)) {
    const Fact& opt = is_optional(a) ? a : b;
    if (!opt.other->has_element) return std::nullopt;
    auto elem = join_types(opt.other->element, is_optional(a) ? b : a);
    if (!elem) return std::nullopt;
    return wrap(Kind::kOptional, std::move(*elem));
  }
  // Tensors, and a sparse tensor's part: the element types agree, the shapes join.
  auto tensors = [](const Fact& x, const Fact& y) -> std::optional<Fact> {
    if (x.elem_type == 0 || x.elem_type != y.elem_type) return std::nullopt;
    Fact j = join(Fact::tensor(x.elem_type, x.shape.value_or(std::vector<Dim>{})),
                  Fact::tensor(y.elem_type, y.shape.value_or(std::vector<Dim>{})));
    if (!x.shape || !y.shape || x.shape->size() != y.shape->size()) j.shape.reset();
    return j;
  };
  if (!a.other && !b.other) return tensors(a, b);
  if (!a.other || !b.other || a.other->kind != b.other->kind) return std::nullopt;
  const NonTensor &x = *a.other, &y = *b.other;
  switch (x.kind) {
    case Kind::kSparseTensor: {
      auto part = tensors(x.element, y.element);
      if (!part) return std::nullopt;
      return wrap(Kind::kSparseTensor, std::move(*part));
    }
    case Kind::kMap:
      if (x.key_type != y.key_type) return std::nullopt;
      [[fallthrough]];
    case Kind::kSequence:
    case Kind::kOptional: {
      if (!x.has_element || !y.has_element) return std::nullopt;
      auto elem = join_types(x.element, y.element);
      if (!elem) return std::nullopt;
      return wrap(x.kind, std::move(*elem), x.key_type);
    }
    case Kind::kOpaque:
      return x == y ? std::optional<Fact>(a) : std::nullopt;
  }
  return std::nullopt;
}

}  // namespace

Fact join(const Fact& a, const Fact& b) {
  if (a == b) return a;
  Fact f;
  if (a.other || b.other) {
    // Non-tensor types join structurally; a tensor and a non-tensor give nothing.
    if (a.other && b.other)
      if (auto joined = join_types(a, b)) return *joined;
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
  if (elem_type != o.elem_type || shape != o.shape || ints != o.ints || !other != !o.other) return false;
  if (reals.has_value() != o.reals.has_value()) return false;
  if (reals) {
    // Bitwise, so that NaN equals NaN and a context hashes like itself.
    if (reals->size() != o.reals->size()) return false;
    // (Not for none: memcmp of an empty vector's null data is undefined, UBSan says.)
    if (!reals->empty() && std::memcmp(reals->data(), o.reals->data(), reals->size() * sizeof(double)) != 0)
      return false;
  }
  return !other || other == o.other || *other == *o.other;
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
  if (other) {
    hash_combine(h, static_cast<size_t>(other->kind) + 1);
    hash_combine(h, std::hash<int32_t>()(other->key_type));
    hash_combine(h, other->has_element ? 1 : 0);
    hash_combine(h, other->element.hash());
    hash_combine(h, std::hash<std::string>()(other->opaque_domain + '\0' + other->opaque_name));
  }
  return h;
}

namespace {

// A non-tensor type as shapeprop's messages spell one (infer::type_text): seq(float[N,2]),
// map(int64, float), sparse float[3], optional(...).
std::string non_tensor_text(const NonTensor& n) {
  const std::string element = n.has_element ? n.element.str() : "";
  switch (n.kind) {
    case NonTensor::Kind::kSparseTensor: return "sparse " + n.element.str();
    case NonTensor::Kind::kSequence: return "seq(" + element + ")";
    case NonTensor::Kind::kOptional: return "optional(" + element + ")";
    case NonTensor::Kind::kMap: return "map(" + elem_type_name(n.key_type) + ", " + element + ")";
    case NonTensor::Kind::kOpaque: return "opaque(" + n.opaque_domain + ", " + n.opaque_name + ")";
  }
  return "";
}

}  // namespace

std::string Fact::str() const {
  if (other) return non_tensor_text(*other);
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
