// Inlining model-local functions into the main graph (and into the functions that stay).
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "onnx/onnx_pb.h"

namespace shapeprop::transform {

// Inlines every call of the functions selected by (domain, name), as ONNX 1.17's
// onnx::inliner::InlineSelectedFunctions does, with the same names for what it creates:
// each inlined call numbered in order ("__1", "__2", ...: call sites first to last, a
// call inside an inlined body right after the body is renamed), a callee's values
// renamed value + suffix and made unique against every name of the graph with "_K",
// formal inputs and outputs bound to the call's actual names, attribute references bound
// to the call's attributes. The selected functions are removed. ONNX's own inliner
// copies each callee twice and each other node once; this moves the nodes that stay and
// copies each inlined node once. One difference: a function output that is one of its
// inputs (`Id (x) => (x) {}`) becomes an Identity from the call's input to its output,
// where ONNX's inliner leaves the output undefined. Throws std::runtime_error where ONNX's
// does (functions that need different versions of one opset). `spent_calls`, if given,
// takes the call nodes inlined instead of their being destroyed (a caller that keeps what
// it is done with until exit saves their destruction).
void inline_selected_functions(onnx::ModelProto& model, const std::vector<std::pair<std::string, std::string>>& selected,
                               std::vector<std::unique_ptr<onnx::NodeProto>>* spent_calls = nullptr);

}  // namespace shapeprop::transform
