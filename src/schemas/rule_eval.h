// Applies a rule to one node: pure functions on Facts.
//
// Layouts are tried in order. A layout is ruled out when a known fact contradicts it (an
// input present where it must be absent, a rank, an element type, a guard, two inputs
// that disagree on a dim they share); it applies when every fact it depends on is known;
// otherwise (a rank or attribute it needs is unknown) no layout is chosen and the outputs
// stay unknown: a later layout that fits is only chosen once every earlier one is ruled
// out, since the node may be in the earlier layout at run time.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "onnx/onnx_pb.h"
#include "schemas/rule.h"
#include "shapeprop/fact.h"

namespace shapeprop::schemas {

// Evaluates a shape function for its input facts (in the function's input order; nullptr
// for an absent input) and attribute values: the facts of its outputs.
using ShapeFunctionEvaluator = std::function<std::vector<Fact>(
    const onnx::FunctionProto& function, const std::vector<const Fact*>& inputs,
    const std::vector<onnx::AttributeProto>& attributes)>;

struct Application {
  std::vector<Fact> outputs;          // one per node output
  const Layout* layout = nullptr;     // the layout applied, if one was
  std::vector<std::string> problems;  // what the node does that the rule does not allow
};

// `inputs`: the node's input facts (nullptr where an input is left out); `attributes`: the
// node's attributes, references already resolved.
Application apply_rule(const OpRule& rule, size_t num_outputs, const std::vector<const Fact*>& inputs,
                       const std::vector<const onnx::AttributeProto*>& attributes,
                       const ShapeFunctionEvaluator& evaluate);

}  // namespace shapeprop::schemas
