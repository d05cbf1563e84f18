// What ONNX text can hold of a model, and the print -> parse round-trip check.
#include <cstring>

#ifndef ONNX_USE_LITE_PROTO
#include <google/protobuf/util/field_comparator.h>
#include <google/protobuf/util/message_differencer.h>
#endif

#include "shapeprop/io.h"
#include "shapeprop/text.h"
#include "support/tensor_data.h"
#include "support/type_walk.h"
#include "text_internal.h"

namespace shapeprop {
namespace text_detail {
namespace {

struct Projector {
  void tensor(onnx::TensorProto* t) const {
    if (t->has_raw_data()) *t = shapeprop::typed_tensor(*t);
    t->clear_doc_string();
    t->clear_segment();
    t->clear_metadata_props();
    if (t->data_location() != onnx::TensorProto::EXTERNAL) t->clear_data_location();
  }
  void type(onnx::TypeProto* t) const {
    t->clear_denotation();
    for_each_shape(*t, [](onnx::TensorShapeProto& shape) {
      for (auto& d : *shape.mutable_dim()) d.clear_denotation();
    });
  }
  void value_infos(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* list) const {
    for (auto& vi : *list) {
      vi.clear_doc_string();
      vi.clear_metadata_props();
      if (vi.has_type() && !printable_type(vi.type())) vi.clear_type();  // also: no type at all
      if (vi.has_type()) type(vi.mutable_type());
    }
  }
  void attribute(onnx::AttributeProto* a) const {
    a->clear_doc_string();
    if (a->has_ref_attr_name()) {  // a reference holds no value; text has no place for one
      const auto name = a->name();
      const auto ref = a->ref_attr_name();
      const auto type = a->type();
      a->Clear();
      a->set_name(name);
      a->set_ref_attr_name(ref);
      a->set_type(type);
      return;
    }
    keep_only_typed_value(a);
    if (a->has_t()) tensor(a->mutable_t());
    for (auto& t : *a->mutable_tensors()) tensor(&t);
    if (a->has_tp()) type(a->mutable_tp());
    for (auto& t : *a->mutable_type_protos()) type(&t);
    if (a->has_g()) graph(a->mutable_g());
    for (auto& g : *a->mutable_graphs()) graph(&g);
  }
  // Text holds the one value field the attribute's type names. (ONNX's own parser sets
  // both .i and .f for "x: float = 1"; torchlib's function defaults carry that.)
  static void keep_only_typed_value(onnx::AttributeProto* a) {
    using A = onnx::AttributeProto;
    if (a->type() == A::UNDEFINED) return;
    if (a->type() != A::INT) a->clear_i();
    if (a->type() != A::FLOAT) a->clear_f();
    if (a->type() != A::STRING) a->clear_s();
    if (a->type() != A::TENSOR) a->clear_t();
    if (a->type() != A::GRAPH) a->clear_g();
    if (a->type() != A::TYPE_PROTO) a->clear_tp();
    if (a->type() != A::SPARSE_TENSOR) a->clear_sparse_tensor();
    if (a->type() != A::INTS) a->clear_ints();
    if (a->type() != A::FLOATS) a->clear_floats();
    if (a->type() != A::STRINGS) a->clear_strings();
    if (a->type() != A::TENSORS) a->clear_tensors();
    if (a->type() != A::GRAPHS) a->clear_graphs();
    if (a->type() != A::TYPE_PROTOS) a->clear_type_protos();
    if (a->type() != A::SPARSE_TENSORS) a->clear_sparse_tensors();
  }

  void nodes(google::protobuf::RepeatedPtrField<onnx::NodeProto>* list) const {
    for (auto& n : *list) {
      n.clear_name();
      n.clear_doc_string();
      n.clear_metadata_props();
      for (auto& a : *n.mutable_attribute()) attribute(&a);
    }
  }
  void graph(onnx::GraphProto* g) const {
    g->clear_doc_string();
    g->clear_metadata_props();
    g->clear_quantization_annotation();
    g->clear_sparse_initializer();
    value_infos(g->mutable_input());
    value_infos(g->mutable_output());
    value_infos(g->mutable_value_info());
    for (auto& t : *g->mutable_initializer()) tensor(&t);
    nodes(g->mutable_node());
  }
  void function(onnx::FunctionProto* f) const {
    f->clear_metadata_props();
    for (auto& a : *f->mutable_attribute_proto()) attribute(&a);
    value_infos(f->mutable_value_info());
    nodes(f->mutable_node());
  }
};

}  // namespace
}  // namespace text_detail

onnx::ModelProto text_projection(const onnx::ModelProto& model) {
  onnx::ModelProto out = model;
  text_detail::Projector p;
  out.clear_training_info();
  if (out.has_graph()) p.graph(out.mutable_graph());
  for (auto& f : *out.mutable_functions()) p.function(&f);
  return out;
}

Status verify_text_roundtrip(const onnx::ModelProto& model, const Limits& limits) {
  const std::string text = print_model(model);
  auto reparsed = parse_model_text(text, "<printed model>", limits);
  if (!reparsed) return Diagnostic::error("printed text does not parse back: " + reparsed.error().str());
#ifndef ONNX_USE_LITE_PROTO
  google::protobuf::util::DefaultFieldComparator comparator;
  comparator.set_treat_nan_as_equal(true);
  google::protobuf::util::MessageDifferencer differ;
  differ.set_field_comparator(&comparator);
  // Presence is not text's business: an unset field equals one set to its default.
  differ.set_message_field_comparison(google::protobuf::util::MessageDifferencer::EQUIVALENT);
  std::string report;
  differ.ReportDifferencesToString(&report);
  if (differ.Compare(text_projection(model), *reparsed)) return Ok{};
  if (auto nl = report.find('\n'); nl != std::string::npos) report.resize(nl);
  return Diagnostic::error("printing and re-parsing changes the model: " + report);
#else
  // Protobuf-lite has no MessageDifferencer (nor any reflection): the model parsed back
  // must print as the text it was parsed from. That sees every change of what the printer
  // writes, though not a field the printer leaves out, which the full build's comparison
  // with text_projection finds.
  const std::string again = print_model(*reparsed);
  if (again == text) return Ok{};
  size_t line = 1, at = 0;
  while (at < text.size() && at < again.size() && text[at] == again[at]) line += text[at++] == '\n';
  auto line_at = [](const std::string& s, size_t pos) {
    const size_t begin = s.rfind('\n', pos == 0 ? 0 : pos - 1);
    const size_t from = begin == std::string::npos || pos == 0 ? 0 : begin + 1;
    return s.substr(from, s.find('\n', from) - from);
  };
  return Diagnostic::error("printing and re-parsing changes the model: line " + std::to_string(line) + " '" +
                           line_at(text, at) + "' prints as '" + line_at(again, at) + "'");
#endif
}

}  // namespace shapeprop
