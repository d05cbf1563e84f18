// Names in ONNX text: which ones print bare, and the quoted-name extension.
#include <cctype>
#include <cstring>

#include "onnx/defs/parser.h"
#include "shapeprop/text.h"
#include "support/type_walk.h"
#include "text_internal.h"

namespace shapeprop {

bool is_identifier(std::string_view name) {
  if (name.empty() || !(std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_')) return false;
  for (char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return true;
}

namespace text_detail {
namespace {

// Identifiers that ONNX's parser reads as something else in some position: type names
// and type keywords where a value-info may start, and nan/inf where an attribute value
// (a subgraph's name) may start.
bool is_reserved(const std::string& name) {
  if (onnx::PrimitiveTypeNameMap::IsTypeName(name)) return true;
  if (name == "seq" || name == "map" || name == "optional" || name == "sparse_tensor") return true;
  size_t alpha = 0;
  while (alpha < name.size() && std::isalpha(static_cast<unsigned char>(name[alpha]))) ++alpha;
  std::string head;
  for (size_t i = 0; i < alpha; ++i) head += static_cast<char>(std::tolower(static_cast<unsigned char>(name[i])));
  return head == "nan" || head == "inf" || head == "infinity";
}

std::string quote(const std::string& name) {
  std::string out = "'";
  for (char c : name) {
    if (c == '\'' || c == '\\') out += '\\';
    out += c;
  }
  return out + "'";
}

}  // namespace

std::string printable_name(const std::string& name) {
  return is_identifier(name) && !is_reserved(name) ? name : quote(name);
}

std::string printable_domain(const std::string& domain) {
  size_t start = 0;
  while (true) {
    size_t dot = domain.find('.', start);
    std::string part = domain.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (!is_identifier(part) || is_reserved(part)) return quote(domain);
    if (dot == std::string::npos) return domain;
    start = dot + 1;
  }
}

namespace {

char previous_significant(const std::string& text) {
  for (auto it = text.rbegin(); it != text.rend(); ++it)
    if (!std::isspace(static_cast<unsigned char>(*it))) return *it;
  return '\0';
}

std::string token_for_name(std::unordered_map<std::string, std::string>& token_for, QuotedNames& names,
                           const std::string& prefix, const std::string& name) {
  auto [it, fresh] = token_for.try_emplace(name, prefix + std::to_string(token_for.size()));
  if (fresh) names.emplace(it->second, name);
  return it->second;
}

std::string empty_token(std::unordered_map<std::string, std::string>& token_for, QuotedNames& names,
                        const std::string& prefix) {
  return token_for_name(token_for, names, prefix, "");
}

}  // namespace

bool rewrite_quoted_names(std::string_view text, std::string& out, QuotedNames& names, size_t& error_offset) {
  // A prefix that the text does not contain, so that no identifier of the text is taken
  // for a quoted name.
  std::string prefix = "_sp_quoted_";
  for (int k = 0; text.find(prefix) != std::string_view::npos; ++k) prefix = "_sp_quoted" + std::to_string(k) + "_";

  out.clear();
  out.reserve(text.size());
  std::unordered_map<std::string, std::string> token_for;  // name -> token, so equal names share one
  size_t i = 0;
  while (i < text.size()) {
    char c = text[i];
    if (c == '#') {  // comment to end of line
      size_t end = text.find('\n', i);
      end = end == std::string_view::npos ? text.size() : end;
      out.append(text.substr(i, end - i));
      i = end;
    } else if (c == '"') {  // string literal, with backslash escapes
      size_t j = i + 1;
      while (j < text.size() && text[j] != '"') j += text[j] == '\\' ? 2 : 1;
      j = std::min(j + 1, text.size());
      out.append(text.substr(i, j - i));
      i = j;
    } else if (c == ',' && previous_significant(out) == '(') {
      // "(, x)": a leading omitted input, as ONNX's own printer writes it (torchlib's
      // Loop nodes); ONNX's parser reads a leading empty name as the end of the list.
      out += empty_token(token_for, names, prefix);
      out += c;
      ++i;
    } else if ((c == ')' || c == '=') && previous_significant(out) == ',') {
      // "(x, )" and "y, = ...": a trailing omitted input or output, as our printer writes
      // it. ONNX's parser read it as an empty name up to 1.17 and reads it as nothing from
      // 1.18 on; the empty token keeps the name under every ONNX.
      out += empty_token(token_for, names, prefix);
      out += c;
      ++i;
    } else if (c == '\'') {
      std::string name;
      size_t j = i + 1;
      while (j < text.size() && text[j] != '\'') {
        if (text[j] == '\\' && j + 1 < text.size()) ++j;
        name += text[j++];
      }
      if (j >= text.size()) {
        error_offset = i;
        return false;
      }
      out += token_for_name(token_for, names, prefix, name);
      i = j + 1;
    } else {
      out += c;
      ++i;
    }
  }
  return true;
}

namespace {

struct Restorer {
  const QuotedNames& names;

  void fix(std::string* s) const {
    auto it = names.find(*s);
    if (it != names.end()) *s = it->second;
  }
  void fix(google::protobuf::RepeatedPtrField<std::string>* list) const {
    for (auto& s : *list) fix(&s);
  }
  void type(onnx::TypeProto* t) const {
    for_each_shape(*t, [&](onnx::TensorShapeProto& shape) {
      for (auto& d : *shape.mutable_dim())
        if (d.has_dim_param()) fix(d.mutable_dim_param());
    });
  }
  void value_infos(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* list) const {
    for (auto& vi : *list) {
      fix(vi.mutable_name());
      if (vi.has_type()) type(vi.mutable_type());
    }
  }
  void attribute(onnx::AttributeProto* a) const {
    fix(a->mutable_name());
    if (a->has_ref_attr_name()) fix(a->mutable_ref_attr_name());
    if (a->has_t()) fix(a->mutable_t()->mutable_name());
    if (a->has_tp()) type(a->mutable_tp());
    if (a->has_g()) graph(a->mutable_g());
    for (auto& g : *a->mutable_graphs()) graph(&g);
  }
  void nodes(google::protobuf::RepeatedPtrField<onnx::NodeProto>* list) const {
    for (auto& n : *list) {
      fix(n.mutable_input());
      fix(n.mutable_output());
      fix(n.mutable_op_type());
      fix(n.mutable_domain());
      if (n.has_overload()) fix(n.mutable_overload());
      for (auto& a : *n.mutable_attribute()) attribute(&a);
    }
  }
  void graph(onnx::GraphProto* g) const {
    fix(g->mutable_name());
    value_infos(g->mutable_input());
    value_infos(g->mutable_output());
    value_infos(g->mutable_value_info());
    for (auto& t : *g->mutable_initializer()) fix(t.mutable_name());
    nodes(g->mutable_node());
  }
  void function(onnx::FunctionProto* f) const {
    fix(f->mutable_name());
    fix(f->mutable_input());
    fix(f->mutable_output());
    fix(f->mutable_attribute());
    for (auto& a : *f->mutable_attribute_proto()) attribute(&a);
    value_infos(f->mutable_value_info());
    nodes(f->mutable_node());
  }
};

}  // namespace

void restore_quoted_names(onnx::ModelProto& model, const QuotedNames& names) {
  if (names.empty()) return;
  Restorer r{names};
  if (model.has_graph()) r.graph(model.mutable_graph());
  for (auto& f : *model.mutable_functions()) r.function(&f);
}

void restore_quoted_names(onnx::FunctionProto& function, const QuotedNames& names) {
  if (!names.empty()) Restorer{names}.function(&function);
}

bool printable_type(const onnx::TypeProto& type) {
  auto named = [](int32_t elem_type) {
    return onnx::PrimitiveTypeNameMap::IsTypeName(onnx::PrimitiveTypeNameMap::ToString(elem_type));
  };
  // A type nests as a chain (a map's key is an element type), so a loop walks it.
  for (const onnx::TypeProto* t = &type;;) {
    switch (t->value_case()) {
      case onnx::TypeProto::kTensorType: return named(t->tensor_type().elem_type());
      case onnx::TypeProto::kSparseTensorType: return named(t->sparse_tensor_type().elem_type());
      case onnx::TypeProto::kSequenceType: t = &t->sequence_type().elem_type(); break;
      case onnx::TypeProto::kOptionalType: t = &t->optional_type().elem_type(); break;
      case onnx::TypeProto::kMapType:
        if (!named(t->map_type().key_type())) return false;
        t = &t->map_type().value_type();
        break;
      default: return false;
    }
  }
}

}  // namespace text_detail
}  // namespace shapeprop
