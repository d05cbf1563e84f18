// Writing inferred facts into the model (see annotate.cc).
#pragma once

#include <string>

#include "analyzer.h"
#include "dim_texts.h"

namespace shapeprop::infer {

// value_info of the main graph and its subgraphs; returns the number of entries written.
// `dropped` gets the declared dim_params no written type keeps (see annotate.cc).
size_t annotate_graph(onnx::ModelProto& model, const Analyzer& analysis, DimTexts& texts,
                      std::vector<DroppedDimParam>& dropped);

// FunctionProto.value_info of every reached function; returns the number of entries
// written. Appends to `debug` (when given) the values left without an entry and why.
size_t annotate_functions(onnx::ModelProto& model, const Analyzer& analysis, DimTexts& texts, std::string* debug);

// Everything infer_shapes does once `analysis` (of `model`) has run, but for taking its
// diagnostics: counts, and annotates the graph and the functions.
InferResult annotate_model(onnx::ModelProto& model, const Analyzer& analysis, const InferOptions& options);

}  // namespace shapeprop::infer
