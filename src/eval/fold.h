// Symbolic evaluation of shape arithmetic: per-op folding rules on Facts.
//
// ONNX's inference functions give types and shapes; these rules add what they cannot:
// the elements of small tensors (constants, and shape values whose elements are symbolic
// Dims, as Shape produces), and shapes that depend on such values (Reshape to a symbolic
// target, Expand, ConstantOfShape, Range). Size(Shape(x)) is the rank whenever the rank
// is known, even if every dim is a symbol.
//
// A rule is a pure function of its inputs: it never touches the graph.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "onnx/onnx_pb.h"
#include "shapeprop/fact.h"

namespace shapeprop::eval {

struct FoldInput {
  std::string_view op;      // op_type, in the ONNX domain ("" / "ai.onnx")
  int opset = 0;            // the ONNX opset version in force where the node stands
  // Input facts in order; nullptr for an omitted optional input.
  std::vector<const Fact*> inputs;
  // Attributes with references already resolved (ref_attr_name replaced by the value).
  std::vector<const onnx::AttributeProto*> attributes;
  size_t num_outputs = 1;
  // What the rules may assume of the symbols' values (shapeprop/dim.h): `bounds` where
  // given, else every symbol at least `symbol_min` (0 in general, 1 when empty dims are
  // assumed away: InferOptions::assume_positive_dims). fold() puts them in force
  // (DimBounds::Scope) while the rule runs, so that Dim's own decisions (min, max) take
  // them too.
  int64_t symbol_min = 0;
  const DimBounds* bounds = nullptr;
  // Set to true when the result holds only because of those bounds (it would differ under
  // DimBounds(): every symbol at least 0): the decisions InferOptions::assume_positive_dims
  // makes, which the report and the model record. Null: nobody asks.
  bool* relied_on_symbol_min = nullptr;
  // Where given, a rule may state a result that holds only under a condition on the
  // symbols' values (as "floor((H+1)/2) >= 3": a window fits its padded input), which it
  // appends here for the analysis to record as an assumption (shapeprop.assumptions).
  // Null: nobody records one, and the rules state only what holds without.
  std::vector<std::string>* conditions = nullptr;

  const onnx::AttributeProto* attribute(std::string_view name) const;
  const Fact* input(size_t i) const { return i < inputs.size() ? inputs[i] : nullptr; }
};

// Facts for the node's outputs (one per output; a default Fact where the rule knows
// nothing), or an empty vector when no rule applies. The result never contradicts a
// correct ONNX inference; it is combined with it by Fact::refine.
std::vector<Fact> fold(const FoldInput& node);

// The ops that have a rule.
bool has_rule(std::string_view op);

// While one is alive on a thread, the first integer result a rule computes that does not
// fit its type (and which the rule leaves unknown, since it would wrap at run time) is
// recorded in `first`, as "4000000000 does not fit int32". For the analyzer to report
// integer overflow in shape arithmetic without every rule passing a sink along.
class OverflowWatch {
 public:
  explicit OverflowWatch(std::optional<std::string>& first);
  ~OverflowWatch();
  OverflowWatch(const OverflowWatch&) = delete;
  OverflowWatch& operator=(const OverflowWatch&) = delete;
  // Called by the rules where a value does not fit (no-op when nothing watches).
  static void note(int64_t value, int32_t elem_type);

 private:
  std::optional<std::string>* previous_;
};

}  // namespace shapeprop::eval
