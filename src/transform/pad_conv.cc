// A Pad that only feeds a Conv (or ConvInteger) folded into the conv's own padding
// (issue 38, onnxscript's fuse_pad_into_conv): Conv(Pad(x, pads)) is Conv(x) with the
// spatial pads added to the conv's, since the conv pads with exactly what the Pad would
// have written. That holds only where:
//  - the Pad is mode "constant" with constant, non-negative pads (and constant axes, when
//    given) that leave N and C alone;
//  - the pad value is what the conv pads with: +0.0 for Conv (-0.0 would differ in the
//    sign of an all-padding window's zero), and for ConvInteger its x_zero_point (0
//    without one), which is what the operator pads with: it computes on x - x_zero_point;
//  - the conv pads explicitly (auto_pad NOTSET or absent), pads nothing (VALID), or pads
//    SAME_UPPER/SAME_LOWER (undilated) where the total is fixed: stride 1 along the axis
//    (the total is the kernel's size - 1 for any input), or a padded input dim the facts
//    know;
//  - the Pad's output is read by that conv alone.
#include "rewrite_support.h"
#include "tensor_values.h"

namespace shapeprop::transform {

namespace {

using onnx::NodeProto;

// The one element of a constant (nullopt for several, none, or a type decode() does not
// hold). Reals as doubles, integers as int64.
std::optional<Values> one_element(const MutableBody& body, ValueId v) {
  const auto t = body.constant(v);
  if (!t) return std::nullopt;
  auto values = decode(*t, 1);
  if (!values || values->size() != 1) return std::nullopt;
  return values;
}

// The value is exactly +0.0 (a real) or the integer `z`.
bool is_pad_value(const Values& v, int64_t z) {
  if (v.real) return z == 0 && v.reals[0] == 0.0 && !std::signbit(v.reals[0]);
  return v.ints[0] == z;
}

struct Fusion {
  ValueId x;                  // the Pad's input
  std::vector<int64_t> pads;  // the conv's new spatial pads (begins, then ends)
};

class PadConv {
 public:
  explicit PadConv(const MutableBody& body) : body_(body) {}

  std::optional<Fusion> match(NodeId conv) const {
    const NodeProto& c = body_.node(conv);
    const bool integer = is_op(c, "ConvInteger");
    if ((!integer && !is_op(c, "Conv")) || has_reference(c) || body_.num_inputs(conv) < 2 || body_.num_outputs(conv) != 1)
      return std::nullopt;
    const ValueId padded = body_.input(conv, 0);
    const NodeId pad = body_.producer(padded);
    if (pad == kNone || body_.uses(padded) != 1 || body_.is_interface(padded)) return std::nullopt;
    const NodeProto& p = body_.node(pad);
    if (!is_op(p, "Pad") || has_reference(p) || body_.num_outputs(pad) != 1 || body_.num_inputs(pad) < 1) return std::nullopt;
    if (const auto* mode = attribute(p, "mode"); mode && mode->s() != "constant") return std::nullopt;
    const ValueId x = body_.input(pad, 0);
    const auto rank = rank_of(body_.fact(x));
    if (!rank || *rank < 3) return std::nullopt;
    const auto r = static_cast<int64_t>(*rank);

    // What the conv pads with.
    int64_t zero_point = 0;
    if (integer && body_.num_inputs(conv) >= 3 && body_.input(conv, 2) != ir::kNoValue) {
      const auto z = one_element(body_, body_.input(conv, 2));
      if (!z || z->real) return std::nullopt;
      zero_point = z->ints[0];
    }

    // The Pad's pads along every axis (begins, then ends) and its value.
    std::vector<int64_t> full(static_cast<size_t>(2 * r), 0);
    // Pad-11 on: pads, value and axes are inputs (Pad-2's attributes are left alone).
    if (body_.num_inputs(pad) < 2 || attribute(p, "pads") || attribute(p, "value")) return std::nullopt;
    const auto pads = constant_ints(body_, body_.input(pad, 1));
    if (!pads) return std::nullopt;
    if (body_.num_inputs(pad) >= 3 && body_.input(pad, 2) != ir::kNoValue) {
      const auto v = one_element(body_, body_.input(pad, 2));
      if (!v || !is_pad_value(*v, zero_point)) return std::nullopt;
    } else if (zero_point != 0) {
      return std::nullopt;
    }
    std::vector<int64_t> axes;
    if (body_.num_inputs(pad) >= 4 && body_.input(pad, 3) != ir::kNoValue) {
      const auto given = constant_ints(body_, body_.input(pad, 3));
      if (!given) return std::nullopt;
      std::vector<bool> seen(static_cast<size_t>(r), false);
      for (int64_t a : *given) {
        if (a < -r || a >= r) return std::nullopt;
        if (a < 0) a += r;
        if (seen[static_cast<size_t>(a)]) return std::nullopt;
        seen[static_cast<size_t>(a)] = true;
        axes.push_back(a);
      }
    } else {
      for (int64_t a = 0; a < r; ++a) axes.push_back(a);
    }
    const auto n = static_cast<int64_t>(axes.size());
    if (static_cast<int64_t>(pads->size()) != 2 * n) return std::nullopt;
    for (int64_t i = 0; i < n; ++i) {
      full[static_cast<size_t>(axes[static_cast<size_t>(i)])] = (*pads)[static_cast<size_t>(i)];
      full[static_cast<size_t>(axes[static_cast<size_t>(i)] + r)] = (*pads)[static_cast<size_t>(i + n)];
    }
    for (int64_t v : full)
      if (v < 0) return std::nullopt;
    if (full[0] != 0 || full[1] != 0 || full[static_cast<size_t>(r)] != 0 || full[static_cast<size_t>(r + 1)] != 0)
      return std::nullopt;

    // The conv's own pads along the spatial axes.
    const auto spatial = static_cast<size_t>(r - 2);
    const auto conv_pads = this->conv_pads(conv, padded, spatial);
    if (!conv_pads) return std::nullopt;
    Fusion f{x, std::vector<int64_t>(2 * spatial)};
    for (size_t i = 0; i < spatial; ++i) {
      f.pads[i] = (*conv_pads)[i] + full[i + 2];
      f.pads[i + spatial] = (*conv_pads)[i + spatial] + full[i + 2 + static_cast<size_t>(r)];
    }
    return f;
  }

