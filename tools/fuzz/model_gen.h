// A structure-aware model generator for the fuzz targets: the fuzzer's bytes choose a
// model in ONNX text the way torchlib's exporter writes them, so that most inputs are
// valid models that reach deep into inference, folding and inlining.
//
// From the bytes: the main graph's inputs (float tensors of rank 0-4, dims constant or
// symbolic); up to 6 model-local functions with a random call graph (F_i calls only F_j,
// j > i, so no recursion) and attributes with and without defaults, used through
// references (@alpha, @perm); and bodies built from statements such as rank conditionals
// (If on Size(Shape(x)) == r), CastLike, Reshape and Expand to shape values, Transpose,
// Unsqueeze, calls, Loop and Scan, splits into sequences (SplitToSequence of a tensor
// concatenated with itself, whose first dim is then an expression, and back), with subgraphs nested a few levels deep.
//
// Asked for what current ONNX writes, the bytes also choose an IR version of 10 to 13, a
// default-domain opset of 18 to 26, inputs of the element types added since (float8,
// int4, float4e2m1, float8e8m0, int2 and uint2; each cast to float at once) and the ops
// new in opsets 23 to 26 (Attention, RMSNormalization, RotaryEmbedding, Swish,
// TensorScatter, CumProd, BitCast). A linked
// ONNX older than what the model asks for must refuse it cleanly (readable_by_linked_onnx).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "byte_reader.h"

namespace shapeprop::fuzz {

struct GeneratedModel {
  std::string text;
  int64_t ir_version = 10;
  int64_t opset = 18;                      // of the default domain
  std::vector<std::string> element_types;  // of the graph's inputs, as ONNX text names them
};

GeneratedModel generate(ByteReader& in, bool current_onnx);

// A model as ONNX 1.17 reads it (IR 10, opset 18, float inputs).
inline std::string generate_model(ByteReader& in) { return generate(in, /*current_onnx=*/false).text; }

// Whether the ONNX shapeprop is built on knows the model's IR version, opset and element
// types.
bool readable_by_linked_onnx(const GeneratedModel& model);

}  // namespace shapeprop::fuzz
