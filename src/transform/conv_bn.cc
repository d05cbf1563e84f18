// BatchNormalization in inference after a Conv, ConvTranspose or Gemm, fused into that
// node's weight and bias (issue 25, family 11, as PyTorch's dynamo exporter leaves every
// conv-bn block; issue 38 for ConvTranspose and Gemm, as onnxscript's fuse_batchnorm does):
//   s  = scale / sqrt(var + epsilon)          (per output channel m)
//   W' = W * s[m]                             (every weight of channel m)
//   B' = (B - mean) * s + bias                (B = 0 without a bias)
// computed in double and rounded once to the element type. For Conv it is what ONNX
// Runtime's own ConvBNFusion computes when it loads the model, so the outputs agree with
// the runtime's to within the rounding of the fused weights, not bit for bit (conv-bn, a
// default pass); the runtime fuses nothing into ConvTranspose or Gemm, so there the
// outputs differ from the unfused model's by that rounding (bn-transpose-gemm, opt-in).
//
// The channel m of a weight: Conv's W is [M, C/group, k...] (m is the first index);
// ConvTranspose's is [C, M/group, k...], so the weight at (c, j, ...) has m = g * M/group + j
// with g = c / (C/group) its group; Gemm's B is [K, M] (m the column), or [M, K] with
// transB. Gemm only with alpha and beta 1 and a bias of shape [M] or none (a bias that
// broadcasts from [1] or along rows, or a scaled one, needs more than B').
//
// Only where nothing is held twice: the weight must be a stored constant that only this
// node reads (the new one takes its place; a weight shared with another node stays), its
// data in the model (external data is never read), float or double; the node's output
// only the BatchNormalization's input; the statistics constants of shape [M]; the
// BatchNormalization in inference (one output, no training_mode or a 0 one).
#include <cmath>

#include "rewrite_support.h"
#include "tensor_values.h"

namespace shapeprop::transform {

namespace {

using onnx::NodeProto;
using onnx::TensorProto;

constexpr int64_t kMaxWeightElements = int64_t{1} << 24;

// A float or double tensor's elements (nullopt for other types, external data, data that
// does not match the dims, or more than kMaxWeightElements).
std::optional<std::vector<double>> reals_of(const TensorProto& t) {
  if (t.data_type() != TensorProto::FLOAT && t.data_type() != TensorProto::DOUBLE) return std::nullopt;
  auto v = decode(t, kMaxWeightElements);
  if (!v) return std::nullopt;
  return std::move(v->reals);
}

TensorProto tensor_of(int32_t type, std::vector<int64_t> dims, std::vector<double> values) {
  return encode(Values{type, std::move(dims), /*real=*/true, std::move(values), {}});
}

// Which output channel each weight element (by its index in the stored order) scales with.
struct Layout {
  int64_t channels;       // M
  size_t inner;           // elements that one index of the channel's dim spans
  size_t per_group = 0;   // ConvTranspose: M/group; 0 elsewhere
  size_t group_size = 0;  // ConvTranspose: the elements of one group's weights
  size_t channel(size_t i) const {
    if (per_group == 0) return (i / inner) % static_cast<size_t>(channels);
    return (i / group_size) * per_group + (i / inner) % per_group;
  }
};

// The weight's output channels: Conv [M, ...], ConvTranspose [C, M/group, ...], Gemm [K, M]
// or [M, K] (transB); nullopt for what the fusion does not take.
std::optional<Layout> channels_of(const NodeProto& n, const TensorProto& w) {
  const std::vector<int64_t> dims(w.dims().begin(), w.dims().end());
  for (int64_t d : dims)
    if (d <= 0) return std::nullopt;
  auto elements_after = [&](size_t axis) {
    size_t p = 1;
    for (size_t i = axis + 1; i < dims.size(); ++i) p *= static_cast<size_t>(dims[i]);
    return p;
  };
  if (is_op(n, "Conv")) return Layout{dims[0], elements_after(0)};
  if (is_op(n, "ConvTranspose")) {
    const auto group = int_attribute(n, "group");
    const int64_t g = group.value_or(1);
    if (dims.size() < 3 || (attribute(n, "group") && !group) || g < 1 || dims[0] % g != 0) return std::nullopt;
    const size_t inner = elements_after(1);
    const auto per_group = static_cast<size_t>(dims[1]);
    return Layout{dims[1] * g, inner, per_group, static_cast<size_t>(dims[0] / g) * per_group * inner};
  }
  // Gemm: Y = A * B + C exactly (alpha and beta 1).
  for (const char* scale : {"alpha", "beta"})
    if (const auto* a = attribute(n, scale); a && (a->type() != onnx::AttributeProto::FLOAT || a->f() != 1.0f))
      return std::nullopt;
  const auto trans = int_attribute(n, "transB");
  if (dims.size() != 2 || (attribute(n, "transB") && !trans)) return std::nullopt;
  if (trans.value_or(0) != 0) return Layout{dims[0], elements_after(0)};
  return Layout{dims[1], 1};
}

struct Fusion {
  NodeId conv;
  TensorProto weight, bias;
};

class ConvBn {
 public:
  // `conv_only`: a Conv (conv-bn), otherwise a ConvTranspose or Gemm (bn-transpose-gemm).
  ConvBn(const MutableBody& body, bool conv_only) : body_(body), conv_only_(conv_only) {}

