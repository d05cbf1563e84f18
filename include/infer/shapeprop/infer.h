// Inter-procedural type and shape inference, and annotation.
//
// Each call of a model-local function is analysed in its own CallContext (the facts of
// its inputs and its attribute values), memoised: equal contexts share one analysis. The
// results are written as graph value_info for every value of the main graph (and its
// subgraphs), and as FunctionProto.value_info for every value of every reached function:
// the join over that function's contexts, so that no written fact is false for any
// caller (a dim that differs becomes a fresh symbol unk__N or unknown; a rank that
// differs leaves the shape out; an element type that differs leaves the entry out).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "onnx/onnx_pb.h"
#include "shapeprop/analysis_options.h"
#include "shapeprop/call_graph.h"
#include "shapeprop/diagnostics.h"
#include "shapeprop/limits.h"
#include "shapeprop/phases.h"

namespace shapeprop {

struct InferOptions : AnalysisOptions {
  // Write FunctionProto.value_info, raising ir_version to 10 where it is lower. When
  // false, the IR version is kept and nothing is written inside functions.
  bool annotate_functions = true;
  // Declared types (graph value_info and outputs, subgraph inputs and outputs, function
  // value_info, legacy qualified entries) refine what is inferred, and contradictions are
  // reported. The checker turns this off: it compares declarations with what is proven
  // from the graph's inputs and initializers alone, so none may vouch for another.
  bool use_declared_types = true;
  // Collect a text dump of the call graph and the contexts analysed per function (and
  // note which rule layout each op outside ONNX's registry took).
  bool debug = false;
  // Fill InferResult::functions (and TransformResult::functions): each reached function
  // with its contexts, for a report. Off by default: it walks the analysis once more and
  // spells every context.
  bool describe_contexts = false;
  // Fill InferResult::shapes: every value of the annotated model with the type the
  // analysis proved, per body and per function context (--print-shapes). Off by default.
  bool describe_shapes = false;
  // Called as each phase of the work starts ("analysis", "annotation", ...; see
  // PhaseTime), on the calling thread: a driver's progress display.
  std::function<void(std::string_view phase)> on_phase;
  // Called on the calling thread after an analysis of the model passed in, which only
  // reads it, and before the run first writes to it (infer_shapes' annotation, a
  // transform's first fold): an error ends the run there and is returned, with the model
  // as it was. It may be called more than once in a run, and must give the same answer
  // each time. The driver waits here for ONNX's checker, which it runs on a second thread
  // meanwhile (JobOptions::check_alongside).
  std::function<Status()> before_writing;
};

struct InferStats {
  size_t call_sites = 0;         // calls of model-local functions reached from the graph
  size_t distinct_contexts = 0;  // distinct (function, context) pairs those calls make
  size_t body_analyses = 0;      // function bodies analysed (memo misses, incl. loop fixpoint rounds)
  size_t graph_values = 0;       // value_info entries written in the main graph and its subgraphs
  size_t function_values = 0;    // value_info entries written in functions
  size_t ir_version_raised_from = 0;  // the old IR version when it was raised to 10, else 0
};

// A reached function and the distinct contexts its calls make.
struct FunctionContexts {
  struct Context {
    std::string signature;       // the input facts and attribute values, "(float[7], float) <axis=1>"
    size_t call_sites = 0;       // call nodes the analysis found calling it
    std::string specialization;  // FunctionId::str() of the function serving it once specialized (empty in annotate mode)
  };
  std::string function;  // FunctionId::str()
  std::vector<Context> contexts;  // in first-use order
};

// One value with its proven type, as --print-shapes lists it (InferOptions::describe_shapes).
struct ValueShape {
  // Where: "graph 'main'", "function 'f'" (with `context`), and for a subgraph the
  // enclosing scope, then " / If 'n' then_branch".
  std::string scope;
  std::string context;  // a function context's signature, "(float[7], float) <axis=1>"; else empty
  std::string op;       // the node's op type ("Add", a call's function "pkg.f"); "input" for an input
  std::string node;     // the node's name (may be empty); empty for an input
  std::string value;
  std::string type;     // as annotation writes it, "float[batch,7]"; "?" where nothing is proven
};

// A decision that holds only because symbolic dims are taken to be at least 1
// (InferOptions::assume_positive_dims): a comparison of dims whose result would be unknown
// (or differ) if a symbol could be 0. Facts and rewrites downstream of it rely on it too.
struct AssumptionUse {
  std::string op;                      // the node's op type, as "Equal"
  std::vector<std::string> call_path;  // where, as in Diagnostic::call_path (the first call of a shared context)
  // Empty: the result relied on symbolic dims >= 1 alone. Otherwise a further condition
  // it needs, over the symbols, as "floor((H+1)/2) >= 3" (a window fits its padded
  // input: eval/fold_spatial.cc), which the model records beside that one.
  std::string condition;
};

// A declared type taken as a fact (AnalysisOptions::declared, DeclaredTypes::Use): the
// value, and where (its call path, ending in the value).
struct DeclaredUse {
  std::string value;
  std::vector<std::string> call_path;
};

// The model's metadata_props entry that says the model relies on symbolic dims being at
// least 1: written when a fact or rewrite in the result relied on it, kept once written.
inline constexpr const char* kAssumptionsKey = "shapeprop.assumptions";
inline constexpr const char* kPositiveDimsAssumption = "symbolic dims >= 1";
// What the entry lists when declared types were taken as facts (DeclaredTypes::Use), and
// when graph inputs' initializers were read as their values (OverridableInitializers::Value).
inline constexpr const char* kDeclaredTypesAssumption = "declared types taken as facts where none is proven";
inline constexpr const char* kInitializerValuesAssumption = "graph inputs keep their initializers' values";
// A range the analysis took (AnalysisOptions::dim_ranges), as the entry lists it: "1 <= seq <= 128".
std::string range_assumption(const std::string& symbol, const DimRange& range);

// A dim_param the main graph declares (not a graph input's size) that annotation wrote
// nowhere: a declaration is no fact (DESIGN.md, guarantee 3), and this one either was proven
// to stand for different sizes, or names several dims that nothing proves equal.
struct DroppedDimParam {
  std::string name;
  std::vector<std::string> values;  // the values declaring it, in the order they are declared
  std::string why;
};

struct InferResult {
  InferStats stats;
  Diagnostics diagnostics;  // warnings (or errors in strict mode) found on the way
  std::string debug;        // with InferOptions::debug
  std::vector<FunctionContexts> functions;   // per reached function, bottom-up (InferOptions::describe_contexts)
  std::vector<AssumptionUse> assumptions;    // what relied on symbolic dims >= 1
  std::vector<DeclaredUse> declared_uses;    // declarations taken as facts (DeclaredTypes::Use)
  std::vector<std::string> initializer_values_read;  // inputs read as their initializer (OverridableInitializers::Value)
  std::vector<DroppedDimParam> dropped_dim_params;  // declared dim_params the annotation did not keep
  std::vector<PhaseTime> phases;             // time per phase
  std::vector<ValueShape> shapes;            // every value's type (InferOptions::describe_shapes)
};

// Infers and annotates `model` in place. Fails without touching the model when the
// model cannot be analysed at all (recursive functions).
Result<InferResult> infer_shapes(onnx::ModelProto& model, const InferOptions& options = {});

// The same for a model validate_model passed (with options.limits) and that has not changed
// since: its depths are not measured again, and `calls` is the call graph validation built
// of it (validate_model's last argument). The driver's; a second measure of the 128-layer
// transformer's depths and calls was 2% of annotating it.
Result<InferResult> infer_shapes(onnx::ModelProto& model, const InferOptions& options, const CallGraph& calls);

// One line: "12 call sites, 4 distinct contexts (4 bodies analysed), 30 values annotated
// in the graph, 57 in functions, 0 errors, 1 warning".
std::string summary_line(const InferResult& result);

// What a written model may hold (docs/dims.md): every dim_param is a dim name of the model
// shapeprop was given (`names`: dim_params_of that model) or of the result's graph inputs
// (which --rename-dim and --name-dims write), a name shapeprop mints (dyn__N, unk__N), or an
// expression in docs/dims.md's grammar over those. The first dim_param of `result` that is
// none of them, as a message naming the value whose type holds it (its text escaped);
// nullopt when every one is. The driver asks this of every result before it is written,
// so that nothing internal (a token, a placeholder, a marker) can reach a written model.
std::optional<std::string> foreign_dim_param(const onnx::ModelProto& result, const std::set<std::string>& names);
// Every dim_param of the model's types: the main graph's inputs, outputs and value_info,
// its subgraphs', and every function's value_info.
std::set<std::string> dim_params_of(const onnx::ModelProto& model);

}  // namespace shapeprop
