// gen-fused-transformer: the corpus's transformer with its blocks written as the fusion
// passes of ONNX Runtime's transformers optimizer, onnxscript's rewriter and the genai
// model builder leave them: ops of com.microsoft (and SimplifiedLayerNormalization in
// the default domain) in place of the exporter's subgraphs, on the template's own
// weights. The model is for the types test of schemas/ (tests/schemas): it is run on ONNX
// Runtime, its values annotated by onnx-infer-shapes are compared with what ONNX Runtime
// computes. It does not compute what the template computes (the blocks mix layer-norm
// and RMS-norm styles, and weights are quantized), only the same kind of thing.
//
//   gen-fused-transformer -o OUT.onnx [--template transformer_L16.onnx]
//
// Block i takes style i mod 4:
//   0  ORT transformers optimizer (GPT-2): Attention with merged Q/K/V, FusedMatMul with
//      transB for the projections, SkipLayerNormalization, FastGelu with bias;
//   1  onnxscript's rewriter: MatMul projections, MultiHeadAttention with bias,
//      SkipLayerNormalization, BiasGelu;
//   2  genai model builder: MatMulNBits (4-bit weights) with bias, RotaryEmbedding of Q
//      and K, GroupQueryAttention (sequence lengths computed from the input's shape, as
//      the builder computes them), SkipSimplifiedLayerNormalization, QuickGelu;
//   3  Attention with qkv_hidden_sizes, Gelu after MatMul and Add.
// The embeddings are one EmbedLayerNormalization (ids and positions cast to int32, as the
// fusion inserts); each block ends in the SkipLayerNormalization that is the next
// block's first norm; after the last, SimplifiedLayerNormalization and a FusedMatMul
// with the tied embedding (transB) give the logits.
#include <cmath>
#include <cstring>
#include <iostream>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "shapeprop/io.h"

namespace {

using onnx::NodeProto;
using onnx::TensorProto;

constexpr int kHeads = 4;
constexpr int kRotaryPositions = 64;

class Builder {
 public:
  explicit Builder(const onnx::ModelProto& tmpl) {
    for (const auto& t : tmpl.graph().initializer()) weights_[t.name()] = &t;
    auto* g = model.mutable_graph();
    g->set_name("fused_transformer");
    model.set_ir_version(8);
    auto add_import = [&](const char* domain, int version) {
      auto* o = model.add_opset_import();
      o->set_domain(domain);
      o->set_version(version);
    };
    add_import("", 17);
    add_import("com.microsoft", 1);
  }

  onnx::ModelProto model;

  // The template's weight as floats, and its dims.
  std::vector<float> floats(const std::string& name, std::vector<int64_t>* dims = nullptr) const {
    auto it = weights_.find(name);
    if (it == weights_.end()) throw std::runtime_error("the template has no weight '" + name + "'");
    const TensorProto& t = *it->second;
    if (dims) dims->assign(t.dims().begin(), t.dims().end());
    std::vector<float> v(t.raw_data().size() / sizeof(float));
    std::memcpy(v.data(), t.raw_data().data(), v.size() * sizeof(float));
    if (v.empty()) v.assign(t.float_data().begin(), t.float_data().end());
    return v;
  }
  // The template's weight, copied once into the model.
  std::string weight(const std::string& name) {
    if (!added_.insert(name).second) return name;
    *model.mutable_graph()->add_initializer() = *weights_.at(name);
    return name;
  }
  std::string tensor(const std::string& name, int32_t type, std::vector<int64_t> dims, const void* data, size_t bytes) {
    auto* t = model.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(type);
    for (auto d : dims) t->add_dims(d);
    t->set_raw_data(std::string(static_cast<const char*>(data), bytes));
    return name;
  }
  std::string floats_tensor(const std::string& name, std::vector<int64_t> dims, const std::vector<float>& v) {
    return tensor(name, TensorProto::FLOAT, std::move(dims), v.data(), v.size() * sizeof(float));
  }

  // [rows, cols] -> [cols, rows]
  static std::vector<float> transposed(const std::vector<float>& w, int64_t rows, int64_t cols) {
    std::vector<float> t(w.size());
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) t[static_cast<size_t>(c * rows + r)] = w[static_cast<size_t>(r * cols + c)];
    return t;
  }

