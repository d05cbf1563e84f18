// Analyzer::Impl: the state of one analysis and its jobs, shared by the files that
// implement them (the overview is at the top of analyzer.cc):
//   analyzer.cc               declared facts, diagnostics, values, the walk; Analyzer's methods
//   analyzer_calls.cc         call contexts and their memo; fresh symbols for data-dependent dims
//   analyzer_control_flow.cc  If (the taken branch), Loop and Scan (loop-carried facts)
//   analyzer_ops.cc           op dispatch: ONNX's inference, folding, rules, schema bodies
// Internal to src/infer.
#pragma once

#include "infer/analyzer.h"

#include <algorithm>
#include <deque>
#include <set>
#include <sstream>
#include <unordered_set>

#include <range/v3/view/zip.hpp>

#include "eval/fold.h"
#include "onnx/defs/function.h"
#include "infer/declared_type.h"
#include "infer/dim_texts.h"
#include "infer/onnx_bridge.h"
#include "infer/op_memo.h"
#include "schemas/older_version.h"
#include "schemas/rule_eval.h"
#include "shapeprop/hash_combine.h"
#include "shapeprop/schemas.h"
#include "support/labels.h"
#include "support/newer_onnx.h"
#include "support/subgraphs.h"
#include "support/type_walk.h"

namespace shapeprop::infer {

// The walk's pieces (frames, call-path links, resolved attributes, small helpers).
namespace detail {

namespace views = ranges::views;
using onnx::AttributeProto;
using onnx::FunctionProto;
using onnx::GraphProto;
using onnx::NodeProto;
using OpsetMap = std::unordered_map<std::string, int>;
using AttrMap = std::unordered_map<std::string, const AttributeProto*>;
// Declared types by value name (the model's value_info, outputs, subgraph inputs).
using TypeMap = std::unordered_map<std::string, const onnx::TypeProto*>;

// Loop and Scan: rounds of generalising loop-carried facts before giving up on shapes.
inline constexpr int kMaxLoopRounds = 4;
// Unknown dims get fresh symbols up to this rank (a shape input far longer than any real
// rank would otherwise name thousands).
inline constexpr size_t kMaxNamedRank = 32;

inline OpsetMap opsets_of(const google::protobuf::RepeatedPtrField<onnx::OperatorSetIdProto>& imports) {
  OpsetMap m;
  for (const auto& o : imports) m[FunctionId::canonical_domain(o.domain())] = static_cast<int>(o.version());
  return m;
}

// One step of a call path: a node, a function entered, a branch, a subgraph. Links live
// on the stack of the walk; the path is spelled out only when a diagnostic needs it.
struct PathLink {
  enum class Kind { Graph, Node, Function, SchemaBody, Text, Subgraph };
  const PathLink* parent = nullptr;
  Kind kind = Kind::Text;
  const NodeProto* node = nullptr;
  const GraphProto* graph = nullptr;
  const FunctionId* function = nullptr;
  const char* text = nullptr;

  std::string str() const {
    switch (kind) {
      case Kind::Graph: return "graph '" + graph->name() + "'";
      case Kind::Node: return node_label(*node);
      case Kind::Function: return "function " + function->str();
      case Kind::SchemaBody: return "body of " + function->str();
      case Kind::Subgraph: return "subgraph '" + graph->name() + "'";
      case Kind::Text: return text;
    }
    return {};
  }
  static std::vector<std::string> spell(const PathLink* leaf) {
    std::vector<std::string> path;
    for (const PathLink* l = leaf; l; l = l->parent) path.push_back(l->str());
    std::reverse(path.begin(), path.end());
    return path;
  }
};

inline PathLink link(const PathLink* parent, const char* text) {
  PathLink l;
  l.parent = parent;
  l.text = text;
  return l;
}

// One body being walked: the main graph, a function in one context, or a subgraph.
struct Frame {
  const ir::Body* body = nullptr;
  BodyFacts* facts = nullptr;
  const Frame* outer = nullptr;          // the frame of the enclosing body (subgraphs)
  const OpsetMap* opsets = nullptr;
  const AttrMap* attributes = nullptr;   // the function's attribute values; nullptr in the main graph
  const TypeMap* declared = nullptr;     // declared value_info for this body, by name
  DimParams* dim_params = nullptr;       // what the dim_params declared in this scope stand for
  const PathLink* path = nullptr;        // the call path to this body
  std::vector<const CallContext*>* callees = nullptr;
  std::unordered_set<const CallContext*>* callee_set = nullptr;
  bool speculative = false;              // a loop round that may be generalised: report nothing
  bool* failed = nullptr;                // speculative: set where a report would have warned (a dead branch's walk)
  bool iterating = false;                // in a body run once per iteration (Loop, Scan, SequenceMap)

