// Deployment shapes: what a caller knows of the graph's inputs beyond what the model
// declares (onnx-infer-shapes --set-dim, --input-shape, --rename-dim, --name-dims,
// --dim-range; the Python package's dims, input_shapes, rename_dims, name_dims and
// dim_ranges).
//
// A binding (batch=1) or an input's shape is written into the model's own declarations
// before the analysis, as if the model had been exported with it: the graph's inputs, and
// the declarations of the main graph's scope (its outputs, value_info and its subgraphs'
// declarations; a dim_param names one size in that scope, while a function's dims name
// sizes within one call and are left alone). The analysis then proves from those inputs
// what it proves from any others, and the transforms fold what they decide. A range
// (seq=1..128) cannot be written in a type: it goes to AnalysisOptions::dim_ranges, where
// the analysis takes each symbol's bounds from, and the result records it in its
// metadata_props as an assumption.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "onnx/onnx_pb.h"
#include "shapeprop/analysis_options.h"
#include "shapeprop/diagnostics.h"

namespace shapeprop {

struct InputShapes {
  // Every dim_param NAME of the graph's inputs and outputs becomes VALUE (--set-dim).
  std::vector<std::pair<std::string, int64_t>> dims;
  // An input's dims (--input-shape INPUT=D0,D1,...): a value, or nullopt to keep the dim as
  // the model declares it. A value given for a named dim binds that name everywhere.
  std::vector<std::pair<std::string, std::vector<std::optional<int64_t>>>> inputs;
  // Bounds of a dim that stays symbolic (--dim-range NAME=MIN..MAX), by the model's name.
  std::map<std::string, DimRange> ranges;
  // dim_param OLD of the graph's inputs and outputs is called NEW (--rename-dim OLD=NEW).
  std::vector<std::pair<std::string, std::string>> renames;
  // Names for the dims the exporter left anonymous (--name-dims): an input dim with
  // neither value nor name is called INPUT_AXIS before the analysis, and an output dim the
  // result would write as an expression or leave unnamed gets a plain name
  // (name_output_dims below).
  bool name_dims = false;

  bool empty() const { return dims.empty() && inputs.empty() && ranges.empty() && renames.empty() && !name_dims; }
  // A value is given for some dim (dims or inputs): the run is asked for static shapes.
  bool binds() const;
};

// What apply_input_shapes did, for the report.
struct AppliedShapes {
  std::vector<std::pair<std::string, int64_t>> bound;        // each name bound, with its value, in name order
  std::vector<std::pair<std::string, DimRange>> ranges;      // by the names the analysis sees (after renaming)
  std::vector<std::pair<std::string, std::string>> renamed;  // OLD, NEW
  struct Named {
    std::string value;  // the input or output
    size_t axis = 0;
    std::string name;
  };
  std::vector<Named> named;  // anonymous input dims named (--name-dims); outputs' are name_output_dims'
};

// Writes `shapes` into `model`'s declarations (above) and gives the ranges by the names the
// analysis will see, for AnalysisOptions::dim_ranges. Fails, leaving the model as it was,
// on a name no input or output of the graph has as a dim (an input's name for
// `inputs`), on a shape that contradicts the input's declaration (a rank that differs, a
// constant dim given another value, one name given two values), on a range whose name is
// also bound, and on a new name that would merge two sizes (one the graph already uses).
// The error names the input or dim.
Result<AppliedShapes> apply_input_shapes(onnx::ModelProto& model, const InputShapes& shapes);

// The graph's output dims as the model declares them, for name_output_dims: taken before
// the run, which rewrites them.
using DeclaredOutputDims = std::vector<std::vector<std::string>>;  // per output, per axis: the dim_param or ""
DeclaredOutputDims declared_output_dims(const onnx::ModelProto& model);

// --name-dims on the result: each output dim written as an expression of the inputs'
// sizes ("floor(samples/10)-1"), as a fresh symbol, or left unnamed gets a plain name, so
// that readers that take only names (Optimum) read it: the name `declared` holds at that
// place when it is an identifier the result uses nowhere else, otherwise OUTPUT_AXIS (made
// an identifier, and unique). Dims written alike share one name; a name is never given to
// two sizes. Returns the names given.
std::vector<AppliedShapes::Named> name_output_dims(onnx::ModelProto& model, const DeclaredOutputDims& declared);

// A value of the result whose type is not fully static (an element type and every dim a
// number), and why: an input's dim it mentions that is not bound; else the node that
// made the fresh symbol of a data-dependent size it mentions (NonZero's dyn__0); else the
// first node on its way back whose inputs are all static, or the input it comes from.
struct DynamicValue {
  std::string value;  // its name
  std::string where;  // "graph 'main'" or "function 'f'" (a subgraph: its node's)
  std::string type;   // as written, "int64[2,dyn__0]"; "?" when the result gives none
  std::string cause;  // "input dim 'seq'", "node 'nz' (NonZero)" or "input 'x'"
  std::string why;    // "not bound", "its size depends on the data", "its rank is not given", ...
};
struct StaticShapes {
  size_t values = 0;                 // node outputs (and graph inputs) of the result
  std::vector<DynamicValue> dynamic;  // those not fully static, in the model's order
};
StaticShapes static_shapes(const onnx::ModelProto& model);

// One line for the summary: "every value static (120 values)" or "3 of 120 values stay
// dynamic: 2 from node 'nz' (NonZero) (its size depends on the data), 1 from input dim
// 'seq' (not bound)": the values grouped by cause, the four largest named.
std::string static_shapes_line(const StaticShapes& shapes);

}  // namespace shapeprop