  NodeProto& node(const std::string& op, std::vector<std::string> inputs, std::vector<std::string> outputs,
                  const std::string& domain = "") {
    NodeProto& n = *model.mutable_graph()->add_node();
    n.set_op_type(op);
    n.set_domain(domain);
    n.set_name(outputs.empty() ? op : outputs.front());
    for (auto& i : inputs) n.add_input(i);
    for (auto& o : outputs) n.add_output(o);
    return n;
  }
  NodeProto& ms(const std::string& op, std::vector<std::string> inputs, std::vector<std::string> outputs) {
    return node(op, std::move(inputs), std::move(outputs), "com.microsoft");
  }
  static void attr(NodeProto& n, const std::string& name, int64_t v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  static void attr(NodeProto& n, const std::string& name, std::vector<int64_t> v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (auto x : v) a->add_ints(x);
  }

  // Linear weight [out, in] of the template as MatMul's right operand [in, out].
  std::string matmul_weight(const std::string& name) {
    std::vector<int64_t> d;
    auto w = floats(name, &d);
    return floats_tensor(name + ".T", {d[1], d[0]}, transposed(w, d[0], d[1]));
  }

  // MatMulNBits inputs for a Linear weight [N, K]: 4-bit symmetric blocks of 32 along K
  // (zero point 8, the default), and their scales.
  std::pair<std::string, std::string> quantized(const std::string& name) {
    std::vector<int64_t> d;
    auto w = floats(name, &d);
    const int64_t n_rows = d[0], k = d[1], blocks = k / 32;
    std::vector<uint8_t> packed(static_cast<size_t>(n_rows * blocks * 16));
    std::vector<float> scales(static_cast<size_t>(n_rows * blocks));
    for (int64_t n = 0; n < n_rows; ++n)
      for (int64_t b = 0; b < blocks; ++b) {
        float amax = 0;
        for (int64_t i = 0; i < 32; ++i) amax = std::max(amax, std::fabs(w[static_cast<size_t>(n * k + b * 32 + i)]));
        const float scale = amax > 0 ? amax / 7 : 1;
        scales[static_cast<size_t>(n * blocks + b)] = scale;
        for (int64_t i = 0; i < 32; ++i) {
          const long q = std::lround(w[static_cast<size_t>(n * k + b * 32 + i)] / scale) + 8;
          const auto nibble = static_cast<uint8_t>(std::min(15L, std::max(0L, q)));
          auto& byte = packed[static_cast<size_t>((n * blocks + b) * 16 + i / 2)];
          byte = static_cast<uint8_t>(i % 2 ? byte | (nibble << 4) : nibble);
        }
      }
    return {tensor(name + ".q4", TensorProto::UINT8, {n_rows, blocks, 16}, packed.data(), packed.size()),
            floats_tensor(name + ".scales", {n_rows * blocks}, scales)};
  }
  std::string matmul_nbits(const std::string& x, const std::string& weight, const std::string& bias, const std::string& out) {
    std::vector<int64_t> d;
    floats(weight, &d);
    auto [q, scales] = quantized(weight);
    NodeProto& n = ms("MatMulNBits", {x, q, scales, "", "", bias}, {out});
    attr(n, "K", d[1]);
    attr(n, "N", d[0]);
    attr(n, "bits", 4);
    attr(n, "block_size", 32);
    return out;
  }

  std::string concat_weights(const std::string& prefix, bool bias) {
    std::vector<float> all;
    int64_t in = 0, out = 0;
    for (const char* p : {"q_proj", "k_proj", "v_proj"}) {
      std::vector<int64_t> d;
      auto w = floats(prefix + p + (bias ? ".bias" : ".weight"), &d);
      if (!bias) {
        in = d[1];
        out += d[0];
        w = transposed(w, d[0], d[1]);
      }
      all.insert(all.end(), w.begin(), w.end());
    }
    if (bias) return floats_tensor(prefix + "qkv.bias", {static_cast<int64_t>(all.size())}, all);
    // [in, out] blocks side by side: row r is q's row r, then k's, then v's.
    std::vector<float> merged(all.size());
    const int64_t each = out / 3;
    for (int64_t r = 0; r < in; ++r)
      for (int part = 0; part < 3; ++part)
        for (int64_t c = 0; c < each; ++c)
          merged[static_cast<size_t>(r * out + part * each + c)] = all[static_cast<size_t>(part * in * each + r * each + c)];
    return floats_tensor(prefix + "qkv.weight", {in, out}, merged);
  }

 private:
  std::map<std::string, const TensorProto*> weights_;
  std::set<std::string> added_;
};

}  // namespace