  const Frame& at_depth(uint32_t depth) const {
    const Frame* f = this;
    for (uint32_t k = 0; k < depth; ++k) f = f->outer;
    return *f;
  }
};

// A copy of `outer` for a walk whose findings may be thrown away (a loop round that may
// be generalised, a subgraph walked for its output types only): it reports nothing and
// records its callees apart.
struct SpeculativeFrame {
  std::vector<const CallContext*> callees;
  std::unordered_set<const CallContext*> callee_set;
  Frame frame;

  explicit SpeculativeFrame(const Frame& outer) : frame(outer) {
    frame.callees = &callees;
    frame.callee_set = &callee_set;
    frame.speculative = true;
    frame.iterating = true;
  }
  SpeculativeFrame(const SpeculativeFrame&) = delete;
  SpeculativeFrame& operator=(const SpeculativeFrame&) = delete;
};

// The attributes of a node as its op sees them: references to the enclosing function's
// attributes replaced by their values (and dropped when the call does not give one).
struct ResolvedAttributes {
  std::vector<std::unique_ptr<AttributeProto>> owned;
  std::vector<const AttributeProto*> list;

  ResolvedAttributes(const NodeProto& n, const AttrMap* function_attributes) {
    for (const auto& a : n.attribute()) {
      if (!a.has_ref_attr_name()) {
        list.push_back(&a);
        continue;
      }
      if (!function_attributes) continue;
      auto it = function_attributes->find(a.ref_attr_name());
      if (it == function_attributes->end()) continue;
      auto copy = std::make_unique<AttributeProto>(*it->second);
      copy->set_name(a.name());
      list.push_back(copy.get());
      owned.push_back(std::move(copy));
    }
  }
  const AttributeProto* find(const std::string& name) const {
    for (const auto* a : list)
      if (a->name() == name) return a;
    return nullptr;
  }
};

// A graph attribute of the node: its own, or the context's value of the attribute it
// refers to. Either outlives the walk (the model, or a memoised context), unlike the
// copies ResolvedAttributes makes, so that Bodies and facts can be keyed by it.
inline const GraphProto* graph_attribute(const NodeProto& n, const char* name, const AttrMap* function_attributes) {
  for (const auto& a : n.attribute()) {
    if (a.name() != name) continue;
    if (!a.has_ref_attr_name()) return a.has_g() ? &a.g() : nullptr;
    if (!function_attributes) return nullptr;
    auto it = function_attributes->find(a.ref_attr_name());
    return it != function_attributes->end() && it->second->has_g() ? &it->second->g() : nullptr;
  }
  return nullptr;
}

inline std::vector<int64_t> ints_attribute(const ResolvedAttributes& attrs, const std::string& name) {
  const AttributeProto* a = attrs.find(name);
  return a ? std::vector<int64_t>(a->ints().begin(), a->ints().end()) : std::vector<int64_t>();
}

inline Fact without_elements(Fact f) {
  f.ints.reset();
  f.reals.reset();
  return f;
}

inline Fact scalar_of(int32_t elem_type) { return Fact::tensor(elem_type, {}); }

}  // namespace detail

using namespace detail;  // NOLINT: the analyzer's own files only

struct Analyzer::Impl {
  const onnx::ModelProto& model;
  const CallGraph& calls;
  InferOptions options;
  Diagnostics diagnostics;
  ir::BodyIndex bodies;
  OnnxBridge bridge{options.limits.max_elements};
  OpMemo op_memo;  // outcomes of op nodes answered by ONNX's inference functions
  // What the folding rules may assume of the symbols' values (shapeprop/dim.h), from the
  // options: every symbol at least 1 with assume_positive_dims. Put in force around each
  // op's folding (fold_outputs); a result that needed it is recorded as an assumption.
  DimBounds symbol_bounds{options.assume_positive_dims ? 1 : 0};

