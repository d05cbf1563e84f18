// Lowering (shapeprop/expand_ops.h): ONNX ops with function bodies turned into calls of
// model-local functions holding those bodies, which the transform then specializes, folds
// and inlines per call site; and the opset conversion after it (ONNX's version converter).
// ONNX's own FunctionExpandHelper expands a call in place but folds nothing, and takes
// no input types for context-dependent bodies: hence this file.
#include "shapeprop/expand_ops.h"

#include <algorithm>
#include <functional>
#include <map>
#include <string_view>
#include <utility>

#include "onnx/defs/schema.h"
#include "onnx/version_converter/convert.h"
#include "schemas/older_version.h"
#include "schemas/rule.h"
#include "shapeprop/function_id.h"
#include "shapeprop/schemas.h"
#include "shapeprop/version.h"
#include "support/newer_onnx.h"
#include "support/subgraphs.h"
#include "transform/function_dce.h"

namespace shapeprop {

namespace {

using onnx::FunctionProto;
using onnx::GraphProto;
using onnx::ModelProto;
using onnx::NodeProto;
using onnx::OpSchema;
using onnx::TypeProto;
using Nodes = google::protobuf::RepeatedPtrField<NodeProto>;
using Opsets = google::protobuf::RepeatedPtrField<onnx::OperatorSetIdProto>;

// The declarations of one scope as the analysis of a copy of the model wrote them: a
// graph's inputs, outputs and value_info after those of the graphs around it, or a
// function's value_info. Searched from the innermost (a few lookups per expanded call).
using Declarations = std::vector<const google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>*>;

void add_graph_types(const GraphProto& g, Declarations& types) {
  types.push_back(&g.input());
  types.push_back(&g.output());
  types.push_back(&g.value_info());
}

const TypeProto* type_of(const Declarations& types, const std::string& name) {
  for (auto list = types.rbegin(); list != types.rend(); ++list)
    for (const auto& v : **list)
      if (v.name() == name) return &v.type();
  return nullptr;
}

// A sorted list of op types or attribute names, without repeats.
void add_sorted(std::vector<std::string>& names, const std::string& name) {
  auto at = std::lower_bound(names.begin(), names.end(), name);
  if (at == names.end() || *at != name) names.insert(at, name);
}
bool contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// One call to expand, where it is.
struct Site {
  NodeProto* node;
  int64_t opset;      // the scope's ai.onnx version
  const OpSchema* schema;
  const schemas::OpRule* rule;  // for a version newer than the linked ONNX's: its rule, whose body is `fixed`
  const FunctionProto* fixed;  // the op's fixed body, or null: its builder's
  Opsets* scope_opsets;  // where the expanded domain is imported
  std::vector<TypeProto> input_types;  // for context-dependent bodies
  std::string where;  // "graph 'main'", "function 'f'"
};

class Expander {
 public:
  Expander(ModelProto& m, const ExpandRequest& r, const OpRules& rules) : m_(m), r_(r), rules_(rules) {}

  // The calls to expand in the model as it is now; `types_needed` when one needs an analysis.
  Result<std::vector<Site>> find(bool& types_needed) {
    std::vector<Site> sites;
    std::vector<std::string> without;  // op types listed that have no function, sorted
    std::vector<std::string> absent;   // op types the target opset lacks, without a function
    const auto visit = [&](Nodes& nodes, int64_t opset, Opsets* opsets, const std::string& where, auto&& self) -> void {
      for (auto& n : nodes) {
        for_each_subgraph(n, [&](GraphProto& g) { self(*g.mutable_node(), opset, opsets, where, self); });
        if (!FunctionId::is_default_domain(n.domain()) || opset == 0) continue;
        // A version newer than the linked ONNX's: its rule's body, if it has one.
        const auto newer = newer_onnx::newer_version(n.op_type(), opset);
        const schemas::OpRule* rule = newer ? rules_.find_version(n.op_type(), *newer) : nullptr;
        const OpSchema* schema = newer ? nullptr : onnx::OpSchemaRegistry::Schema(n.op_type(), static_cast<int>(opset), "");
        // A fixed body counts where ONNX vouches for it at this opset (its ops unchanged since).
        const FunctionProto* fixed = rule && rule->body ? &*rule->body
                                     : schema          ? schema->GetFunction(static_cast<int>(opset), /*validate=*/true)
                                                       : nullptr;
        const bool has_function = fixed || (schema && context_builder_at(*schema, opset));
        const bool missing_at_target =
            r_.target_opset && *r_.target_opset < opset &&
            !onnx::OpSchemaRegistry::Schema(n.op_type(), static_cast<int>(*r_.target_opset), "");
        const bool listed = r_.ops.count(n.op_type()) > 0;
        if (!listed && !missing_at_target && !(r_.all_functions && has_function)) continue;
        if (!has_function) {
          add_sorted(listed ? without : absent, n.op_type());
          continue;
        }
        Site s{&n, opset, schema, rule, fixed, opsets, {}, where};
        if (!fixed) types_needed = true;
        sites.push_back(std::move(s));
      }
    };
    const int64_t model_opset = transform::onnx_opset(m_.opset_import());
    visit(*m_.mutable_graph()->mutable_node(), model_opset, m_.mutable_opset_import(),
          "graph '" + m_.graph().name() + "'", visit);
    for (auto& f : *m_.mutable_functions())
      visit(*f.mutable_node(), transform::onnx_opset(f.opset_import()), f.mutable_opset_import(), "function '" + f.name() + "'",
            visit);
    if (!without.empty() || !absent.empty()) {
      std::string message;
      if (!without.empty())
        message = "ONNX " + std::string(shapeprop::onnx_version()) + " defines no function body for " + join(without) +
                  " that holds at the model's opset: " + (without.size() == 1 ? "it" : "they") + " cannot be expanded";
      if (!absent.empty())
        message += (message.empty() ? "" : "; ") + join(absent) + (absent.size() == 1 ? " does" : " do") +
                   " not exist at opset " + std::to_string(*r_.target_opset) + " and ONNX " + std::string(shapeprop::onnx_version()) +
                   " defines no function body to expand " + (absent.size() == 1 ? "it" : "them");
      return Diagnostic::error(message);
    }
    return sites;
  }

