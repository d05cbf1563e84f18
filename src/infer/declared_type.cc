#include "declared_type.h"

#include <algorithm>
#include <limits>
#include <map>
#include <vector>

namespace shapeprop::infer {

bool mentions_fresh(const Dim& d) { return d.any_symbol(Dim::is_fresh_symbol); }

std::optional<Fact> adopt_declared(const Fact& proven, const Fact& declared) {
  if (!declared.known()) return std::nullopt;
  if (!proven.known() && !proven.has_elements()) return declared;
  if (proven.other || declared.other) {
    if (!proven.other || !declared.other || proven.other->kind != declared.other->kind) return std::nullopt;
    if (!declared.other->has_element) return std::nullopt;
    auto element = adopt_declared(proven.other->element, declared.other->element);
    if (!element) return std::nullopt;
    auto other = std::make_shared<NonTensor>(*proven.other);
    other->element = std::move(*element);
    other->has_element = true;
    if (other->kind == NonTensor::Kind::kMap && other->key_type == 0) other->key_type = declared.other->key_type;
    Fact out = proven;
    out.other = std::move(other);
    return out;
  }
  Fact out = proven;
  bool changed = false;
  if (out.elem_type == 0 && declared.elem_type != 0) {
    out.elem_type = declared.elem_type;
    changed = true;
  }
  if (!out.shape && declared.shape) {
    out.shape = declared.shape;
    changed = true;
  } else if (out.shape && declared.shape && out.shape->size() == declared.shape->size()) {
    for (size_t i = 0; i < out.shape->size(); ++i) {
      Dim& p = (*out.shape)[i];
      const Dim& d = (*declared.shape)[i];
      if (d.is_unknown() || !(p.is_unknown() || mentions_fresh(p)) || p == d) continue;
      p = d;
      changed = true;
    }
  }
  return changed ? std::optional<Fact>(std::move(out)) : std::nullopt;
}

namespace {

using onnx::TypeProto;

const char* kind_of(TypeProto::ValueCase value_case) {
  switch (value_case) {
    case TypeProto::kTensorType: return "tensor";
    case TypeProto::kSparseTensorType: return "sparse tensor";
    case TypeProto::kSequenceType: return "sequence";
    case TypeProto::kOptionalType: return "optional";
    case TypeProto::kMapType: return "map";
    default: return "value of unknown kind";
  }
}
const char* kind_of(const TypeProto& t) { return kind_of(t.value_case()); }

// The TypeProto case of a non-tensor kind.
TypeProto::ValueCase value_case_of(NonTensor::Kind kind) {
  switch (kind) {
    case NonTensor::Kind::kSparseTensor: return TypeProto::kSparseTensorType;
    case NonTensor::Kind::kSequence: return TypeProto::kSequenceType;
    case NonTensor::Kind::kOptional: return TypeProto::kOptionalType;
    case NonTensor::Kind::kMap: return TypeProto::kMapType;
    case NonTensor::Kind::kOpaque: return TypeProto::kOpaqueType;
  }
  return TypeProto::VALUE_NOT_SET;
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
    // A fresh symbol only names a size the analysis does not know (one the data or an op
    // it cannot follow decides): nothing to compare.
    if (p.is_unknown() || mentions_fresh(p)) continue;
    const std::string dim = "dim " + std::to_string(i);
    if (d.has_dim_value()) {
      const auto eq = p.equals(Dim::constant(d.dim_value()));
      if (eq == false) return dim + " is " + std::to_string(d.dim_value()) + ", proven " + p.str();
      // A size the graph leaves to its inputs (or to the data): the constant is false
      // where some sizes make the expression another number, and unproven where none
      // tried does (max(min(T,huge)-T,-5)+5 is 5 for every T).
      if (!eq) {
        std::string text = dim + " is " + std::to_string(d.dim_value()) + " where the graph leaves it " + p.str();
        if (sizes_where_they_differ(Dim::constant(d.dim_value()), p)) return text;
        dim_params.note_unproven(std::move(text));
      }
    } else if (d.has_dim_param() && !d.dim_param().empty()) {
      // A text that reads as an expression of the scope's sizes ('batch*seq', as torch
      // writes it) means that expression, and is compared as one; any other is a name.
      const Dim e = declared_expression(d.dim_param());
      if (!e.is_unknown() && !e.is_symbol() && dim_params.sizes_of_scope(e.symbols())) {
        if (auto witness = sizes_where_they_differ(e, p))
          return dim + " is " + d.dim_param() + ", proven " + p.str() + (witness->empty() ? "" : " (they differ where " + *witness + ")");
        if (e != p) dim_params.note_unproven(dim + " is " + d.dim_param() + ", proven " + p.str());
        continue;
      }
      if (auto why = dim_params.bind(d.dim_param(), p, where, i)) return dim + " is " + *why;
    }
  }
  return std::nullopt;
}

// A declared type against a proven non-tensor fact: the same kind, and the same through
// what it holds (a sequence's elements, an optional's value, a map's keys and values).
std::optional<std::string> compare_non_tensor(const TypeProto& declared, const NonTensor& proven, DimParams& dim_params,
                                              const std::string& where) {
  using Kind = NonTensor::Kind;
  if (declared.value_case() != value_case_of(proven.kind))
    return std::string("a ") + kind_of(declared) + ", proven a " + kind_of(value_case_of(proven.kind));
  switch (proven.kind) {
    case Kind::kSparseTensor: {
      const auto& d = declared.sparse_tensor_type();
      return compare_tensor(d.elem_type(), d.has_shape() ? &d.shape() : nullptr, proven.element, dim_params, where);
    }
    case Kind::kSequence:
      if (!proven.has_element || !declared.sequence_type().has_elem_type()) return std::nullopt;
      return contradiction(declared.sequence_type().elem_type(), proven.element, dim_params, where);
    case Kind::kOptional:
      if (!proven.has_element || !declared.optional_type().has_elem_type()) return std::nullopt;
      return contradiction(declared.optional_type().elem_type(), proven.element, dim_params, where);
    case Kind::kMap:
      if (declared.map_type().key_type() != proven.key_type)
        return "key type " + elem_type_name(declared.map_type().key_type()) + ", proven " + elem_type_name(proven.key_type);
      if (!proven.has_element || !declared.map_type().has_value_type()) return std::nullopt;
      return contradiction(declared.map_type().value_type(), proven.element, dim_params, where);
    case Kind::kOpaque:
      return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace

void DimParams::bind_all(const onnx::TypeProto& type, const Fact& proven, const std::string& where) {
  if (type.value_case() != TypeProto::kTensorType || !type.tensor_type().has_shape() || !proven.shape) return;
  const auto& shape = type.tensor_type().shape();
  for (int i = 0; i < shape.dim_size() && static_cast<size_t>(i) < proven.shape->size(); ++i)
    if (shape.dim(i).has_dim_param() && !shape.dim(i).dim_param().empty()) {
      const Dim& p = (*proven.shape)[static_cast<size_t>(i)];
      (void)bind(shape.dim(i).dim_param(), p, where, i);
      if (auto s = p.as_symbol()) inputs_.insert(*s);
    }
}

bool DimParams::sizes_of_scope(const std::vector<std::string>& symbols) const {
  return !symbols.empty() &&
         std::all_of(symbols.begin(), symbols.end(), [this](const std::string& s) { return inputs_.count(s) > 0; });
}

std::optional<std::string> DimParams::bind(const std::string& name, const Dim& proven, std::string_view value, int dim) {
  if (proven.is_unknown() || mentions_fresh(proven)) return std::nullopt;
  // The place spelled only where it is kept (the first binding) or told.
  const auto place = [value, dim] { return std::string(value) + " (dim " + std::to_string(dim) + ")"; };
  auto it = bound_.find(name);
  if (it == bound_.end()) {
    bound_.emplace(name, Binding{proven, place()});
    return std::nullopt;
  }
  const auto witness = sizes_where_they_differ(it->second.dim, proven);
  if (!witness) {
    if (it->second.dim != proven)
      note_unproven(place() + " is " + name + ", which is " + it->second.dim.str() + " at " + it->second.where + ", proven " + proven.str());
    return std::nullopt;
  }
  contradicted_.insert(name);
  return name + ", which is " + it->second.dim.str() + " at " + it->second.where + ", proven " + proven.str() +
         (witness->empty() ? "" : " (they differ where " + *witness + ")");
}

std::optional<std::string> sizes_where_they_differ(const Dim& a, const Dim& b) {
  if (a.is_unknown() || b.is_unknown()) return std::nullopt;
  if (auto eq = a.equals(b)) return *eq ? std::nullopt : std::optional<std::string>("");
  std::vector<std::string> symbols = a.symbols();
  for (auto& s : b.symbols())
    if (std::find(symbols.begin(), symbols.end(), s) == symbols.end()) symbols.push_back(std::move(s));
  std::sort(symbols.begin(), symbols.end());
  // Symbols with a range (--dim-range, in force as DimBounds) take sizes within it only:
  // each candidate is clamped into the range, and the ranges' ends are candidates too.
  const DimBounds& bounds = DimBounds::current();
  std::map<std::string, DimBounds::Range> ranged;
  for (const auto& s : symbols)
    if (auto r = bounds.range(s); r.min > bounds.symbol_min() || r.max != std::numeric_limits<int64_t>::max()) ranged[s] = r;
  const auto clamp = [&ranged](const std::string& s, int64_t v) {
    auto it = ranged.find(s);
    return it == ranged.end() ? v : std::clamp(v, it->second.min, *it->second.max);
  };
  std::vector<int64_t> sizes = {1, 2, 3, 5, 7, 8, 16, 31, 64, 224};
  for (const auto& [s, r] : ranged) {
    sizes.push_back(r.min);
    sizes.push_back(*r.max);
  }
  // The values of a and b with every symbol at one size (clamped), then each at its own:
  // enough to tell apart the dims of strided layers (floor((H+1)/2) and floor((H+3)/4)
  // differ at H=3) and of two inputs. Both must be sizes a run can have (a kernel wider
  // than the input is no run).
  struct Point {
    std::string text;
    bool differ;
  };
  const auto at_point = [&](int64_t size, int64_t stagger) -> std::optional<Point> {
    std::map<std::string, int64_t> at;
    int64_t k = 0;
    for (const auto& s : symbols) at[s] = clamp(s, size + stagger * k++);
    const Dim::SymbolMap value = [&at](const std::string& s) -> std::optional<Dim> {
      auto it = at.find(s);
      return it == at.end() ? std::nullopt : std::optional<Dim>(Dim::constant(it->second));
    };
    const auto x = a.substitute(value).as_constant(), y = b.substitute(value).as_constant();
    if (!x || !y || *x < 1 || *y < 1) return std::nullopt;
    std::string text;
    for (const auto& [s, v] : at) text += (text.empty() ? "" : ", ") + s + "=" + std::to_string(v);
    return Point{std::move(text), *x != *y};
  };
  std::optional<std::string> differ, agree;
  for (int64_t stagger : {0, 1})
    for (int64_t size : sizes)
      if (auto p = at_point(size, stagger)) {
        if (p->differ && !differ) differ = p->text;
        if (!p->differ && !agree) agree = p->text;
      }
  // Within ranges, a declaration may hold for part of them: say where it does.
  if (differ && agree && !ranged.empty())
    *differ += "; they agree where " + *agree + ": the declaration holds for part of the --dim-range only";
  return differ;
}

namespace {

// The lenient reader behind declared_expression(): sums, products, unary minus,
// parentheses, integers, identifiers, "//" and floor()/ceiling() of a quotient by a
// constant; spaces anywhere between tokens.
class ExpressionReader {
 public:
  explicit ExpressionReader(std::string_view text) : text_(text) {}

  Dim read() {
    Dim d = sum();
    skip();
    return pos_ == text_.size() ? d : Dim::unknown();
  }

 private:
  Dim sum() {
    Dim total = term();
    while (!total.is_unknown()) {
      if (eat('+'))
        total = total + term();
      else if (eat('-'))
        total = total - term();
      else
        break;
    }
    return total;
  }
  Dim term() {
    Dim product = unary();
    while (!product.is_unknown()) {
      if (eat_text("//")) {
        product = Dim::floor_div(product, unary());
      } else if (eat('*')) {
        product = product * unary();
      } else {
        break;
      }
    }
    return product;
  }
  Dim unary() { return eat('-') ? -unary() : primary(); }
  Dim primary() {
    skip();
    if (eat('(')) {
      Dim d = sum();
      return eat(')') ? d : Dim::unknown();
    }
    if (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
      int64_t v = 0;
      while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9')
        if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, text_[pos_++] - '0', &v)) return Dim::unknown();
      return Dim::constant(v);
    }
    const size_t start = pos_;
    auto word = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'; };
    while (pos_ < text_.size() && word(text_[pos_])) ++pos_;
    const std::string name(text_.substr(start, pos_ - start));
    if (name.empty() || (name[0] >= '0' && name[0] <= '9')) return Dim::unknown();
    if ((name == "floor" || name == "ceiling") && eat('(')) {
      const Dim numerator = sum();
      if (!eat('/')) return Dim::unknown();
      const Dim divisor = sum();
      if (!eat(')') || !divisor.is_constant() || divisor.as_constant() <= 0) return Dim::unknown();
      return Dim::floor_div(name == "floor" ? numerator : numerator + divisor - Dim::constant(1), divisor);
    }
    return Dim::symbol(name);
  }

  void skip() {
    while (pos_ < text_.size() && text_[pos_] == ' ') ++pos_;
  }
  bool eat(char c) {
    skip();
    if (pos_ < text_.size() && text_[pos_] == c && !(c == '/' && text_.substr(pos_, 2) == "//")) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool eat_text(std::string_view t) {
    skip();
    if (text_.substr(pos_, t.size()) != t) return false;
    pos_ += t.size();
    return true;
  }

  std::string_view text_;
  size_t pos_ = 0;
};

}  // namespace

Dim declared_expression(std::string_view text) { return ExpressionReader(text).read(); }

std::optional<std::string> contradiction(const onnx::TypeProto& declared, const Fact& proven, DimParams& dim_params,
                                         const std::string& where) {
  if (declared.value_case() == TypeProto::VALUE_NOT_SET || !proven.known()) return std::nullopt;
  if (proven.other) return compare_non_tensor(declared, *proven.other, dim_params, where);
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

std::string fact_text(const Fact& fact) { return fact.str(); }

std::optional<std::string> initializer_contradiction(const onnx::ValueInfoProto& input,
                                                     const onnx::TensorProto& initializer) {
  const Fact value = Fact::of_tensor(initializer);
  DimParams scratch;  // a default value, not a binding of the graph's sizes
  auto why = contradiction(input.type(), value, scratch, "'" + input.name() + "'");
  if (!why) return std::nullopt;
  return "graph input '" + input.name() + "' is declared " + type_text(input.type()) + " but its initializer is " +
         fact_text(value) + ": " + *why;
}

}  // namespace shapeprop::infer