  // Dim texts the model lists as expressions shapeprop wrote (dim_texts.h); every other
  // dim_param is a name.
  std::set<std::string> ours;
  OpsetMap model_opsets;
  std::unordered_map<const FunctionProto*, OpsetMap> function_opsets;
  TypeMap declared_graph;
  std::unordered_map<const FunctionProto*, TypeMap> declared_function;
  // Declared types per value of a body (from the body's TypeMap), looked up once per body.
  std::unordered_map<const ir::Body*, std::vector<const onnx::TypeProto*>> declared_by_value;
  std::pair<const ir::Body*, const std::vector<const onnx::TypeProto*>*> last_declared{nullptr, nullptr};  // its latest entry
  // The main graph's declared dim_params, and those of each function found naming
  // different sizes in some call.
  DimParams graph_dim_params;
  std::unordered_map<const FunctionProto*, std::set<std::string>> false_function_dim_params;

  std::unordered_map<CallContext, std::unique_ptr<Summary>, CallContextHash> memo;
  std::unordered_map<const CallContext*, const FunctionProto*> function_of;
  std::deque<FunctionProto> schema_bodies;  // ONNX ops defined by a function body, expanded
  std::map<std::tuple<std::string, std::string, int>, const FunctionProto*> schema_body_of;
  std::shared_ptr<const OpRules> rules;
  std::unique_ptr<Summary> root;
  std::unordered_set<const CallContext*> root_callees;
  size_t analyses = 0;
  Analyzer::LiveContexts live;  // filled once run() is done
  std::vector<AssumptionUse> assumptions;
  std::set<std::pair<std::vector<std::string>, std::string>> assumption_places;  // call path, condition
  // DeclaredTypes::Use: the declarations taken as facts, once per place; and
  // OverridableInitializers::Value: the graph inputs whose initializer was read as their value.
  std::vector<DeclaredUse> declared_uses;
  std::set<std::vector<std::string>> declared_use_places;
  std::vector<std::string> initializer_values_read;
  // Fresh symbols for data-dependent dims: dyn__0, dyn__1, ... skipping the model's names.
  std::set<std::string> model_names;    // names_taken: a fresh symbol takes none of them
  std::set<std::string> listed_fresh;   // fresh symbols of an earlier run: read as unknown
  std::unordered_set<std::string> fresh_names;
  size_t next_fresh = 0;
  std::vector<std::string> placeholders;  // of contexts' fresh symbols (rename_fresh)

  Impl(const onnx::ModelProto& m, const CallGraph& c, const InferOptions& o);

  // Graph value_info, graph outputs and subgraph inputs/outputs are the main graph's
  // declarations, compared with what is proven. Exporters before IR 10 wrote
  // function-internal types into the graph's value_info under qualified names,
  // "domain::function/value"; those go to the function.
  void collect_declared(const GraphProto& main);

  bool add_legacy(const onnx::ValueInfoProto& vi);

  const std::vector<const onnx::TypeProto*>* declared_for(const ir::Body& body, const TypeMap* declared);

  // ------------------------------------------------------------------ diagnostics

  void report(const Frame& frame, const PathLink* path, Severity severity, std::string message);
  // What best effort tolerates and --strict does not.
  void report_soft(const Frame& frame, const PathLink* path, std::string message);