int main(int argc, char** argv) {
  std::string out_path, template_path = std::string(SHAPEPROP_CORPUS_DIR) + "/torchlib-2024-03/models/transformer_L16.onnx";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if ((a == "-o" || a == "--template") && i + 1 < argc)
      (a == "-o" ? out_path : template_path) = argv[++i];
    else {
      std::cerr << "usage: gen-fused-transformer -o OUT.onnx [--template transformer_L16.onnx]\n";
      return 2;
    }
  }
  if (out_path.empty()) {
    std::cerr << "gen-fused-transformer: error: no output given (-o OUT.onnx)\n";
    return 2;
  }
  auto loaded = shapeprop::load_model(template_path);
  if (!loaded) {
    std::cerr << loaded.error().str() << '\n';
    return 2;
  }
  try {
    Builder b(*loaded);
    auto* g = b.model.mutable_graph();
    int layers = 0;
    while (true) {
      try {
        b.floats("transformer.h." + std::to_string(layers) + ".ln_1.weight");
      } catch (const std::exception&) {
        break;
      }
      ++layers;
    }
    auto add_input = [&](const char* name) {
      auto* in = g->add_input();
      in->set_name(name);
      auto* t = in->mutable_type()->mutable_tensor_type();
      t->set_elem_type(TensorProto::INT64);
      t->mutable_shape()->add_dim()->set_dim_param("batch");
      t->mutable_shape()->add_dim()->set_dim_param("seq");
    };
    add_input("input_ids");
    add_input("position_ids");

    // What the fusions insert: int32 ids for EmbedLayerNormalization; for
    // GroupQueryAttention, each sequence's last index and the total length, from shapes.
    Builder::attr(b.node("Cast", {"input_ids"}, {"input_ids_int32"}), "to", TensorProto::INT32);
    Builder::attr(b.node("Cast", {"position_ids"}, {"position_ids_int32"}), "to", TensorProto::INT32);
    b.node("Shape", {"input_ids"}, {"ids_shape"});
    const int64_t zero = 0, one = 1;
    b.tensor("index_0", TensorProto::INT64, {1}, &zero, sizeof zero);
    b.tensor("index_1", TensorProto::INT64, {1}, &one, sizeof one);
    b.node("Gather", {"ids_shape", "index_0"}, {"batch_size"});
    b.node("Gather", {"ids_shape", "index_1"}, {"seq_len"});
    b.node("Sub", {"seq_len", "index_1"}, {"last_index"});
    b.node("Expand", {"last_index", "batch_size"}, {"last_indices"});
    Builder::attr(b.node("Cast", {"last_indices"}, {"seqlens_k"}), "to", TensorProto::INT32);
    Builder::attr(b.node("Cast", {"seq_len"}, {"total_sequence_length"}), "to", TensorProto::INT32);

    // Rotary caches for head size 8 (GPT-NeoX style angles).
    const int64_t half = 32 / kHeads / 2;
    std::vector<float> cos_cache, sin_cache;
    for (int64_t p = 0; p < kRotaryPositions; ++p)
      for (int64_t i = 0; i < half; ++i) {
        const double angle = static_cast<double>(p) * std::pow(10000.0, -2.0 * static_cast<double>(i) / (2.0 * half));
        cos_cache.push_back(static_cast<float>(std::cos(angle)));
        sin_cache.push_back(static_cast<float>(std::sin(angle)));
      }
    b.floats_tensor("rotary.cos", {kRotaryPositions, half}, cos_cache);
    b.floats_tensor("rotary.sin", {kRotaryPositions, half}, sin_cache);

    b.ms("EmbedLayerNormalization",
         {"input_ids_int32", "", b.weight("transformer.wte.weight"), b.weight("transformer.wpe.weight"), "",
          b.weight("transformer.h.0.ln_1.weight"), b.weight("transformer.h.0.ln_1.bias"), "", "position_ids_int32"},
         {"h0.x", "mask_index", "h0.residual"});

    for (int i = 0; i < layers; ++i) {
      const std::string w = "transformer.h." + std::to_string(i) + ".";
      const std::string v = "h" + std::to_string(i) + ".";
      const std::string x = v + "x", residual = v + "residual";
      const int style = i % 4;
      std::string attn = v + "attention", mlp;
      if (style == 0 || style == 3) {
        NodeProto& n = b.ms("Attention", {x, b.concat_weights(w + "attn.", false), b.concat_weights(w + "attn.", true)}, {attn});
        Builder::attr(n, "num_heads", kHeads);
        Builder::attr(n, "unidirectional", 1);
        if (style == 3) Builder::attr(n, "qkv_hidden_sizes", std::vector<int64_t>{32, 32, 32});
      } else if (style == 1) {
        for (const char* p : {"q", "k", "v"}) b.node("MatMul", {x, b.matmul_weight(w + "attn." + p + "_proj.weight")}, {v + p});
        NodeProto& n = b.ms("MultiHeadAttention", {v + "q", v + "k", v + "v", b.concat_weights(w + "attn.", true)}, {attn});
        Builder::attr(n, "num_heads", kHeads);
        Builder::attr(n, "unidirectional", 1);
      } else {
        for (const char* p : {"q", "k", "v"}) b.matmul_nbits(x, w + "attn." + p + "_proj.weight", b.weight(w + "attn." + p + "_proj.bias"), v + p);
        for (const char* p : {"q", "k"})
          Builder::attr(b.ms("RotaryEmbedding", {v + p, "position_ids", "rotary.cos", "rotary.sin"}, {v + p + "_rotated"}),
                        "num_heads", kHeads);
        NodeProto& n = b.ms("GroupQueryAttention",
                            {v + "q_rotated", v + "k_rotated", v + "v", "", "", "seqlens_k", "total_sequence_length"},
                            {attn, v + "present_key", v + "present_value"});
        Builder::attr(n, "num_heads", kHeads);
        Builder::attr(n, "kv_num_heads", kHeads);
      }
      // Output projection, and the second norm with the residual (and the projection's bias).
      const std::string projected = v + "attention_projected", x2 = v + "x2", residual2 = v + "residual2";
      if (style == 0)
        Builder::attr(b.ms("FusedMatMul", {attn, b.weight(w + "attn.c_proj.weight")}, {projected}), "transB", 1);
      else if (style == 2)
        b.matmul_nbits(attn, w + "attn.c_proj.weight", "", projected);
      else
        b.node("MatMul", {attn, b.matmul_weight(w + "attn.c_proj.weight")}, {projected});
      if (style == 2)
        b.ms("SkipSimplifiedLayerNormalization", {projected, residual, b.weight(w + "ln_2.weight"), b.weight(w + "attn.c_proj.bias")},
             {x2, "", "", residual2});
      else
        b.ms("SkipLayerNormalization",
             {projected, residual, b.weight(w + "ln_2.weight"), b.weight(w + "ln_2.bias"), b.weight(w + "attn.c_proj.bias")},
             {x2, "", "", residual2});
      // MLP.
      const std::string fc = v + "fc", act = v + "activation";
      if (style == 0) {
        Builder::attr(b.ms("FusedMatMul", {x2, b.weight(w + "mlp.c_fc.weight")}, {fc}), "transB", 1);
        b.ms("FastGelu", {fc, b.weight(w + "mlp.c_fc.bias")}, {act});
      } else if (style == 1) {
        b.node("MatMul", {x2, b.matmul_weight(w + "mlp.c_fc.weight")}, {fc});
        b.ms("BiasGelu", {fc, b.weight(w + "mlp.c_fc.bias")}, {act});
      } else if (style == 2) {
        b.matmul_nbits(x2, w + "mlp.c_fc.weight", b.weight(w + "mlp.c_fc.bias"), fc);
        b.ms("QuickGelu", {fc}, {act});
      } else {
        b.node("MatMul", {x2, b.matmul_weight(w + "mlp.c_fc.weight")}, {v + "fc_unbiased"});
        b.node("Add", {v + "fc_unbiased", b.weight(w + "mlp.c_fc.bias")}, {fc});
        b.ms("Gelu", {fc}, {act});
      }
      mlp = v + "mlp";
      if (style == 2)
        b.matmul_nbits(act, w + "mlp.c_proj.weight", "", mlp);
      else if (style == 0)
        Builder::attr(b.ms("FusedMatMul", {act, b.weight(w + "mlp.c_proj.weight")}, {mlp}), "transB", 1);
      else
        b.node("MatMul", {act, b.matmul_weight(w + "mlp.c_proj.weight")}, {mlp});
      // The next block's first norm, or the end.
      const std::string next = "h" + std::to_string(i + 1) + ".";
      if (i + 1 < layers) {
        const std::string nw = "transformer.h." + std::to_string(i + 1) + ".";
        b.ms("SkipLayerNormalization",
             {mlp, residual2, b.weight(nw + "ln_1.weight"), b.weight(nw + "ln_1.bias"), b.weight(w + "mlp.c_proj.bias")},
             {next + "x", "", "", next + "residual"});
      } else {
        b.node("Add", {mlp, b.weight(w + "mlp.c_proj.bias")}, {v + "mlp_biased"});
        b.node("Add", {v + "mlp_biased", residual2}, {"final.residual"});
      }
    }
    b.node("SimplifiedLayerNormalization", {"final.residual", b.weight("transformer.ln_f.weight")}, {"final.x"});
    Builder::attr(b.ms("FusedMatMul", {"final.x", b.weight("transformer.wte.weight")}, {"logits"}), "transB", 1);
    auto* out = g->add_output();
    out->set_name("logits");
    // As the exporter declares it: float of rank 3, dims left to inference.
    auto* logits = out->mutable_type()->mutable_tensor_type();
    logits->set_elem_type(TensorProto::FLOAT);
    for (int d = 0; d < 3; ++d) logits->mutable_shape()->add_dim();
    auto status = shapeprop::save_model(b.model, out_path, shapeprop::format_for_path(out_path).value_or(shapeprop::Format::Binary));
    if (!status) {
      std::cerr << status.error().str() << '\n';
      return 2;
    }
  } catch (const std::exception& e) {
    std::cerr << "gen-fused-transformer: error: " << e.what() << '\n';
    return 2;
  }
  return 0;
}
