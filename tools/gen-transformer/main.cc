// gen-transformer: writes an L-layer transformer built exactly like the corpus's
// transformer_L2/transformer_L16 (torchlib calls as PyTorch's dynamo exporter made them,
// symbolic batch and seq, exporter-style value names and weight names), for L from 1 to
// 1,024. Benchmarks make their large models with it; nothing large is committed.
//
//   gen-transformer --layers L -o OUT.onnx [--template transformer_L16.onnx]
//
// How: the template's main graph is a prefix (embeddings), one block of nodes per layer,
// and a suffix (final norm, lm head). A block runs from the first node that reads a weight
// of its layer ('transformer.h.<i>.') to the first node of the next block. Layer i is
// layer 1 of the template with its weights renamed 'transformer.h.<i>.' and every value
// name shifted as the exporter's per-name counters would have moved it: a name base_k
// (base alone for k = 0) defined in a block becomes base_(k + d * n), where n is how many
// names of that base one layer defines and d how many layers later it stands. Names the
// suffix defines or reads from the last block shift by the layers added. The same rule,
// run on transformer_L2 with L = 16, reproduces transformer_L16 node for node
// (ctest tools.gen_transformer_reproduces_L16); weight values are copied from layer 1.
#include <charconv>
#include <cstdlib>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "shapeprop/io.h"

