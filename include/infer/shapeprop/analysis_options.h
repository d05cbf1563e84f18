// What every analysis of a model takes, whichever job runs it (annotate, transform,
// check): the limits, the rules for ops outside ONNX's registry, strictness, and whether
// symbolic dims are at least 1. InferOptions and CheckOptions both extend it, so that an
// option set once reaches every mode.
#pragma once

#include <memory>

#include "shapeprop/limits.h"

namespace shapeprop {

class OpRules;  // shapeprop/schemas.h

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
};

}  // namespace shapeprop