 private:
  // The pads a conv reading `input` applies, begins then ends, as explicit numbers.
  std::optional<std::vector<int64_t>> conv_pads(NodeId conv, ValueId input, size_t spatial) const {
    const NodeProto& c = body_.node(conv);
    const auto* auto_pad = attribute(c, "auto_pad");
    const std::string mode = auto_pad ? auto_pad->s() : "NOTSET";
    const auto given = ints_attribute(c, "pads");
    if (attribute(c, "pads") && !given) return std::nullopt;
    if (mode == "NOTSET") {
      if (!given) return std::vector<int64_t>(2 * spatial, 0);
      if (given->size() != 2 * spatial) return std::nullopt;
      for (int64_t v : *given)
        if (v < 0) return std::nullopt;
      return given;
    }
    if (given) return std::nullopt;  // pads beside an auto_pad: not ours to read
    if (mode == "VALID") return std::vector<int64_t>(2 * spatial, 0);
    if (mode != "SAME_UPPER" && mode != "SAME_LOWER") return std::nullopt;
    auto per_axis = [&](std::string_view name) -> std::optional<std::vector<int64_t>> {
      const auto v = ints_attribute(c, name);
      if (!v) return attribute(c, name) ? std::nullopt : std::optional(std::vector<int64_t>(spatial, 1));
      if (v->size() != spatial) return std::nullopt;
      for (int64_t e : *v)
        if (e < 1) return std::nullopt;
      return v;
    };
    const auto strides = per_axis("strides");
    const auto dilations = per_axis("dilations");
    if (!strides || !dilations) return std::nullopt;
    // ONNX Runtime refuses SAME padding of a dilated kernel: a model it runs stays one.
    for (int64_t d : *dilations)
      if (d != 1) return std::nullopt;
    std::vector<int64_t> kernel;
    if (const auto k = ints_attribute(c, "kernel_shape")) {
      kernel = *k;
    } else {
      const auto* w = known_dims(body_.fact(body_.input(conv, 1)));
      if (!w || w->size() != spatial + 2) return std::nullopt;
      for (size_t i = 2; i < w->size(); ++i) {
        const auto d = (*w)[i].as_constant();
        if (!d) return std::nullopt;
        kernel.push_back(*d);
      }
    }
    if (kernel.size() != spatial) return std::nullopt;
    const auto* in = known_dims(body_.fact(input));
    std::vector<int64_t> pads(2 * spatial);
    for (size_t i = 0; i < spatial; ++i) {
      if (kernel[i] < 1) return std::nullopt;
      int64_t total = kernel[i] - 1;  // stride 1: whatever the size
      if ((*strides)[i] != 1) {
        const auto d = in && in->size() == spatial + 2 ? (*in)[i + 2].as_constant() : std::nullopt;
        if (!d || *d < 1) return std::nullopt;
        const int64_t s = (*strides)[i];
        total = ((*d + s - 1) / s - 1) * s + kernel[i] - *d;
        if (total < 0) return std::nullopt;
      }
      const int64_t head = mode == "SAME_UPPER" ? total / 2 : (total + 1) / 2;
      pads[i] = head;
      pads[i + spatial] = total - head;
    }
    return pads;
  }

  const MutableBody& body_;
};

}  // namespace

bool fuse_pad_into_conv(PassContext& ctx) {
  if (!ctx.may_hold({"Conv", "ConvInteger"})) return false;  // each match starts at one of these
  MutableBody& body = ctx.body();
  const PadConv fusions(body);
  return rewrite_matches(
      ctx, Counter::PadsFused, [&](NodeId id) { return fusions.match(id); },
      [&](NodeId id, const auto& f) {
        NodeProto conv = body.node(id);
        auto* attributes = conv.mutable_attribute();
        for (int i = attributes->size() - 1; i >= 0; --i)
          if (attributes->Get(i).name() == "pads" || attributes->Get(i).name() == "auto_pad") attributes->DeleteSubrange(i, 1);
        bool padded = false;
        for (int64_t v : f->pads) padded = padded || v != 0;
        if (padded) set_ints_attribute(conv, "pads", f->pads);
        std::vector<ValueId> inputs;
        for (size_t k = 0; k < body.num_inputs(id); ++k) inputs.push_back(body.input(id, k));
        inputs[0] = f->x;
        body.replace_node(id, std::move(conv), inputs);
        return true;
      });
}

}  // namespace shapeprop::transform
