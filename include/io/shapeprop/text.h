// ONNX text syntax, printed without omissions.
//
// ONNX 1.17's printer drops FunctionProto.value_info, function attribute defaults and
// doc strings, prints floats with 6 significant digits and raw_data of most types as
// "...", and cannot print names that are not identifiers ("onnx::Add_3", "input.1").
// shapeprop's printer writes everything ONNX's text syntax can hold so that text written
// by us parses back to the same proto; `text_projection` says exactly what the syntax has
// no place for.
//
// One extension to the syntax: a name that is not an identifier is written in single
// quotes ('onnx::Add_3', '' for an empty name), with \' and \\ escaped. The parser in
// this library accepts it (it rewrites such names before ONNX's parser sees them). It
// also reads omitted inputs and outputs the same under every ONNX: a leading one
// ("Loop (, cond)", as ONNX's printer writes it) and a trailing one ("Clip (x, lo, )",
// "y, = ..."), which ONNX's parser reads as an empty name up to 1.17 and drops from 1.18.
#pragma once

#include <iosfwd>
#include <string>

#include "onnx/onnx_pb.h"
#include "shapeprop/diagnostics.h"
#include "shapeprop/limits.h"

namespace shapeprop {

std::string print_model(const onnx::ModelProto& model);
void print_model(std::ostream& os, const onnx::ModelProto& model);
std::string print_function(const onnx::FunctionProto& function);
std::string print_graph(const onnx::GraphProto& graph);

// The model as text can hold it: node names, doc strings of nodes, graphs and values,
// denotations, metadata of graphs, nodes and functions, training info, quantization
// annotations and sparse initializers are dropped; tensors hold their data in the typed
// fields (raw_data decoded), as ONNX's parser writes them.
onnx::ModelProto text_projection(const onnx::ModelProto& model);

// Prints the model, parses the text back (within `limits`, as the model was read) and
// compares with text_projection(model). The error names the first field that differs.
Status verify_text_roundtrip(const onnx::ModelProto& model, const Limits& limits = {});

// True when `name` can be printed bare (an ONNX identifier: [A-Za-z_][A-Za-z0-9_]*).
bool is_identifier(std::string_view name);

}  // namespace shapeprop