  // The input types of each site that needs them, from an analysis of a copy of the model.
  Result<bool> type_sites(std::vector<Site>& sites, const InferOptions& options) {
    ModelProto copy = m_;
    InferOptions o = options;
    o.describe_contexts = false;
    o.debug = false;
    o.on_phase = nullptr;
    o.annotate_functions = true;
    o.use_declared_types = false;  // the bodies rest on proven types only
    auto inferred = infer_shapes(copy, o);
    if (!inferred) return inferred.error();
    // Scopes of the copy by the address of the same node list in the model.
    std::map<const Nodes*, Declarations> scope_types;
    const auto scope = [&](const Nodes& theirs, Nodes& mine, Declarations types, auto&& self) -> void {
      for (int i = 0; i < theirs.size(); ++i)
        for (int a = 0; a < theirs.Get(i).attribute_size(); ++a) {
          const auto& ta = theirs.Get(i).attribute(a);
          auto& oa = *mine.Mutable(i)->mutable_attribute(a);
          const auto subgraph = [&](const GraphProto& g, GraphProto& ours) {
            Declarations inner = types;
            add_graph_types(g, inner);
            self(g.node(), *ours.mutable_node(), std::move(inner), self);
          };
          if (ta.has_g()) subgraph(ta.g(), *oa.mutable_g());
          for (int k = 0; k < ta.graphs_size(); ++k) subgraph(ta.graphs(k), *oa.mutable_graphs(k));
        }
      scope_types[&mine] = std::move(types);
    };
    Declarations graph_types;
    add_graph_types(copy.graph(), graph_types);
    scope(copy.graph().node(), *m_.mutable_graph()->mutable_node(), std::move(graph_types), scope);
    for (int i = 0; i < copy.functions_size(); ++i) {
      // The join of the function's contexts: an element type that differs is left out.
      Declarations types{&copy.functions(i).value_info()};
      scope(copy.functions(i).node(), *m_.mutable_functions(i)->mutable_node(), std::move(types), scope);
    }
    for (auto& s : sites) {
      if (s.fixed) continue;
      const Declarations* types = nullptr;
      for (const auto& [nodes, t] : scope_types)
        if (std::any_of(nodes->begin(), nodes->end(), [&s](const NodeProto& n) { return &n == s.node; })) types = &t;
      for (const auto& input : s.node->input()) {
        TypeProto t;
        if (types && !input.empty())
          if (const TypeProto* declared = type_of(*types, input)) t = *declared;
        s.input_types.push_back(std::move(t));
      }
    }
    return true;
  }

