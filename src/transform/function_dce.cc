// Function DCE and the module queries of function_dce.h.
#include "transform/function_dce.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <algorithm>

#include "ir/names.h"
#include "support/repeated_fields.h"
#include "support/subgraphs.h"

namespace shapeprop::transform {

std::string serialized(const google::protobuf::MessageLite& m) {
  std::string bytes;
  google::protobuf::io::StringOutputStream raw(&bytes);
  google::protobuf::io::CodedOutputStream out(&raw);
  out.SetSerializationDeterministic(true);
  m.SerializeToCodedStream(&out);
  out.Trim();
  return bytes;
}

size_t count_all_nodes(const ModelProto& m) {
  size_t k = transform::count_nodes(m.graph().node());
  for (const auto& f : m.functions()) k += transform::count_nodes(f.node());
  return k;
}

void collect_domains(const NodeList& nodes, std::set<std::string>& domains) {
  const std::string* last = nullptr;  // the domain inserted last: neighbours mostly share one
  for (const auto& n : nodes) {
    if (!last || n.domain() != *last) {
      domains.insert(FunctionId::canonical_domain(n.domain()));
      last = &n.domain();
    }
    for_each_subgraph(n, [&](const GraphProto& g) { collect_domains(g.node(), domains); });
  }
}

std::set<FunctionId> function_ids(const ModelProto& m) {
  std::set<FunctionId> ids;
  for (const auto& f : m.functions()) ids.insert(FunctionId::of(f));
  return ids;
}

size_t count_calls(const ModelProto& m) {
  const auto ids = function_ids(m);
  const CallFinder calls(ids);
  std::set<FunctionId> called;
  size_t k = 0;
  calls.find(m.graph().node(), called, &k);
  for (const auto& f : m.functions()) calls.find(f.node(), called, &k);
  return k;
}

// Drops functions nothing reachable from the main graph calls, and opset imports no
// node uses (the default domain stays).
void remove_unused(ModelProto& m) {
  const auto ids = function_ids(m);
  const CallFinder calls(ids);
  std::set<FunctionId> reached;
  calls.find(m.graph().node(), reached);
  for (std::set<FunctionId> frontier = reached; !frontier.empty();) {
    std::set<FunctionId> next;
    for (const auto& f : m.functions())
      if (frontier.count(FunctionId::of(f))) {
        std::set<FunctionId> called;
        calls.find(f.node(), called);
        for (const auto& c : called)
          if (reached.insert(c).second) next.insert(c);
      }
    frontier = std::move(next);
  }
  auto* functions = m.mutable_functions();
  functions->erase(std::remove_if(functions->begin(), functions->end(),
                                  [&](const FunctionProto& f) { return !reached.count(FunctionId::of(f)); }),
                   functions->end());

  std::set<std::string> used{""};
  collect_domains(m.graph().node(), used);
  for (auto& f : *m.mutable_functions()) {
    std::set<std::string> in_body;
    collect_domains(f.node(), in_body);
    used.insert(in_body.begin(), in_body.end());
    auto* imports = f.mutable_opset_import();
    imports->erase(std::remove_if(imports->begin(), imports->end(),
                                  [&](const onnx::OperatorSetIdProto& o) {
                                    return !in_body.count(FunctionId::canonical_domain(o.domain()));
                                  }),
                   imports->end());
  }
  auto* imports = m.mutable_opset_import();
  imports->erase(std::remove_if(imports->begin(), imports->end(),
                                [&](const onnx::OperatorSetIdProto& o) {
                                  return !used.count(FunctionId::canonical_domain(o.domain()));
                                }),
                 imports->end());
}

// Initializers nothing reads (graph inputs with a default stay: they are interface).
void remove_unused_initializers(GraphProto& g) {
  ir::NameCounts reads(static_cast<size_t>(g.node_size()) * 2);
  reads.add_reads(g.node());
  for (const auto& o : g.output()) reads.add(o.name());
  for (const auto& i : g.input()) reads.add(i.name());
  keep_in_order(*g.mutable_initializer(), [&reads](const onnx::TensorProto& t, int) { return reads.contains(t.name()); });
}

// The version of the default domain among `imports` (0 when absent).
int64_t onnx_opset(const google::protobuf::RepeatedPtrField<onnx::OperatorSetIdProto>& imports) {
  for (const auto& o : imports)
    if (FunctionId::is_default_domain(o.domain())) return o.version();
  return 0;
}

// The graph's inputs and outputs: names the rewrites keep (views of g's).
ir::ValueNames interface_names(const GraphProto& g) {
  ir::ValueNames names;
  names.reserve(static_cast<size_t>(g.input_size() + g.output_size()));
  for (const auto& vi : g.input()) names.push_back(vi.name());
  for (const auto& vi : g.output()) names.push_back(vi.name());
  return names;
}

// Folded constants in the main graph become initializers, unless the model's IR version
// is below 4, where every initializer must also be a graph input: then they stay Constant
// nodes.
bool constants_may_be_initializers(const ModelProto& m) { return m.ir_version() >= 4; }

// Whether --keep names the function (domain, name): a backend's, left as the model wrote it.
bool kept(const TransformOptions& options, const std::string& domain, const std::string& name) {
  return options.keep.count({FunctionId::canonical_domain(domain), name}) > 0;
}

}  // namespace shapeprop::transform
