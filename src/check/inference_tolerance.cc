// The two tolerances of validation that ONNX's checker does not share; see
// inference_tolerance.h. Schemas are looked up as ONNX's checker looks them up when
// shapeprop runs it (schemas/checker_registry.h, without accepting unknown ops).
#include "check/inference_tolerance.h"

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "schemas/checker_registry.h"
#include "shapeprop/function_id.h"
#include "support/labels.h"
#include "support/subgraphs.h"

namespace shapeprop {

namespace {

using Nodes = google::protobuf::RepeatedPtrField<onnx::NodeProto>;
using Imports = std::map<std::string, int64_t>;  // canonical domain -> version

Imports imports_of(const google::protobuf::RepeatedPtrField<onnx::OperatorSetIdProto>& list) {
  Imports out;
  for (const auto& o : list) out.emplace(FunctionId::canonical_domain(o.domain()), o.version());
  return out;
}

std::string domain_text(const std::string& domain) {
  return domain.empty() ? "the default domain" : "domain '" + domain + "'";
}

class Tolerances {
 public:
  Tolerances(const onnx::ModelProto& model, std::string_view origin, const OpRules& rules, Severity severity)
      : model_(model), origin_(origin), registry_(rules), severity_(severity) {}

  Diagnostics run() {
    for (const auto& f : model_.functions())
      if (FunctionId::is_default_domain(f.domain())) default_functions_.insert(FunctionId::of(f));
    if (!default_functions_.empty()) {
      calls_of_default_functions(model_.graph().node(), imports_of(model_.opset_import()),
                                 {"graph '" + model_.graph().name() + "'"});
      for (const auto& f : model_.functions())
        calls_of_default_functions(f.node(), imports_of(f.opset_import()), {"function " + FunctionId::of(f).str()});
    }
    opset_mismatches();
    return std::move(found_);
  }

 private:
  const onnx::ModelProto& model_;
  const std::string origin_;
  const schemas::CheckerRegistry registry_;
  const Severity severity_;
  std::set<FunctionId> default_functions_;
  std::set<FunctionId> reported_calls_;
  Diagnostics found_;

  void report(std::vector<std::string> path, std::string message, const char* tolerated) {
    if (severity_ != Severity::Error) message += std::string("; ") + tolerated + " (an error under --strict)";
    Diagnostic d = Diagnostic::make(severity_, std::move(message)).in_file(origin_);
    d.call_path = std::move(path);
    found_.push_back(std::move(d));
  }

  const onnx::OpSchema* schema(const std::string& op, int64_t version, const std::string& domain) const {
    return registry_.GetSchema(op, static_cast<int>(version), domain);
  }

  // ONNX's checker looks a default-domain node up among ONNX's ops only (check_node): a
  // call of a model-local function there is an op it does not know.
  void calls_of_default_functions(const Nodes& body, const Imports& imports, const std::vector<std::string>& body_path) {
    const auto version = imports.find("");
    if (version == imports.end()) return;  // validate_structure reports the missing import
    std::vector<std::pair<const Nodes*, std::vector<std::string>>> work = {{&body, body_path}};
    while (!work.empty()) {
      auto [nodes, path] = std::move(work.back());
      work.pop_back();
      std::vector<std::pair<const Nodes*, std::vector<std::string>>> inner;
      for (const auto& n : *nodes) {
        std::vector<std::string> here = path;
        here.push_back(node_label(n));
        const FunctionId callee = FunctionId::of(n);
        if (callee.domain.empty() && default_functions_.count(callee) && !schema(n.op_type(), version->second, "") &&
            reported_calls_.insert(callee).second) {
          const std::string v = std::to_string(version->second);
          report(here,
                 "calls " + callee.str() + ", a model-local function of the default domain whose name is no ONNX op at "
                 "opset " + v + ": ONNX's checker and ONNX Runtime reject the model (\"No Op registered for " +
                     n.op_type() + " with domain_version of " + v + "\")",
                 "read as ONNX's inference reads it");
        }
        for (const auto& a : n.attribute()) {
          std::vector<std::string> in = here;
          in.push_back("attribute '" + a.name() + "'");
          if (a.has_g()) inner.emplace_back(&a.g().node(), in);
          for (const auto& g : a.graphs()) inner.emplace_back(&g.node(), in);
        }
      }
      for (auto it = inner.rbegin(); it != inner.rend(); ++it) work.push_back(std::move(*it));
    }
  }

  // ONNX's check_model_local_functions and check_opset_compatibility: the model's imports,
  // with the first function's for a domain the model does not import, against each
  // function's own, for the nodes of its body (not of their subgraphs).
  void opset_mismatches() {
    Imports model_imports = imports_of(model_.opset_import());
    std::map<std::string, const onnx::FunctionProto*> imported_by;  // domains the model lacks
    for (const auto& f : model_.functions())
      for (const auto& [domain, version] : imports_of(f.opset_import()))
        if (model_imports.emplace(domain, version).second) imported_by[domain] = &f;
    for (const auto& f : model_.functions()) {
      const Imports own = imports_of(f.opset_import());
      std::set<std::string> reported;  // domains
      for (const auto& n : f.node()) {
        const std::string domain = FunctionId::canonical_domain(n.domain());
        const auto at_function = own.find(domain);
        const auto at_model = model_imports.find(domain);
        if (at_function == own.end() || at_model == model_imports.end() || at_function->second == at_model->second)
          continue;
        const auto* function_schema = schema(n.op_type(), at_function->second, domain);
        const auto* model_schema = schema(n.op_type(), at_model->second, domain);
        if (!function_schema && !model_schema) continue;  // a custom op: nothing to compare
        if (function_schema && model_schema && function_schema->since_version() == model_schema->since_version())
          continue;
        if (!reported.insert(domain).second) continue;
        const std::string id = FunctionId::of(f).str();
        const auto by = imported_by.find(domain);
        const std::string other = by == imported_by.end() ? "the model " + std::to_string(at_model->second)
                                                          : "function " + FunctionId::of(*by->second).str() +
                                                                ", the first to import it (the model does not), " +
                                                                std::to_string(at_model->second);
        const std::string differs =
            function_schema && model_schema
                ? n.op_type() + " has another schema at each (since " + std::to_string(function_schema->since_version()) +
                      " and " + std::to_string(model_schema->since_version()) + ")"
                : n.op_type() + " has a schema at only one of them";
        report({"function " + id, node_label(n)},
               "function " + id + " imports opset " + std::to_string(at_function->second) + " of " +
                   domain_text(domain) + " and " + other + ", and " + differs +
                   ": ONNX's checker and ONNX Runtime reject the model (\"Opset import for domain in function op " +
                   n.op_type() + " is not compatible with the version imported by model\")",
               "the function is read at its own opset, as ONNX's inference reads it");
      }
    }
  }
};

}  // namespace

Diagnostics inference_tolerances(const onnx::ModelProto& model, std::string_view origin, const OpRules* rules,
                                 Severity severity) {
  const auto builtin = rules ? nullptr : builtin_op_rules();
  return Tolerances(model, origin, rules ? *rules : *builtin, severity).run();
}

}  // namespace shapeprop
