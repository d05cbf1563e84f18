// What an analysis tells beyond its counts, for InferResult and TransformResult (and so
// for the report): the reached functions with their contexts, and the decisions that
// relied on symbolic dims being at least 1, which the model then records.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "infer/analyzer.h"
#include "infer/dim_texts.h"
#include "onnx/onnx_pb.h"
#include "shapeprop/infer.h"

namespace shapeprop::infer {

// Each live function with its contexts in first-use order (call sites counted per
// context: the call nodes whose walk calls it), in the analysis's bottom-up order.
std::vector<FunctionContexts> describe_contexts(const Analyzer& analysis);

// Every input and node output of the main graph, of each live function context and of the
// subgraphs their walks entered, with the type the analysis proved there, spelled as
// `texts` writes types: the main graph first, then the functions callers first, each
// body's subgraphs after it.
std::vector<ValueShape> describe_shapes(const Analyzer& analysis, DimTexts& texts);

// Adds the uses in `more` whose place `into` does not hold yet.
void merge_assumptions(std::vector<AssumptionUse>& into, const std::vector<AssumptionUse>& more);

// Writes the model's metadata_props entry kAssumptionsKey: kPositiveDimsAssumption when
// `uses` is not empty, each condition a use needs (AssumptionUse::condition), each range
// (range_assumption) the analysis took, and the items
// `trusted` (kDeclaredTypesAssumption, kInitializerValuesAssumption) as given; an entry
// already there keeps its value, with what it lacks added, so that a second run changes
// nothing.
void record_assumptions(onnx::ModelProto& model, const std::vector<AssumptionUse>& uses,
                        const std::map<std::string, DimRange>& ranges, const std::vector<std::string>& trusted = {});

// The items of the entry for what `result` took on trust: kDeclaredTypesAssumption when it
// used a declaration, kInitializerValuesAssumption when it read an initializer input's value.
std::vector<std::string> trusted_items(const InferResult& result);

}  // namespace shapeprop::infer
