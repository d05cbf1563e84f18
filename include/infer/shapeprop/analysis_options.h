// What every analysis of a model takes, whichever job runs it (annotate, transform,
// check): the limits, the rules for ops outside ONNX's registry, strictness, and whether
// symbolic dims are at least 1. InferOptions and CheckOptions both extend it, so that an
// option set once reaches every mode.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "shapeprop/limits.h"

namespace shapeprop {

class OpRules;  // shapeprop/schemas.h

// The sizes a symbolic dim may take, both ends included (--dim-range NAME=MIN..MAX).
struct DimRange {
  int64_t min = 0;
  int64_t max = 0;
  bool operator==(const DimRange& o) const { return min == o.min && max == o.max; }
};

// What the analysis makes of a declared type of a computed value (a graph output, a
// value_info entry, a subgraph's or a function's declarations): --declared.
enum class DeclaredTypes {
  // The default: compared with what is proven, a contradiction reported (an error in strict
  // mode), never a fact (DESIGN.md, guarantee 3: exporters declare false shapes).
  Check,
  // ONNX's contract (onnx.shape_inference merges declarations into what it infers): as
  // Check, and where nothing finer is proven (an unknown element type, rank or dim, or a
  // fresh symbol) a declaration of the main graph or its subgraphs is taken as a fact (a
  // function's are checked only: their dim_params are the function's own names). The
  // result records that it took some on trust (metadata_props, shapeprop.assumptions; the
  // report lists them).
  Use,
  // Neither compared nor used.
  Ignore,
};

// What the analysis makes of an initializer that is also a graph input: a default value
// the caller may override (--overridable-initializers).
enum class OverridableInitializers {
  Type,   // the default: only its type is a fact (its value may be replaced at run time)
  Value,  // ONNX's inference: its value is a fact too; recorded as an assumption when read
};

struct AnalysisOptions {
  // How much inference may build (elements of one value) and how deep and wide a model
  // may go; see limits.h.
  Limits limits;
  // Rules for ops outside ONNX's registry (shapeprop/schemas.h); null: the built-in ones.
  std::shared_ptr<const OpRules> op_rules;
  // Conflicts between declared and inferred types, ops without a schema and failed
  // inference are errors (default: warnings; inference goes on with what it knows). The
  // checker is always strict.
  bool strict = false;
  // Symbolic dims are at least 1 (no empty dynamic dimension), as PyTorch's exporter
  // assumes of dynamic dims: Size(x) == 0 is then false for x of shape [N, 8]. Without
  // it such conditions stay undecided.
  bool assume_positive_dims = true;
  // Bounds of the graph inputs' symbols, by name (shapeprop/input_shapes.h): a decision
  // that holds for every size in a symbol's range is taken, and the result records the
  // ranges in its metadata_props as assumptions. A symbol without a range is at least 1
  // (assume_positive_dims) or 0.
  std::map<std::string, DimRange> dim_ranges;
  // Declared types of computed values: checked (default), used where nothing finer is
  // proven (ONNX's contract), or ignored. Annotation only: a rewrite never rests on one.
  DeclaredTypes declared = DeclaredTypes::Check;
  // Initializers that are also graph inputs: their type only (default), or their value
  // (ONNX's inference). Annotation only.
  OverridableInitializers overridable_initializers = OverridableInitializers::Type;
};

}  // namespace shapeprop
