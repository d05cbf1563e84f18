// A structure-aware model generator for the fuzz targets: the fuzzer's bytes choose a
// model in ONNX text the way torchlib's exporter writes them, so that most inputs are
// valid models that reach deep into inference, folding and inlining.
//
// From the bytes: the main graph's inputs (float tensors of rank 0-4, dims constant or
// symbolic); up to 6 model-local functions with a random call graph (F_i calls only F_j,
// j > i, so no recursion) and attributes with and without defaults, used through
// references (@alpha, @perm); and bodies built from statements such as rank conditionals
// (If on Size(Shape(x)) == r), CastLike, Reshape and Expand to shape values, Transpose,
// Unsqueeze, calls, Loop and Scan, with subgraphs nested a few levels deep.
#pragma once

#include <string>

#include "byte_reader.h"

namespace shapeprop::fuzz {

std::string generate_model(ByteReader& in);

}  // namespace shapeprop::fuzz