namespace {

using onnx::NodeProto;

constexpr int kMaxLayers = 1024;
constexpr std::string_view kLayerPrefix = "transformer.h.";

// "view_12" -> ("view", 12); "view" -> ("view", 0); "_val_7" -> ("_val", 7).
std::pair<std::string, int> split_counter(const std::string& name) {
  const auto underscore = name.rfind('_');
  if (underscore == std::string::npos || underscore + 1 == name.size() || underscore == 0) return {name, 0};
  int k = 0;
  const char* first = name.data() + underscore + 1;
  const char* last = name.data() + name.size();
  auto [end, ec] = std::from_chars(first, last, k);
  if (ec != std::errc() || end != last || k <= 0 || *first == '0') return {name, 0};
  return {name.substr(0, underscore), k};
}

std::string with_counter(const std::string& base, int k) { return k == 0 ? base : base + "_" + std::to_string(k); }

// The layer a weight name belongs to, if it is a layer weight.
std::optional<int> layer_of_weight(const std::string& name) {
  if (name.rfind(kLayerPrefix, 0) != 0) return std::nullopt;
  int layer = 0;
  const char* first = name.data() + kLayerPrefix.size();
  auto [end, ec] = std::from_chars(first, name.data() + name.size(), layer);
  if (ec != std::errc() || end == first || *end != '.') return std::nullopt;
  return layer;
}

std::string weight_for_layer(const std::string& name, int layer) {
  const auto dot = name.find('.', kLayerPrefix.size());
  return std::string(kLayerPrefix) + std::to_string(layer) + name.substr(dot);
}

std::optional<int> layer_of_node(const NodeProto& n) {
  for (const auto& in : n.input())
    if (auto l = layer_of_weight(in)) return l;
  return std::nullopt;
}

int fail(const std::string& message) {
  std::cerr << "gen-transformer: " << message << '\n';
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::filesystem::path template_path = SHAPEPROP_CORPUS_DIR "/torchlib-2024-03/models/transformer_L16.onnx";
  std::filesystem::path out_path;
  int layers = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) std::exit(fail(arg + " needs a value"));
      return argv[++i];
    };
    if (arg == "--layers") {
      const std::string v = value();
      auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), layers);
      if (ec != std::errc() || end != v.data() + v.size()) return fail("--layers takes a whole number, not '" + v + "'");
    } else if (arg == "-o" || arg == "--output") {
      out_path = value();
    } else if (arg == "--template") {
      template_path = value();
    } else if (arg == "-h" || arg == "--help") {
      std::cout << "usage: gen-transformer --layers L -o OUT.onnx [--template transformer_L16.onnx]\n";
      return 0;
    } else {
      return fail("unknown argument '" + arg + "'");
    }
  }
  if (layers < 1 || layers > kMaxLayers) return fail("--layers must be from 1 to " + std::to_string(kMaxLayers));
  if (out_path.empty()) return fail("no output (-o OUT.onnx)");

  auto loaded = shapeprop::load_model(template_path);
  if (!loaded) return fail(loaded.error().str());
  onnx::ModelProto model = std::move(*loaded);
  auto& graph = *model.mutable_graph();

  // Blocks: the first node of each layer's block.
  std::vector<int> block_start;
  for (int i = 0; i < graph.node_size(); ++i) {
    auto l = layer_of_node(graph.node(i));
    if (l && *l == static_cast<int>(block_start.size())) block_start.push_back(i);
  }
  const int template_layers = static_cast<int>(block_start.size());
  if (template_layers < 2) return fail(template_path.string() + " has fewer than two layers to take a block from");
  // The suffix starts after the last block: at the first node after it that reads no
  // layer weight and whose pattern is not a block's (the final layer norm).
  int suffix_start = -1;
  for (int i = block_start.back(); i < graph.node_size(); ++i)
    if (graph.node(i).op_type() == "_aten_layer_norm_onnx" && !layer_of_node(graph.node(i))) {
      suffix_start = i;
      break;
    }
  if (suffix_start < 0) return fail("no final layer norm after the last block in " + template_path.string());

  // How far one layer moves each name's counter: block 1 and block 2 side by side (the
  // exporter's counters are global, so _val_N moves by every value a layer makes).
  if (template_layers < 3) return fail(template_path.string() + " has fewer than three layers to measure a block by");
  const int first = block_start[1];
  const int last = block_start[2];
  const int block2_end = template_layers > 3 ? block_start[3] : suffix_start;
  if (block2_end - last != last - first) return fail("blocks 1 and 2 of " + template_path.string() + " differ in size");
  std::map<std::string, int> per_layer;
  for (int i = first; i < last; ++i) {
    const NodeProto& a = graph.node(i);
    const NodeProto& b = graph.node(i + (last - first));
    if (a.op_type() != b.op_type() || a.output_size() != b.output_size())
      return fail("blocks 1 and 2 of " + template_path.string() + " differ at node " + std::to_string(i));
    for (int k = 0; k < a.output_size(); ++k) {
      auto [base_a, ka] = split_counter(a.output(k));
      auto [base_b, kb] = split_counter(b.output(k));
      if (base_a != base_b) return fail("blocks 1 and 2 name " + a.output(k) + " and " + b.output(k) + " differently");
      auto [it, fresh] = per_layer.emplace(base_a, kb - ka);
      if (!fresh && it->second != kb - ka) return fail("the counter of '" + base_a + "' moves unevenly between blocks");
    }
  }
  std::set<std::string> defined_in_blocks;
  for (int i = block_start[0]; i < suffix_start; ++i)
    for (const auto& o : graph.node(i).output()) defined_in_blocks.insert(o);
  std::set<std::string> defined_in_suffix;
  for (int i = suffix_start; i < graph.node_size(); ++i)
    for (const auto& o : graph.node(i).output()) defined_in_suffix.insert(o);

  auto shifted = [&](const std::string& name, int layers_later) {
    auto [base, k] = split_counter(name);
    auto it = per_layer.find(base);
    if (it == per_layer.end()) return name;
    return with_counter(base, k + layers_later * it->second);
  };
  std::unordered_map<std::string, std::string> source_of;  // a new value's name in the template
  // A copy of node `n` moved `d` layers later (weights of layer `layer`).
  auto moved = [&](const NodeProto& n, int d, std::optional<int> layer) {
    NodeProto r = n;
    for (auto& in : *r.mutable_input()) {
      if (auto l = layer_of_weight(in)) {
        in = weight_for_layer(in, layer.value_or(*l + d));
      } else if (defined_in_blocks.count(in) || defined_in_suffix.count(in)) {
        in = shifted(in, d);
      }
    }
    for (auto& o : *r.mutable_output()) {
      const std::string was = o;
      o = shifted(o, d);
      source_of[o] = was;
    }
    return r;
  };

  google::protobuf::RepeatedPtrField<NodeProto> nodes;
  const int kept_layers = std::min(layers, template_layers);
  const int kept_end = kept_layers < template_layers ? block_start[static_cast<size_t>(kept_layers)] : suffix_start;
  for (int i = 0; i < kept_end; ++i) {
    *nodes.Add() = graph.node(i);
    for (const auto& o : graph.node(i).output()) source_of[o] = o;
  }
  for (int layer = template_layers; layer < layers; ++layer)
    for (int i = first; i < last; ++i) *nodes.Add() = moved(graph.node(i), layer - 1, layer);
  const int d = layers - template_layers;
  for (int i = suffix_start; i < graph.node_size(); ++i) *nodes.Add() = moved(graph.node(i), d, std::nullopt);
  graph.mutable_node()->Swap(&nodes);
  for (auto& o : *graph.mutable_output()) o.set_name(shifted(o.name(), d));

  // The exporter's value_info: an entry per value it typed, in node order.
  std::unordered_map<std::string, const onnx::ValueInfoProto*> typed;
  for (const auto& vi : graph.value_info()) typed[vi.name()] = &vi;
  google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> value_info;
  for (const auto& n : graph.node())
    for (const auto& o : n.output()) {
      auto source = source_of.find(o);
      auto it = source == source_of.end() ? typed.end() : typed.find(source->second);
      if (it == typed.end()) continue;
      auto* vi = value_info.Add();
      *vi = *it->second;
      vi->set_name(o);
    }
  graph.mutable_value_info()->Swap(&value_info);

  // Weights: the template's, dropping layers beyond L, and layer 1's copied for new ones.
  google::protobuf::RepeatedPtrField<onnx::TensorProto> weights;
  std::vector<const onnx::TensorProto*> layer1;
  for (const auto& t : graph.initializer()) {
    auto l = layer_of_weight(t.name());
    if (!l) {
      *weights.Add() = t;
      continue;
    }
    if (*l == 1) layer1.push_back(&t);
    if (*l < layers) *weights.Add() = t;
  }
  // Layer weights stay together, in layer order, before the suffix's (as the exporter wrote them).
  google::protobuf::RepeatedPtrField<onnx::TensorProto> ordered;
  int inserted_after = -1;
  for (int i = 0; i < weights.size(); ++i) {
    *ordered.Add() = weights.Get(i);
    auto l = layer_of_weight(weights.Get(i).name());
    const bool last_layer_weight = l && *l == kept_layers - 1 &&
                                   (i + 1 == weights.size() || !layer_of_weight(weights.Get(i + 1).name()));
    if (last_layer_weight && inserted_after < 0) {
      inserted_after = i;
      for (int layer = template_layers; layer < layers; ++layer)
        for (const auto* t : layer1) {
          onnx::TensorProto copy = *t;
          copy.set_name(weight_for_layer(t->name(), layer));
          *ordered.Add() = std::move(copy);
        }
    }
  }
  graph.mutable_initializer()->Swap(&ordered);

  auto status = shapeprop::save_model(model, out_path, shapeprop::format_for_path(out_path).value_or(shapeprop::Format::Binary));
  if (!status.ok()) return fail(status.error().str());
  size_t function_nodes = 0;
  for (const auto& f : model.functions()) function_nodes += static_cast<size_t>(f.node_size());
  std::cout << out_path.string() << ": " << layers << " layers, " << graph.node_size() << " graph nodes, "
            << model.functions_size() << " functions (" << function_nodes << " nodes)\n";
  return 0;
}
