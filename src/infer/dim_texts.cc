#include "infer/dim_texts.h"

#include "shapeprop/infer.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <sstream>
#include <string_view>
#include <unordered_set>

#include "support/dim_params.h"
#include "support/type_walk.h"

namespace shapeprop::infer {

namespace {

// Text an expression of ours would print as (str()'s grammar, not a lone symbol).
bool reads_as_expression(const std::string& text) {
  const Dim d = Dim::parse(text);
  return !d.is_unknown() && !d.is_constant() && !d.is_symbol();
}

// The comma-separated texts listed under `key` that `keep` accepts.
template <class Keep>
std::set<std::string> listed(const onnx::ModelProto& model, const char* key, Keep&& keep) {
  std::set<std::string> out;
  for (const auto& kv : model.metadata_props()) {
    if (kv.key() != key) continue;
    std::stringstream list(kv.value());
    for (std::string text; std::getline(list, text, ',');)
      if (keep(text)) out.insert(text);
  }
  return out;
}

// Replaces the entry under `key` by the texts of `present` where it stands (a second run
// then writes the same bytes), adds it at the end, or removes it when `present` is empty.
void record_list(onnx::ModelProto& model, const char* key, const std::set<std::string>& present) {
  auto* props = model.mutable_metadata_props();
  auto is_key = [key](const onnx::StringStringEntryProto& kv) { return kv.key() == key; };
  auto first = std::find_if(props->begin(), props->end(), is_key);
  if (present.empty()) {
    props->erase(std::remove_if(props->begin(), props->end(), is_key), props->end());
    return;
  }
  std::string list;
  for (const auto& text : present) list += (list.empty() ? "" : ",") + text;
  if (first == props->end()) {
    auto* entry = props->Add();
    entry->set_key(key);
    entry->set_value(std::move(list));
    return;
  }
  first->set_value(std::move(list));
  props->erase(std::remove_if(std::next(first), props->end(), is_key), props->end());
}

}  // namespace

std::set<std::string> listed_expressions(const onnx::ModelProto& model) {
  return listed(model, kDimExpressionsKey, reads_as_expression);
}

std::set<std::string> listed_fresh_symbols(const onnx::ModelProto& model) {
  return listed(model, kFreshSymbolsKey, [](const std::string& text) { return Dim::is_fresh_symbol(text); });
}

Fact declared_fact(const onnx::TypeProto& type, const std::set<std::string>& ours, const std::set<std::string>& fresh) {
  if (fresh.empty()) return Fact::of_type(type, &ours);
  // A fresh symbol, or an expression of ours that mentions one.
  auto names_fresh = [&](const std::string& text) {
    if (fresh.count(text)) return true;
    if (!ours.count(text)) return false;
    const auto symbols = Dim::parse(text).symbols();
    return std::any_of(symbols.begin(), symbols.end(), [&fresh](const std::string& s) { return fresh.count(s) > 0; });
  };
  onnx::TypeProto copy = type;
  for_each_shape(copy, [&](onnx::TensorShapeProto& shape) {
    for (auto& d : *shape.mutable_dim())
      if (d.has_dim_param() && names_fresh(d.dim_param())) d.clear_dim_param();
  });
  return Fact::of_type(copy, &ours);
}

bool is_minted_name(std::string_view name) {
  if (Dim::is_fresh_symbol(name)) return true;
  constexpr std::string_view join = "unk__";
  return name.size() > join.size() && name.substr(0, join.size()) == join &&
         std::all_of(name.begin() + join.size(), name.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::set<std::string> names_taken(const onnx::ModelProto& model) {
  const std::set<std::string> fresh = listed_fresh_symbols(model);
  std::set<std::string> out;
  // Each identifier of a text; `all` keeps the listed fresh symbols too.
  auto identifiers = [&](const std::string& text, bool all) {
    auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
    for (size_t i = 0; i < text.size();) {
      if (!word(text[i])) {
        ++i;
        continue;
      }
      size_t j = i;
      while (j < text.size() && word(text[j])) ++j;
      std::string name = text.substr(i, j - i);
      if (all || !fresh.count(name)) out.insert(std::move(name));
      i = j;
    }
  };
  for_each_dim_param(model, [&](const std::string& text, const onnx::ValueInfoProto&) { identifiers(text, false); });
  // The main graph's inputs are never rewritten: a name there stays the model's, listed or not.
  for (const auto& in : model.graph().input())
    for_each_shape(in.type(), [&](const onnx::TensorShapeProto& shape) {
      for (const auto& d : shape.dim()) identifiers(d.dim_param(), true);
    });
  return out;
}

DimTexts::DimTexts(const onnx::ModelProto& model)
    : ours_(listed_expressions(model)), fresh_(listed_fresh_symbols(model)), taken_(names_taken(model)) {
  // Only the graph's inputs' names are facts (a model's "2*N" there names some size);
  // elsewhere a text like an expression is a declaration, which torch writes for the very
  // expression ("batch*seq") and which annotation keeps only where it agrees with the proof.
  for (const auto& in : model.graph().input())
    for_each_shape(in.type(), [&](const onnx::TensorShapeProto& shape) {
      for (const auto& d : shape.dim())
        if (d.has_dim_param() && !ours_.count(d.dim_param()) && reads_as_expression(d.dim_param()))
          reserved_.insert(d.dim_param());
    });
}

onnx::TypeProto DimTexts::type_of(const Fact& f) {
  return f.type([this](onnx::TensorShapeProto_Dimension& out, const Dim& d) {
    // Each dim decided once: most recur on many values.
    auto [it, fresh] = texts_.try_emplace(d);
    if (fresh) {
      std::string text = d.str();
      if (d.is_symbol()) {
        it->second = std::move(text);
      } else if (!reserved_.count(text)) {
        written_.insert(text);
        it->second = std::move(text);
      }
    }
    if (it->second) out.set_dim_param(*it->second);
  });
}

void DimTexts::record_in(onnx::ModelProto& model) const {
  std::set<std::string> expressions, fresh;
  std::unordered_set<std::string_view> seen;  // each text once: most recur on many values
  for_each_dim_param(model, [&](const std::string& text, const onnx::ValueInfoProto&) {
    if (!seen.insert(text).second) return;
    if (Dim::is_fresh_symbol(text) && !taken_.count(text)) fresh.insert(text);
    if (!written_.count(text) && !ours_.count(text)) return;
    expressions.insert(text);
    // A fresh symbol inside an expression ("floor(dyn__3/2)") is one of ours too: listed,
    // a later run reads the expression as unknown and names the size again, as it does
    // for the symbol alone.
    for (const auto& s : Dim::parse(text).symbols())
      if (Dim::is_fresh_symbol(s) && !taken_.count(s)) fresh.insert(s);
  });
  record_list(model, kDimExpressionsKey, expressions);
  record_list(model, kFreshSymbolsKey, fresh);
}

}  // namespace shapeprop::infer

namespace shapeprop {

std::set<std::string> dim_params_of(const onnx::ModelProto& model) { return declared_dim_params(model); }

std::optional<std::string> foreign_dim_param(const onnx::ModelProto& result, const std::set<std::string>& names) {
  std::set<std::string> known = names;
  for (const auto& in : result.graph().input())
    for_each_shape(in.type(), [&known](const onnx::TensorShapeProto& shape) {
      for (const auto& d : shape.dim())
        if (d.has_dim_param()) known.insert(d.dim_param());
    });
  auto allowed = [&known](std::string_view name) { return known.count(std::string(name)) > 0 || infer::is_minted_name(name); };
  auto well_formed = [&](const std::string& text) {
    if (allowed(text)) return true;
    // An expression of ours parses back to itself; a name outside the lists reads as one
    // symbol (an identifier, or opaque text), which is none of the model's.
    const Dim d = Dim::parse(text);
    if (d.is_unknown() || d.is_constant() || d.is_symbol()) return false;
    return !d.any_symbol([&allowed](std::string_view s) { return !allowed(s); });
  };
  std::optional<std::string> found;
  std::unordered_set<std::string_view> seen;  // each text once: most recur on many values
  for_each_dim_param(result, [&](const std::string& text, const onnx::ValueInfoProto& vi) {
    if (found || !seen.insert(text).second || well_formed(text)) return;
    std::string shown;
    for (unsigned char c : text) {
      if (c >= 0x20 && c < 0x7f && c != '\\') {
        shown += static_cast<char>(c);
      } else {
        char hex[8];
        std::snprintf(hex, sizeof hex, "\\x%02x", c);
        shown += hex;
      }
    }
    found = "the type of '" + vi.name() + "' holds the dim_param \"" + shown +
            "\", which is no dim name of the model, no name shapeprop mints (dyn__N, unk__N) and no expression over them";
  });
  return found;
}

}  // namespace shapeprop