  // Replaces each site's call by a call of its body; false after an error.
  Result<bool> rewrite(std::vector<Site>& sites, std::vector<ExpandedOp>& done) {
    for (auto& s : sites) {
      FunctionProto body;
      const std::string at = s.where + ", node '" + s.node->name() + "' (" + s.node->op_type() + ")";
      if (s.fixed) {
        body = *s.fixed;
      } else {
        // A builder reads the call's attribute values: one that refers to its function's
        // attribute (@name) has a value per call of that function, which the body cannot take.
        for (const auto& a : s.node->attribute())
          if (!a.ref_attr_name().empty())
            return Diagnostic::error(at + ": attribute '" + a.name() + "' refers to the function's attribute '" +
                                     a.ref_attr_name() + "', and ONNX builds the body of " + s.node->op_type() +
                                     " from the call's values: inline the model first (--mode inline), then expand");
        bool built = false;
        std::string why;
        try {
          onnx::FunctionBodyBuildContextImpl context(*s.node, s.input_types);
          built = s.schema->BuildContextDependentFunction(context, body, static_cast<int>(s.opset));
        } catch (const std::exception& e) {
          why = std::string(": ") + e.what();
        }
        if (!built) {
          std::string untyped;
          for (int i = 0; i < s.node->input_size(); ++i)
            if (!s.node->input(i).empty() && !s.input_types[static_cast<size_t>(i)].has_tensor_type())
              untyped += (untyped.empty() ? "" : ", ") + ("'" + s.node->input(i) + "'");
          return Diagnostic::error(at + ": ONNX's builder of the function body of " + s.node->op_type() +
                                   " refused this call" + why +
                                   (untyped.empty() ? "" : " (the types of inputs " + untyped + " are not known)"));
        }
      }
      const std::string op = s.node->op_type();
      body.set_domain(kExpandedDomain);
      body.clear_doc_string();
      body.clear_overload();
      for (auto& o : *body.mutable_opset_import())
        if (FunctionId::is_default_domain(o.domain())) o.set_version(s.opset);
      // Outputs the call does not take are left out at the end; the body need not make them.
      while (body.output_size() > std::max(s.node->output_size(), 1)) body.mutable_output()->RemoveLast();
      for (int i = 0; i < body.node_size(); ++i) {
        auto& n = *body.mutable_node(i);
        n.set_name(op + "/" + (n.output_size() > 0 && !n.output(0).empty() ? n.output(0) : std::to_string(i)));
      }
      // Attribute defaults go on the call, for the body's references to them.
      std::vector<std::string> given;
      for (const auto& a : s.node->attribute()) add_sorted(given, a.name());
      const auto add_default = [&](const std::string& name, const onnx::AttributeProto& value) {
        if (contains(given, name) || value.type() == onnx::AttributeProto::UNDEFINED) return;
        auto* d = s.node->add_attribute();
        *d = value;
        d->set_name(name);
      };
      if (s.rule) {
        for (const auto& a : s.rule->attributes)
          if (a.default_value) add_default(a.name, *a.default_value);
      } else {
        for (const auto& [name, attribute] : s.schema->attributes()) add_default(name, attribute.default_value);
      }
      // Attributes the body does not declare (none, usually) stay off the call.
      std::vector<std::string> declared(body.attribute().begin(), body.attribute().end());
      for (const auto& a : body.attribute_proto()) declared.push_back(a.name());
      auto& attributes = *s.node->mutable_attribute();
      attributes.erase(std::remove_if(attributes.begin(), attributes.end(),
                                      [&](const onnx::AttributeProto& a) { return !contains(declared, a.name()); }),
                       attributes.end());
      const std::string name = function_for(op, std::move(body), done);
      s.node->set_domain(kExpandedDomain);
      s.node->set_op_type(name);
      s.node->clear_overload();
      import_expanded_domain(*s.scope_opsets);
    }
    import_expanded_domain(*m_.mutable_opset_import());
    for (auto& f : new_functions_) *m_.add_functions() = std::move(f);
    new_functions_.clear();
    return true;
  }

 private:
  ModelProto& m_;
  const ExpandRequest& r_;
  const OpRules& rules_;
  std::vector<std::pair<std::string, std::string>> by_body_;  // (serialized body, its function's name)
  std::vector<std::string> names_;  // of the functions in kExpandedDomain
  std::vector<FunctionProto> new_functions_;

  static bool context_builder_at(const OpSchema& schema, int64_t opset) {
    if (!schema.HasContextDependentFunction()) return false;
    const auto versions = schema.context_dependent_function_opset_versions();
    return std::any_of(versions.begin(), versions.end(), [opset](int v) { return v <= opset; });
  }

  static std::string join(const std::vector<std::string>& names) {
    std::string s;
    for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
    return s;
  }

  static void import_expanded_domain(Opsets& opsets) {
    for (const auto& o : opsets)
      if (o.domain() == kExpandedDomain) return;
    auto* o = opsets.Add();
    o->set_domain(kExpandedDomain);
    o->set_version(1);
  }

