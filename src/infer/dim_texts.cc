#include "infer/dim_texts.h"

#include <sstream>

#include "support/subgraphs.h"
#include "support/type_walk.h"

namespace shapeprop::infer {

namespace {

// Every dim_param of every type the model declares: graph inputs, outputs and value_info
// (subgraphs too) and function value_info.
template <class Visit>
void for_each_dim_param(const onnx::ModelProto& model, Visit&& visit) {
  auto of_type = [&](const onnx::TypeProto& t) {
    for_each_shape(t, [&](const onnx::TensorShapeProto& shape) {
      for (const auto& d : shape.dim())
        if (d.has_dim_param()) visit(d.dim_param());
    });
  };
  std::vector<const onnx::GraphProto*> graphs{&model.graph()};
  auto subgraphs_of = [&graphs](const google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes) {
    for (const auto& n : nodes) for_each_subgraph(n, [&graphs](const onnx::GraphProto& g) { graphs.push_back(&g); });
  };
  for (const auto& f : model.functions()) {
    for (const auto& vi : f.value_info()) of_type(vi.type());
    subgraphs_of(f.node());
  }
  while (!graphs.empty()) {
    const onnx::GraphProto* g = graphs.back();
    graphs.pop_back();
    for (const auto& vi : g->input()) of_type(vi.type());
    for (const auto& vi : g->output()) of_type(vi.type());
    for (const auto& vi : g->value_info()) of_type(vi.type());
    subgraphs_of(g->node());
  }
}

// Text an expression of ours would print as (str()'s grammar, not a lone symbol).
bool reads_as_expression(const std::string& text) {
  const Dim d = Dim::parse(text);
  return !d.is_unknown() && !d.is_constant() && !d.is_symbol();
}

}  // namespace

std::set<std::string> listed_expressions(const onnx::ModelProto& model) {
  std::set<std::string> out;
  for (const auto& kv : model.metadata_props()) {
    if (kv.key() != kDimExpressionsKey) continue;
    std::stringstream list(kv.value());
    for (std::string text; std::getline(list, text, ',');)
      if (reads_as_expression(text)) out.insert(text);
  }
  return out;
}

DimTexts::DimTexts(const onnx::ModelProto& model) : ours_(listed_expressions(model)) {
  for_each_dim_param(model, [&](const std::string& text) {
    if (!ours_.count(text) && reads_as_expression(text)) reserved_.insert(text);
  });
}

onnx::TypeProto DimTexts::type_of(const Fact& f) {
  onnx::TypeProto t = f.type();
  if (!f.shape || !t.has_tensor_type()) return t;
  auto* shape = t.mutable_tensor_type()->mutable_shape();
  for (int k = 0; k < shape->dim_size(); ++k) {
    const Dim& d = (*f.shape)[static_cast<size_t>(k)];
    if (d.is_unknown() || d.is_constant() || d.is_symbol()) continue;
    const std::string& text = shape->dim(k).dim_param();
    if (reserved_.count(text))
      shape->mutable_dim(k)->clear_dim_param();
    else
      written_.insert(text);
  }
  return t;
}

void DimTexts::record_in(onnx::ModelProto& model) const {
  std::set<std::string> present;
  for_each_dim_param(model, [&](const std::string& text) {
    if (written_.count(text) || ours_.count(text)) present.insert(text);
  });
  auto* props = model.mutable_metadata_props();
  props->erase(std::remove_if(props->begin(), props->end(),
                              [](const onnx::StringStringEntryProto& kv) { return kv.key() == kDimExpressionsKey; }),
               props->end());
  if (present.empty()) return;
  std::string list;
  for (const auto& text : present) list += (list.empty() ? "" : ",") + text;
  auto* entry = props->Add();
  entry->set_key(kDimExpressionsKey);
  entry->set_value(list);
}

}  // namespace shapeprop::infer