  std::optional<Fusion> match(NodeId bn) const {
    const NodeProto& n = body_.node(bn);
    if (!is_op(n, "BatchNormalization") || has_reference(n) || body_.num_outputs(bn) != 1 || body_.num_inputs(bn) != 5)
      return std::nullopt;
    if (const auto training = int_attribute(n, "training_mode"); training && *training != 0) return std::nullopt;
    if (attribute(n, "spatial") || attribute(n, "is_test") || attribute(n, "consumed_inputs")) return std::nullopt;  // old forms
    const ValueId y = body_.input(bn, 0);
    const NodeId conv = body_.producer(y);
    if (conv == kNone || body_.uses(y) != 1) return std::nullopt;
    const NodeProto& c = body_.node(conv);
    const bool op = conv_only_ ? is_op(c, "Conv") : (is_op(c, "ConvTranspose") || is_op(c, "Gemm"));
    if (!op || has_reference(c) ||
        body_.num_outputs(conv) != 1 || body_.num_inputs(conv) < 2)
      return std::nullopt;
    const ValueId w = body_.input(conv, 1);
    const TensorProto* stored = body_.stored_constant(w);
    if (!stored || body_.uses(w) != 1 || stored->dims_size() < 1) return std::nullopt;
    const auto layout = channels_of(c, *stored);
    if (!layout) return std::nullopt;
    const int64_t channels = layout->channels;
    auto weight = reals_of(*stored);
    if (!weight) return std::nullopt;
    const int32_t type = stored->data_type();
    // scale, bias, mean, var: constants of this type and shape [M].
    std::vector<std::vector<double>> stats;
    for (size_t k = 1; k <= 4; ++k) {
      auto t = body_.constant(body_.input(bn, k));
      if (!t || t->data_type() != type || t->dims_size() != 1 || t->dims(0) != channels) return std::nullopt;
      auto v = reals_of(*t);
      if (!v) return std::nullopt;
      stats.push_back(std::move(*v));
    }
    std::vector<double> bias(static_cast<size_t>(channels), 0.0);
    if (body_.num_inputs(conv) >= 3 && body_.input(conv, 2) != ir::kNoValue) {
      auto t = body_.constant(body_.input(conv, 2));
      if (!t || t->data_type() != type || t->dims_size() != 1 || t->dims(0) != channels) return std::nullopt;
      auto v = reals_of(*t);
      if (!v) return std::nullopt;
      bias = std::move(*v);
    }
    const double epsilon = [&] {
      const auto* a = attribute(n, "epsilon");
      return a && a->type() == onnx::AttributeProto::FLOAT ? static_cast<double>(a->f()) : 1e-5;
    }();
    std::vector<double> factor(static_cast<size_t>(channels));
    for (size_t m = 0; m < static_cast<size_t>(channels); ++m) {
      const double denominator = stats[3][m] + epsilon;
      if (!(denominator > 0) || !std::isfinite(denominator)) return std::nullopt;  // the runtime's NaN to give
      factor[m] = stats[0][m] / std::sqrt(denominator);
      bias[m] = (bias[m] - stats[2][m]) * factor[m] + stats[1][m];
    }
    for (size_t i = 0; i < weight->size(); ++i) (*weight)[i] *= factor[layout->channel(i)];
    Fusion f;
    f.conv = conv;
    f.weight = tensor_of(type, std::vector<int64_t>(stored->dims().begin(), stored->dims().end()), std::move(*weight));
    f.bias = tensor_of(type, {channels}, std::move(bias));
    return f;
  }

 private:
  const MutableBody& body_;
  bool conv_only_;
};

bool fuse_batchnorms(PassContext& ctx, Counter counter, bool conv_only) {
  if (!ctx.may_hold({"BatchNormalization"})) return false;  // each match starts at one of these
  MutableBody& body = ctx.body();
  const ConvBn fusions(body, conv_only);
  // In a dry run only whether a fusion applies matters, but the match computes the fused
  // weights; dry runs stop at the first, so that is paid once.
  return rewrite_matches(
      ctx, counter, [&](NodeId id) { return fusions.match(id); },
      [&](NodeId id, auto& f) {
        NodeProto conv = body.node(f->conv);
        const ValueId x = body.input(f->conv, 0);
        const ValueId w = body.add_constant(std::move(f->weight), std::string(body.name(body.input(f->conv, 1))) + "_fused");
        const ValueId b = body.add_constant(std::move(f->bias), "fused_bias");
        body.replace_node(id, std::move(conv), {x, w, b});
        return true;
      });
}

}  // namespace

bool fuse_conv_batchnorm(PassContext& ctx) { return fuse_batchnorms(ctx, Counter::BatchNormsFused, true); }

// Opt-in: ONNX Runtime fuses nothing into a ConvTranspose or Gemm, so the fused weights'
// rounding changes what the model computes (by up to 6e-5 relative on onnxscript's
// fuse_batchnorm test models), where the Conv fusion is what the runtime does itself.
bool fuse_batchnorm_transpose_gemm(PassContext& ctx) {
  return fuse_batchnorms(ctx, Counter::BatchNormsFusedElsewhere, false);
}

}  // namespace shapeprop::transform