  // ------------------------------------------------------------------ values

  // Records the fact of a value. What the model declares of it is no fact (exporters
  // declare the example's sizes): it is compared with the fact, and a declaration some
  // valid input makes false is reported (annotation then writes the fact instead). Only
  // with DeclaredTypes::Use does a consistent declaration complete the fact where it
  // proves nothing finer (adopt_declared), each such use recorded in declared_uses.
  void define(ir::ValueId v, Fact fact, Frame& frame, const PathLink* path);

  // The fact a node reads through an operand; nullptr (with `present` false) for an
  // omitted or absent input.
  const Fact* read(const ir::Operand& op, const std::string& name, Frame& frame, const PathLink* path, bool& present);

  // The fact of a body's result (an output of the graph or function), Fact() when unknown.
  static Fact result(const ir::Operand& op, const Frame& frame);

  // ------------------------------------------------------------------ walking

  void walk_nodes(Frame& frame);

  // Walks a subgraph nested in `outer`, with `inputs` bound to its inputs; returns the
  // facts of its outputs. A speculative walk keeps nothing of what it finds.
  std::vector<Fact> walk_subgraph(const GraphProto& g, Frame& outer, const std::vector<Fact>& inputs, const PathLink* path);

  void process(const ir::Body::Node& node, Frame& frame);

  // Whether no valid execution defines the value `op` reads (BodyFacts::State::Invalid).
  static bool invalid(const ir::Operand& op, const Frame& frame);

  // Which outputs of a call or an If no valid execution defines: those the callee's body
  // leaves invalid in the context the call took, those the taken branch leaves invalid,
  // or, for an If both of whose branches were walked, those both leave invalid (an output
  // only one leaves invalid is the other's: `outputs` gets its fact).
  std::vector<bool> invalid_results(const ir::Body::Node& node, const Frame& frame, std::vector<Fact>& outputs) const;

  // ------------------------------------------------------------------ calls

  // What a context keeps of a callee: its input count, and its attributes (with defaults).
  struct Signature {
    int num_inputs = 0;
    std::vector<AttributeProto> defaults;  // a schema's or a rule's, named
    // A function's (attribute_proto), viewed: the function outlives the analysis.
    const google::protobuf::RepeatedPtrField<AttributeProto>* function_defaults = nullptr;
  };

  static Signature signature_of(const FunctionProto& f);

  // The fresh symbols of a context's inputs, renamed: each placeholder (the k-th one to
  // appear is placeholder(k)) and the caller's symbol it stands for.
  using Renaming = std::vector<std::pair<std::string, Dim>>;

  const std::string& placeholder(size_t k);

  // A context names the fresh symbols of its inputs (data-dependent and unknown sizes, each
  // the caller's own) by their order of appearance, and each unknown dim of an input's
  // shape as another one, so that calls whose inputs differ only in which such sizes they
  // carry share one analysis, and the body sees which of its values keep an input's size;
  // instantiate() maps them back (an unknown dim to unknown).
  Renaming rename_fresh(std::vector<Fact>& inputs);

  // `f` with each symbol `to` maps replaced, in its dims, elements and other types.
  static void rename_symbols(Fact& f, const Dim::SymbolMap& to);

  // The context of a call, but for its attributes, which `chosen` gives (sorted by name;
  // they are compared by attribute_key): analyze() copies them into a context it keeps.
  CallContext make_context(const FunctionId& id, const Signature& sig, const std::vector<const Fact*>& inputs,
                           const std::vector<bool>& present, const ResolvedAttributes& attrs, Renaming& renaming,
                           std::vector<const AttributeProto*>& chosen);

  std::vector<Fact> call_function(const NodeProto& n, size_t index, const FunctionProto& f,
                                  const std::vector<const Fact*>& inputs, const std::vector<bool>& present,
                                  const ResolvedAttributes& attrs, Frame& frame, const PathLink* path);

