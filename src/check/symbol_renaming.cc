#include "symbol_renaming.h"

#include <cctype>
#include <cstdio>

#include "shapeprop/dim.h"
#include "support/type_walk.h"

namespace shapeprop::check {

namespace {

bool is_identifier_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_identifier_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

bool is_identifier(const std::string& s) {
  if (s.empty() || !is_identifier_start(s[0])) return false;
  for (char c : s)
    if (!is_identifier_char(c)) return false;
  return true;
}

// Calls fn(begin, length) for each identifier in a dim_param that names symbols: an
// identifier, or a canonical expression over identifiers; nothing for an opaque name.
template <class Fn>
void for_each_symbol(const std::string& dim_param, Fn&& fn) {
  if (is_identifier(dim_param)) {
    fn(size_t{0}, dim_param.size());
    return;
  }
  const Dim d = Dim::parse(dim_param);
  if (d.is_unknown() || d.is_constant() || d.is_symbol()) return;  // opaque, or no symbol at all
  for (size_t i = 0; i < dim_param.size();) {
    if (is_identifier_start(dim_param[i]) && (i == 0 || !is_identifier_char(dim_param[i - 1]))) {
      size_t j = i;
      while (j < dim_param.size() && is_identifier_char(dim_param[j])) ++j;
      fn(i, j - i);
      i = j;
    } else {
      ++i;
    }
  }
}

template <class Fn>
void for_each_dim_param(onnx::TensorShapeProto& shape, Fn&& fn) {
  for (auto& d : *shape.mutable_dim())
    if (d.has_dim_param()) fn(*d.mutable_dim_param());
}

}  // namespace

SymbolRenaming::SymbolRenaming(const std::set<std::string>& model_dim_params) : prefix_("sym__") {
  // A prefix no symbol of the model starts with.
  auto clashes = [&](const std::string& prefix) {
    for (const auto& p : model_dim_params) {
      bool hit = false;
      for_each_symbol(p, [&](size_t at, size_t n) { hit = hit || p.compare(at, std::min(n, prefix.size()), prefix) == 0; });
      if (hit) return true;
    }
    return false;
  };
  while (clashes(prefix_)) prefix_ += '_';
}

void SymbolRenaming::collect(const onnx::TypeProto& type) {
  for_each_shape(type, [this](const onnx::TensorShapeProto& s) { collect(s); });
}

void SymbolRenaming::collect(const onnx::TensorShapeProto& shape) {
  for (const auto& d : shape.dim())
    if (d.has_dim_param())
      for_each_symbol(d.dim_param(), [&](size_t at, size_t n) { names_.insert(d.dim_param().substr(at, n)); });
}

void SymbolRenaming::assign() {
  size_t next = 0;
  for (const auto& name : names_) {  // in name order: placeholders compare as their names do
    char index[16];
    std::snprintf(index, sizeof index, "%06zu", next++);
    to_placeholder_[name] = prefix_ + index;
    to_original_[prefix_ + index] = name;
  }
}

std::string SymbolRenaming::restore(const std::string& text) const {
  std::string out;
  for (size_t i = 0; i < text.size();) {
    if (!is_identifier_start(text[i]) || (i > 0 && is_identifier_char(text[i - 1]))) {
      out += text[i++];
      continue;
    }
    size_t j = i;
    while (j < text.size() && is_identifier_char(text[j])) ++j;
    auto it = to_original_.find(text.substr(i, j - i));
    out += it != to_original_.end() ? it->second : text.substr(i, j - i);
    i = j;
  }
  return out;
}

void SymbolRenaming::apply(onnx::TypeProto& type, const Map& map) {
  for_each_shape(type, [&map](onnx::TensorShapeProto& s) { apply(s, map); });
}

void SymbolRenaming::apply(onnx::TensorShapeProto& shape, const Map& map) {
  for_each_dim_param(shape, [&map](std::string& p) {
    std::string out;
    size_t copied = 0;
    for_each_symbol(p, [&](size_t at, size_t n) {
      auto it = map.find(p.substr(at, n));
      if (it == map.end()) return;
      out.append(p, copied, at - copied);
      out += it->second;
      copied = at + n;
    });
    if (copied == 0) return;
    out.append(p, copied, std::string::npos);
    p = std::move(out);
  });
}

}  // namespace shapeprop::check