  // The function holding `body` (shared by equal bodies): Attention, Attention_1, ...
  std::string function_for(const std::string& op, FunctionProto body, std::vector<ExpandedOp>& done) {
    auto kind = std::find_if(done.begin(), done.end(), [&op](const ExpandedOp& e) { return e.op == op; });
    if (kind == done.end()) {
      done.push_back({op, 0, 0, {}});
      kind = done.end() - 1;
    }
    ++kind->calls;
    body.set_name(op);
    std::string key = body.SerializeAsString();
    for (const auto& [known, name] : by_body_)
      if (known == key) return name;
    if (names_.empty())
      for (const auto& f : m_.functions())
        if (f.domain() == kExpandedDomain) names_.push_back(f.name());
    std::string name = op;
    for (int k = 1; contains(names_, name); ++k) name = op + "_" + std::to_string(k);
    names_.push_back(name);
    ++kind->functions;
    body.set_name(name);
    by_body_.emplace_back(std::move(key), name);
    new_functions_.push_back(std::move(body));
    return name;
  }

};

}  // namespace

Result<std::vector<ExpandedOp>> expand_ops(ModelProto& model, const ExpandRequest& request, const InferOptions& options) {
  std::vector<ExpandedOp> done;
  if (!request.any()) return done;
  ModelProto work = model;
  const auto builtin = options.op_rules ? nullptr : builtin_op_rules();
  Expander expander(work, request, options.op_rules ? *options.op_rules : *builtin);
  // Bodies may call ops to expand in turn (Softmax in Attention's, under all-functions);
  // each round expands what the last brought, as deep as calls may nest.
  for (size_t round = 0;; ++round) {
    bool types_needed = false;
    auto sites = expander.find(types_needed);
    if (!sites) return sites.error();
    if (sites->empty()) break;
    if (round >= options.limits.max_call_depth)
      return Diagnostic::error("expanding ops nests deeper than " + std::to_string(options.limits.max_call_depth) +
                               " calls (--max-call-depth)");
    if (types_needed)
      if (auto typed = expander.type_sites(*sites, options); !typed) return typed.error();
    if (auto rewritten = expander.rewrite(*sites, done); !rewritten) return rewritten.error();
  }
  model = std::move(work);
  return done;
}

void count_expanded_nodes(const ModelProto& model, std::vector<ExpandedOp>& expanded) {
  for (auto& e : expanded) e.nodes.clear();
  const auto count = [&](const Nodes& nodes, auto&& self) -> void {
    for (const auto& n : nodes) {
      for_each_subgraph(n, [&](const GraphProto& g) { self(g.node(), self); });
      const size_t slash = n.name().find('/');
      if (slash == std::string::npos) continue;
      const std::string_view op = std::string_view(n.name()).substr(0, slash);
      auto kind = std::find_if(expanded.begin(), expanded.end(), [op](const ExpandedOp& e) { return e.op == op; });
      if (kind == expanded.end()) continue;
      ++kind->nodes[FunctionId::is_default_domain(n.domain()) ? n.op_type() : n.domain() + "." + n.op_type()];
    }
  };
  count(model.graph().node(), count);
  for (const auto& f : model.functions()) count(f.node(), count);
}

Result<bool> convert_opset(ModelProto& model, int64_t target) {
  const int64_t from = transform::onnx_opset(model.opset_import());
  if (from == target) return false;
  if (from > onnx_max_opset("") && model.functions_size() == 0) {
    auto lowered = schemas::lower_to_base_opset(model, from);
    if (!lowered) {
      Diagnostic d = lowered.error();
      d.message = "--target-opset " + std::to_string(target) + ": " + d.message;
      return d;
    }
    if (target == newer_onnx::kBaseOpset) return true;
  }
  if (model.functions_size() > 0) {
    std::string names;
    for (const auto& f : model.functions()) names += (names.empty() ? "" : ", ") + FunctionId::of(f).str();
    return Diagnostic::error("--target-opset " + std::to_string(target) +
                             ": ONNX's version converter converts the main graph only, and the result keeps functions (" +
                             names + "); inline them (--mode inline)");
  }
  try {
    ModelProto converted = onnx::version_conversion::ConvertVersion(model, static_cast<int>(target));
    model = std::move(converted);
  } catch (const std::exception& e) {
    // ONNX's assertions lead with their source file and condition: the reason follows "failed: ".
    std::string why = e.what();
    if (const size_t at = why.find("failed: "); at != std::string::npos) why = why.substr(at + 8);
    while (!why.empty() && (why.back() == '\n' || why.back() == ' ')) why.pop_back();
    return Diagnostic::error("--target-opset " + std::to_string(target) + ": ONNX's version converter cannot convert from opset " +
                             std::to_string(from) + ": " + why);
  }
  return true;
}

}  // namespace shapeprop
