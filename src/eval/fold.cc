// The table of folding rules, from ONNX op type to rule. The rules themselves live in
// fold_elementwise.cc, fold_shape.cc, fold_index.cc, fold_scatter.cc and fold_spatial.cc; fold_support.h says what they
// share and the conventions they keep.
#include "eval/fold.h"

#include <algorithm>
#include <exception>
#include <string_view>
#include <unordered_map>

#include "eval/fold_support.h"

namespace shapeprop::eval {

const onnx::AttributeProto* FoldInput::attribute(std::string_view name) const {
  for (const auto* a : attributes)
    if (a && a->name() == name) return a;
  return nullptr;
}

namespace {

using detail::Rule;

const std::unordered_map<std::string_view, Rule>& rules() {
  using namespace detail;
  static const std::unordered_map<std::string_view, Rule> table = {
      // shapes as values
      {"Shape", fold_shape},
      {"Size", fold_size},
      {"Constant", fold_constant},
      {"ConstantOfShape", fold_constant_of_shape},
      {"Range", fold_range},
      {"Reshape", fold_reshape},
      {"Expand", fold_expand},
      {"Squeeze", fold_squeeze},
      {"Unsqueeze", fold_unsqueeze},
      {"Flatten", fold_flatten},
      {"Pad", fold_pad},
      {"Tile", fold_tile},
      {"DepthToSpace", fold_depth_to_space},
      {"SpaceToDepth", fold_depth_to_space},
      {"Transpose", fold_transpose},
      // selecting and combining along axes
      {"Concat", fold_concat},
      {"Gather", fold_gather},
      {"Slice", fold_slice},
      {"Split", fold_split},
      {"OneHot", fold_one_hot},
      {"ScatterND", fold_scatter_nd},
      {"ReduceSum", fold_reduce_sum},
      {"ReduceProd", fold_reduce_prod},
      {"ReduceMean", fold_reduce_mean},
      {"ReduceMax", fold_reduce_max},
      {"ReduceMin", fold_reduce_min},
      // windows and resizing over spatial dims
      {"Conv", fold_conv},
      {"ConvTranspose", fold_conv_transpose},
      {"MaxPool", fold_pool},
      {"AveragePool", fold_pool},
      {"LpPool", fold_pool},
      {"Resize", fold_resize},
      {"Upsample", fold_resize},
      // elementwise
      {"Identity", fold_identity},
      {"Cast", fold_cast},
      {"CastLike", fold_cast_like},
      {"Equal", fold_equal},
      {"Less", fold_less},
      {"LessOrEqual", fold_less_or_equal},
      {"Greater", fold_greater},
      {"GreaterOrEqual", fold_greater_or_equal},
      {"Not", fold_not},
      {"And", fold_and},
      {"Or", fold_or},
      {"Where", fold_where},
      {"Add", fold_add},
      {"Sub", fold_sub},
      {"Mul", fold_mul},
      {"Div", fold_div},
      {"Mod", fold_mod},
      {"Neg", fold_neg},
      {"Abs", fold_abs},
      {"Min", fold_min},
      {"Max", fold_max},
  };
  return table;
}

}  // namespace

bool has_rule(std::string_view op) { return rules().count(op) != 0; }

namespace {
thread_local std::optional<std::string>* watched = nullptr;
}  // namespace

OverflowWatch::OverflowWatch(std::optional<std::string>& first) : previous_(watched) { watched = &first; }
OverflowWatch::~OverflowWatch() { watched = previous_; }

void OverflowWatch::note(int64_t value, int32_t elem_type) {
  if (watched && !*watched) *watched = std::to_string(value) + " does not fit " + elem_type_name(elem_type);
}

std::vector<Fact> fold(const FoldInput& node) {
  auto it = rules().find(node.op);
  if (it == rules().end()) return {};
  std::vector<Fact> out;
  const DimBounds by_symbol_min(node.symbol_min);
  DimBounds::Scope bounds(node.bounds ? *node.bounds : by_symbol_min);
  std::vector<std::string> conditions;
  detail::ConditionSink sink(node.conditions ? &conditions : nullptr);
  try {
    out = it->second(node);
  } catch (const std::exception&) {
    // A rule that fails (a malformed attribute, an allocation) knows nothing; the node's
    // ONNX inference still reports what is wrong with it.
    out.clear();
    conditions.clear();
  }
  if (node.conditions)
    for (auto& c : conditions)
      if (std::find(node.conditions->begin(), node.conditions->end(), c) == node.conditions->end())
        node.conditions->push_back(std::move(c));
  if (bounds.relied() && node.relied_on_symbol_min) *node.relied_on_symbol_min = true;
  out.resize(node.num_outputs);
  return out;
}

}  // namespace shapeprop::eval