  // The summary of `f` in `ctx`, analysing the body on the first request.
  const Summary& analyze(const CallContext& ctx, const std::vector<const AttributeProto*>& chosen,
                         const FunctionProto& f, const PathLink* path, const CallContext** key_out);

  // ------------------------------------------------------------------ data-dependent dims

  Dim fresh_symbol();

  // A dim that depends on the data (how many elements NonZero finds, ...) gets a fresh
  // symbol of its own instead of staying unknown: values derived from one such result
  // then keep one dim that later code can compare, and two results never share one. Not
  // in a body run once per iteration, where the size may differ from one iteration to
  // the next (and the loop's fixpoint would see it change each round).
  void name_data_dependent(const NodeProto& n, const std::vector<const Fact*>& inputs, const ResolvedAttributes& attrs,
                           std::vector<Fact>& outputs, const Frame& frame);

  // A callee's outputs at one call site. The placeholders of the context's inputs are the
  // caller's symbols again (`renaming`); another fresh symbol of the callee names a size
  // found within one call: each call site takes a fresh symbol of its own for it (unknown
  // in a body run once per iteration), since two calls in one context find their own
  // sizes. The inputs' other symbols stay.
  std::vector<Fact> instantiate(const std::vector<Fact>& outputs, const CallContext& ctx, const Renaming& renaming,
                                const Frame& frame);

  // Every dim a node's output leaves unknown gets a fresh symbol of its own, as ONNX's
  // inference writes unk__N: values computed from it then keep one dim that later code
  // can compare (and a data-dependent size it may be, the symbol is taken to be possibly
  // 0). Not in a body run once per iteration, where the size may differ between
  // iterations.
  void name_unknown_dims(std::vector<Fact>& outputs, const Frame& frame);

  // ------------------------------------------------------------------ control flow

  std::vector<Fact> call_if(const NodeProto& n, size_t index, const std::vector<const Fact*>& inputs, Frame& frame,
                            const PathLink* path);
  // A decided If's untaken branch `g`, in the main graph's scope: walked speculatively on
  // the facts around it, as ONNX's checker walks it (both branches of every If in it), and
  // where that walk fails (ONNX's inference, or a check of ours that says no run passes a
  // node), the outer values the branch reads, and the values those are computed from
  // (but constants and the graph's inputs), are withheld from annotation
  // (BodyFacts::withhold), with a warning. ONNX's checker (full_check) infers both
  // branches from the types written, where the model given left it too little to fail on
  // (fuzz findings: a dead branch Scans a value proven rank 0; a Concat of scalars two
  // decided Ifs deep). Functions' value_info is not read by ONNX's inference of a call, so
  // their Ifs are not walked.
  void withhold_dead_branch_reads(const GraphProto& g, Frame& frame, const PathLink* path);

  // Analyses a loop body until its loop-carried facts are stable: each round joins the
  // facts carried in with those carried out; after kMaxLoopRounds the shapes of what
  // still changes are dropped. Only the final round's facts are kept.
  // `bind(state)` gives the body's inputs; returns the body outputs of the final round
  // and the stable state.
  template <class Bind>
  std::pair<std::vector<Fact>, std::vector<Fact>> fixpoint(const GraphProto& body, Frame& frame, std::vector<Fact> state,
                                                          size_t state_offset, Bind bind, const PathLink* path) {
    for (int round = 0;; ++round) {
      SpeculativeFrame scratch(frame);
      Frame& trial = scratch.frame;
      auto out = walk_subgraph(body, trial, bind(state), path);
      std::vector<Fact> next = state;
      for (size_t i = 0; i < state.size() && state_offset + i < out.size(); ++i)
        next[i] = join(state[i], out[state_offset + i]);
      if (next == state) break;
      state = std::move(next);
      if (round + 1 >= kMaxLoopRounds) {
        for (auto& f : state)
          if (f.other)
            f = Fact();  // a sequence or optional whose shapes still change: nothing
          else
            f = Fact::tensor(f.elem_type, {}), f.shape.reset();
        break;
      }
    }
    Frame each = frame;
    each.iterating = true;
    auto out = walk_subgraph(body, each, bind(state), path);
    return {std::move(out), std::move(state)};
  }

