// The text printer. Where it falls short of ONNX 1.17's own printer (onnx/defs/printer.cc)
// it is written anew here: ONNX's printer drops FunctionProto.value_info, function
// attribute defaults and doc strings, prints floats with 6 digits, prints raw_data of most
// element types as "...", and prints names that its parser cannot read back. The tokens
// (type names, attribute types, keywords) are ONNX's own tables from onnx/defs/parser.h.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <ostream>
#include <sstream>

#include "onnx/defs/parser.h"
#include "shapeprop/text.h"
#include "support/tensor_data.h"
#include "text_internal.h"

namespace shapeprop {
namespace {

using onnx::AttributeProto;
using onnx::TensorProto;

class Printer {
 public:
  explicit Printer(std::ostream& os) : os_(os) {}

  void model(const onnx::ModelProto& m) {
    header_begin();
    if (m.has_ir_version()) key("ir_version") << m.ir_version();
    if (m.opset_import_size() > 0) {
      key("opset_import");
      opsets(m.opset_import());
    }
    if (m.has_producer_name()) quoted(key("producer_name"), m.producer_name());
    if (m.has_producer_version()) quoted(key("producer_version"), m.producer_version());
    if (m.has_domain()) quoted(key("domain"), m.domain());
    if (m.has_model_version()) key("model_version") << m.model_version();
    if (m.has_doc_string()) quoted(key("doc_string"), m.doc_string());
    if (m.metadata_props_size() > 0) {
      key("metadata_props");
      bracketed(m.metadata_props(), [&](const onnx::StringStringEntryProto& kv) {
        quoted(os_, kv.key()) << ": ";
        quoted(os_, kv.value());
      });
    }
    header_end();
    graph(m.graph());
    for (const auto& f : m.functions()) {
      os_ << '\n';
      function(f);
    }
  }

  void function(const onnx::FunctionProto& f) {
    header_begin();
    quoted(key("domain"), f.domain());
    if (f.has_overload()) quoted(key("overload"), f.overload());
    key("opset_import");
    opsets(f.opset_import());
    if (f.has_doc_string()) quoted(key("doc_string"), f.doc_string());
    header_end();
    name(f.name());
    if (f.attribute_size() + f.attribute_proto_size() > 0) {
      os_ << " <";
      const char* sep = "";
      for (const auto& a : f.attribute()) {
        os_ << sep;
        name(a);
        sep = ", ";
      }
      for (const auto& a : f.attribute_proto()) {
        os_ << sep;
        attribute(a);
        sep = ", ";
      }
      os_ << '>';
    }
    os_ << ' ';
    names("(", f.input(), ")");
    os_ << " => ";
    names("(", f.output(), ")");
    os_ << '\n';
    if (f.value_info_size() > 0) {
      joined("<", ", ", ">", f.value_info(), [&](const onnx::ValueInfoProto& vi) { value_info(vi); });
      os_ << '\n';
    }
    nodes(f.node());
    os_ << '\n';
  }

  void graph(const onnx::GraphProto& g) {
    name(g.name());
    os_ << ' ';
    value_infos(g.input());
    os_ << " => ";
    value_infos(g.output());
    if (g.initializer_size() + g.value_info_size() > 0) {
      os_ << '\n';
      indent();
      os_ << '<';
      const char* sep = "";
      for (const auto& t : g.initializer()) {
        os_ << sep;
        tensor(t, /*as_initializer=*/true);
        sep = ", ";
      }
      for (const auto& vi : g.value_info()) {
        os_ << sep;
        value_info(vi);
        sep = ", ";
      }
      os_ << ">\n";
    } else {
      os_ << ' ';
    }
    nodes(g.node());
  }

 private:
  std::ostream& os_;
  int depth_ = 1;  // nesting of node lists; 3 spaces per level, as ONNX's printer does
  bool first_key_ = true;

  void indent() { os_ << std::string(static_cast<size_t>(3 * depth_), ' '); }

  void header_begin() {
    os_ << "<\n";
    first_key_ = true;
  }
  void header_end() { os_ << "\n>\n"; }
  std::ostream& key(const char* k) {
    if (!first_key_) os_ << ",\n";
    first_key_ = false;
    return os_ << "   " << k << ": ";
  }

  std::ostream& quoted(std::ostream& os, const std::string& s) {
    os << '"';
    for (char c : s) {
      if (c == '\\' || c == '"') os << '\\';
      os << c;
    }
    return os << '"';
  }

  void name(const std::string& n) { os_ << text_detail::printable_name(n); }

  template <class List>
  void names(const char* open, const List& list, const char* close) {
    os_ << open;
    for (int i = 0; i < list.size(); ++i) {
      if (i > 0) os_ << ", ";
      // ONNX's parser reads a leading empty name as "no names at all"; quote it.
      if (list.Get(i).empty() && i > 0) continue;
      name(list.Get(i));
    }
    os_ << close;
  }

  void opsets(const google::protobuf::RepeatedPtrField<onnx::OperatorSetIdProto>& list) {
    bracketed(list, [&](const onnx::OperatorSetIdProto& o) { quoted(os_, o.domain()) << " : " << o.version(); });
  }

  void dim(const onnx::TensorShapeProto_Dimension& d) {
    if (d.has_dim_value())
      os_ << d.dim_value();
    else if (d.has_dim_param())
      name(d.dim_param());
    else
      os_ << '?';
  }

  // Grammar (ONNX): "float" is a scalar, "float[]" a tensor of unknown rank.
  void shape_suffix(bool has_shape, const onnx::TensorShapeProto& shape) {
    if (!has_shape) {
      os_ << "[]";
      return;
    }
    if (shape.dim_size() == 0) return;
    os_ << '[';
    for (int i = 0; i < shape.dim_size(); ++i) {
      if (i > 0) os_ << ',';
      dim(shape.dim(i));
    }
    os_ << ']';
  }

  void elem_type(int32_t t) { os_ << onnx::PrimitiveTypeNameMap::ToString(t); }

  void type(const onnx::TypeProto& t) {
    switch (t.value_case()) {
      case onnx::TypeProto::kTensorType:
        elem_type(t.tensor_type().elem_type());
        shape_suffix(t.tensor_type().has_shape(), t.tensor_type().shape());
        break;
      case onnx::TypeProto::kSequenceType:
        os_ << "seq(";
        type(t.sequence_type().elem_type());
        os_ << ')';
        break;
      case onnx::TypeProto::kMapType:
        os_ << "map(";
        elem_type(t.map_type().key_type());
        os_ << ", ";
        type(t.map_type().value_type());
        os_ << ')';
        break;
      case onnx::TypeProto::kOptionalType:
        os_ << "optional(";
        type(t.optional_type().elem_type());
        os_ << ')';
        break;
      case onnx::TypeProto::kSparseTensorType:
        os_ << "sparse_tensor(";
        elem_type(t.sparse_tensor_type().elem_type());
        shape_suffix(t.sparse_tensor_type().has_shape(), t.sparse_tensor_type().shape());
        os_ << ')';
        break;
      default:
        break;
    }
  }

  void value_info(const onnx::ValueInfoProto& vi) {
    if (vi.has_type() && text_detail::printable_type(vi.type())) {
      type(vi.type());
      os_ << ' ';
    }
    name(vi.name());
  }

  void value_infos(const google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>& list) {
    joined("(", ", ", ")", list, [&](const onnx::ValueInfoProto& vi) { value_info(vi); });
  }

  // Floats with enough digits to read back the same value; ONNX's literal syntax has
  // nan, inf and -inf. `digits` is 9 for a float, 17 for a double.
  void number(double v, int digits) {
    if (std::isnan(v)) {
      os_ << "nan";
    } else if (std::isinf(v)) {
      os_ << (v < 0 ? "-inf" : "inf");
    } else {
      // A subnormal value is written out exactly (up to ~110 digits for a float, ~770 for
      // a double): ONNX's parser reads literals with std::stof/stod, which throw
      // out_of_range on a subnormal result that is not exact.
      const bool is_float = digits <= 9;
      const bool subnormal = (is_float ? std::fpclassify(static_cast<float>(v)) : std::fpclassify(v)) == FP_SUBNORMAL;
      char buf[1100];
      std::snprintf(buf, sizeof buf, "%.*g", subnormal ? (is_float ? 120 : 800) : digits, v);
      os_ << buf;
      // "1" would read back as an integer literal, which ONNX's parser stores in both
      // AttributeProto.i and .f; "1.0" is a float literal.
      if (std::strpbrk(buf, ".e") == nullptr) os_ << ".0";
    }
  }

  template <class List, class Fn>
  void list(const List& items, Fn&& each) {
    joined("{", ",", "}", items, each);
  }

  template <class List, class Fn>
  void bracketed(const List& items, Fn&& each) {
    joined("[", ", ", "]", items, each);
  }

  template <class List, class Fn>
  void joined(const char* open, const char* separator, const char* close, const List& items, Fn&& each) {
    os_ << open;
    const char* sep = "";
    for (const auto& x : items) {
      os_ << sep;
      each(x);
      sep = separator;
    }
    os_ << close;
  }