  std::vector<Fact> call_loop(const NodeProto& n, const std::vector<const Fact*>& inputs, Frame& frame,
                              const PathLink* path);

  std::vector<Fact> call_scan(const NodeProto& n, const std::vector<const Fact*>& inputs, const ResolvedAttributes& attrs,
                              Frame& frame, const PathLink* path);

  // ------------------------------------------------------------------ operators

  // ONNX 1.17's Transpose rule checks each perm entry against the input's rank but not
  // the perm's length: a perm shorter than the rank gives an output of the perm's rank,
  // where run times refuse the node. Ours: that case, when the rank is known (a longer
  // perm has an entry out of range, which ONNX's rule reports).
  static std::optional<std::string> transpose_perm_mismatch(const ResolvedAttributes& attrs,
                                                            const std::vector<const Fact*>& inputs);

  // `broken` (when given) is set when an input breaks the op's type constraints: the node
  // has no valid execution, and its outputs none either (reported, no facts), or when
  // `present` (when given: which inputs the node has, Analyzer::Impl::read) says a
  // required one is left out.
  std::vector<Fact> call_op(const NodeProto& n, const std::vector<const Fact*>& inputs, const ResolvedAttributes& attrs,
                            Frame& frame, const PathLink* path, bool* broken = nullptr,
                            const std::vector<bool>* present = nullptr);

  // Refines the outputs of an ONNX-domain op node by our folding rules (src/eval), which
  // compute values ONNX's inference does not; reports what they find, recorded in
  // `outcome` as well.
  void fold_outputs(const NodeProto& n, int version, const std::vector<const Fact*>& inputs,
                    const ResolvedAttributes& attrs, Frame& frame, const PathLink* path, OpMemo::Outcome& outcome);

  // Recorded in every walk, speculative ones too: what they find feeds facts as well.
  // The node's folding relied on symbolic dims >= 1, and on each of `conditions` (AssumptionUse).
  void note_symbol_min_relied(const NodeProto& n, const PathLink* path, const std::vector<std::string>& conditions = {});

  // An ONNX op without an inference function but defined by a function body (e.g.
  // GroupNormalization-21): the body, expanded once per op, version and attributes.
  const FunctionProto* schema_body(const onnx::OpSchema& schema, const NodeProto& n, const std::vector<const Fact*>& inputs,
                                   int version);

  std::vector<Fact> call_schema_body(const NodeProto& n, const FunctionProto& body, const std::vector<const Fact*>& inputs,
                                     const ResolvedAttributes& attrs, const onnx::OpSchema& schema, const Frame& frame,
                                     const PathLink* path);

  // The outputs of an op's body in the node's context: ONNX's function body of an op, or
  // the shape function of a rule. Problems inside such bodies are ONNX's or the rule's,
  // not the model's: not reported.
  std::vector<Fact> call_body(const FunctionProto& body, const FunctionId& id, const Signature& sig,
                              const std::vector<const Fact*>& inputs, const std::vector<bool>& present,
                              const ResolvedAttributes& attrs, const Frame& frame, const PathLink* path);

  // An op outside ONNX's registry with a rule in schemas/ (src/schemas does the work).
  std::vector<Fact> call_rule(const NodeProto& n, const schemas::OpRule& rule, const std::vector<const Fact*>& inputs,
                              const ResolvedAttributes& attrs, Frame& frame, const PathLink* path);
  // Whether a node of an op version newer than the linked ONNX's is its older version
  // (schemas/older_version.h), its input types known.
  static bool fits_older_version(const NodeProto& n, const onnx::OpSchema& older, const std::vector<const Fact*>& inputs,
                                 const ResolvedAttributes& attrs);
};

}  // namespace shapeprop::infer