  void tensor(const TensorProto& t, bool as_initializer) {
    elem_type(t.data_type());
    if (t.dims_size() > 0) {
      os_ << '[';
      for (int i = 0; i < t.dims_size(); ++i) os_ << (i ? "," : "") << t.dims(i);
      os_ << ']';
    }
    if (!t.name().empty()) {
      os_ << ' ';
      name(t.name());
    }
    os_ << (as_initializer ? " = " : " ");
    if (t.data_location() == TensorProto::EXTERNAL) {
      os_ << '[';
      const char* sep = "";
      for (const auto& kv : t.external_data()) {
        quoted(os_ << sep, kv.key()) << ": ";
        quoted(os_, kv.value());
        sep = ", ";
      }
      os_ << ']';
      return;
    }
    // Raw data is printed through the typed form ONNX's parser produces.
    const TensorProto typed = t.has_raw_data() ? typed_tensor(t) : TensorProto();
    const TensorProto& d = t.has_raw_data() ? typed : t;
    switch (d.data_type()) {
      case TensorProto::INT64: list(d.int64_data(), [&](int64_t v) { os_ << v; }); break;
      case TensorProto::UINT32:
      case TensorProto::UINT64: list(d.uint64_data(), [&](uint64_t v) { os_ << v; }); break;
      case TensorProto::FLOAT:
      case TensorProto::COMPLEX64: list(d.float_data(), [&](float v) { number(v, 9); }); break;
      case TensorProto::DOUBLE:
      case TensorProto::COMPLEX128: list(d.double_data(), [&](double v) { number(v, 17); }); break;
      case TensorProto::STRING:
        list(d.string_data(), [&](const std::string& s) { quoted(os_, s); });
        break;
      default:  // int32_data holds every other type, float16 and friends as bit patterns
        list(d.int32_data(), [&](int32_t v) { os_ << v; });
        break;
    }
  }

  void attribute_value(const AttributeProto& a) {
    switch (a.type()) {
      case AttributeProto::INT: os_ << a.i(); break;
      case AttributeProto::FLOAT: number(a.f(), 9); break;
      case AttributeProto::STRING: quoted(os_, a.s()); break;
      case AttributeProto::TENSOR: tensor(a.t(), false); break;
      case AttributeProto::GRAPH: subgraph(a.g()); break;
      case AttributeProto::TYPE_PROTO: type(a.tp()); break;
      case AttributeProto::INTS:
        bracketed(a.ints(), [&](int64_t v) { os_ << v; });
        break;
      case AttributeProto::FLOATS:
        bracketed(a.floats(), [&](float v) { number(v, 9); });
        break;
      case AttributeProto::STRINGS:
        bracketed(a.strings(), [&](const std::string& s) { quoted(os_, s); });
        break;
      case AttributeProto::TENSORS:
        bracketed(a.tensors(), [&](const TensorProto& t) { tensor(t, false); });
        break;
      case AttributeProto::GRAPHS:
        bracketed(a.graphs(), [&](const onnx::GraphProto& g) { subgraph(g); });
        break;
      case AttributeProto::TYPE_PROTOS:
        bracketed(a.type_protos(), [&](const onnx::TypeProto& t) { type(t); });
        break;
      default: break;
    }
  }


  void attribute(const AttributeProto& a) {
    name(a.name());
    // A reference may leave its type out (`alpha = @alpha`), as the parser allows; a
    // printed "undefined" would not parse back.
    if (a.type() != AttributeProto::UNDEFINED) os_ << ": " << onnx::AttributeTypeNameMap::ToString(a.type());
    os_ << " = ";
    if (a.has_ref_attr_name()) {
      os_ << '@';
      name(a.ref_attr_name());
      return;
    }
    attribute_value(a);
  }

  void subgraph(const onnx::GraphProto& g) {
    ++depth_;
    graph(g);
    --depth_;
  }

  void attributes(const google::protobuf::RepeatedPtrField<AttributeProto>& attrs) {
    joined(" <", ", ", ">", attrs, [&](const AttributeProto& a) { attribute(a); });
  }

  void node(const onnx::NodeProto& n) {
    indent();
    for (int i = 0; i < n.output_size(); ++i) {
      if (i > 0) os_ << ", ";
      if (n.output(i).empty() && i > 0) continue;
      name(n.output(i));
    }
    os_ << " = ";
    if (!n.domain().empty()) os_ << text_detail::printable_domain(n.domain()) << '.';
    name(n.op_type());
    if (!n.overload().empty()) {
      os_ << ':';
      name(n.overload());
    }
    bool has_subgraph = false;
    for (const auto& a : n.attribute()) has_subgraph |= a.has_g() || a.graphs_size() > 0;
    // Like ONNX's printer: attributes after the inputs when they hold subgraphs.
    if (!has_subgraph && n.attribute_size() > 0) attributes(n.attribute());
    os_ << ' ';
    names("(", n.input(), ")");
    if (has_subgraph) attributes(n.attribute());
    os_ << '\n';
  }

  void nodes(const google::protobuf::RepeatedPtrField<onnx::NodeProto>& list) {
    os_ << "{\n";
    for (const auto& n : list) node(n);
    if (depth_ > 1) indent_outer();
    os_ << '}';
  }

  void indent_outer() { os_ << std::string(static_cast<size_t>(3 * (depth_ - 1)), ' '); }
};

}  // namespace

void print_model(std::ostream& os, const onnx::ModelProto& model) {
  Printer(os).model(model);
  os << '\n';
}

std::string print_model(const onnx::ModelProto& model) {
  std::ostringstream os;
  print_model(os, model);
  return os.str();
}

std::string print_function(const onnx::FunctionProto& function) {
  std::ostringstream os;
  Printer(os).function(function);
  return os.str();
}

std::string print_graph(const onnx::GraphProto& graph) {
  std::ostringstream os;
  Printer(os).graph(graph);
  return os.str();
}

}  // namespace shapeprop
