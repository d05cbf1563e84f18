// Convolutions, pools and resizing over symbolic spatial dims. ONNX's inference leaves an
// output dim unknown unless the input's is a constant; these rules give the expression
// the op's definition states, floor((D + pads - dilation*(k-1) - 1) / stride) + 1 for a
// window, which Dim keeps in canonical form: a stride-1 "same" convolution gives D back,
// a stride-2 one floor((D+1)/2), and a pool after it floor((D+3)/4).
//
// A pool with ceil_mode rounds the count of windows up, then drops a last window that
// would start in the right padding (ONNX's inference, as PyTorch does): that is the
// lesser of two floors of D plus constants, and D is common to both, so one floor of D
// plus the lesser constant (windowed). What is not computed stays unknown: ceil_mode with
// auto_pad SAME (the padding then depends on D mod stride), a kernel that is not a
// constant, a scale that is not a dyadic fraction (floor(D * 0.3) is computed in floating
// point by the runtimes).
#include <cmath>
#include <string>

#include "eval/fold_support.h"

namespace shapeprop::eval::detail {

namespace {

std::string attr_string(const FoldInput& node, std::string_view name, std::string fallback) {
  const auto* a = node.attribute(name);
  return a && a->type() == onnx::AttributeProto::STRING ? a->s() : fallback;
}

// The attribute's ints, or `count` copies of `fallback` when it is absent; nullopt when
// it has another length.
std::optional<std::vector<int64_t>> per_axis(const FoldInput& node, std::string_view name, size_t count, int64_t fallback) {
  auto v = attr_ints(node, name);
  if (!v) return std::vector<int64_t>(count, fallback);
  if (v->size() != count) return std::nullopt;
  return v;
}

// One spatial axis of a window op: its kernel, stride, dilation and pads.
struct Axis {
  int64_t kernel = 0, stride = 1, dilation = 1, pad_begin = 0, pad_end = 0;
};

// 1 + the number of strides that fit in `span` = d + pads - reach, without ceil_mode.
// ONNX's definition writes floor(span / stride) + 1, but where the window is wider than
// the padded input (span < 0) the runtimes divide truncating toward zero: ONNX's own
// inference for a known dim and ONNX Runtime's kernels give 1 for a 2-wide pool over 1
// (a fuzz finding, tools/fuzz/regressions/model_binary/pool_window_wider_than_its_input)
// where the definition's floor gives 0. So, in order:
// - floor where span is proven non-negative (the bounds in force, noted where needed);
// - where the truncation is short, trunc(span/s) = floor(max(span,0)/s) when -span < s
//   is proven (a 2-wide pool over h: floor(max(h,2)/2), 1 at h = 1, 2 and 3), and
//   span itself for s = 1;
// - floor again where the analysis records the condition that makes it true, "d >= reach
//   - pads" (the window fits; PyTorch refuses inputs where one does not), in the model's
//   shapeprop.assumptions beside "symbolic dims >= 1": a stack of convolutions stays
//   floor(...) of floor(...) instead of growing a max term per layer;
// - otherwise the whole truncation, floor(max(span,0)/s) - floor(max(-span,0)/s)
//   (--allow-empty-dims, where no assumption is made, and folding outside the analysis).
Dim window_count(const Dim& d, const Dim& span, int64_t s) {
  const Dim one = Dim::constant(1), stride = Dim::constant(s), zero = Dim::constant(0);
  if (span.is_unknown()) return Dim::unknown();
  if (span.is_constant()) return Dim::trunc_div(span, stride) + one;
  if (s == 1 || proven_at_least(span, 0)) return Dim::floor_div(span, stride) + one;
  const Dim ahead = Dim::max(span, zero), behind = Dim::max(-span, zero);
  if (auto most = behind.upper_bound(); !ahead.is_unknown() && most && *most < s) {
    if (auto plain = behind.upper_bound(DimBounds()); !plain || *plain >= s) DimBounds::note_relied();
    return Dim::floor_div(ahead, stride) + one;
  }
  if (auto fits = (d - span).as_constant(); fits && assume_at_least(d, *fits))
    return Dim::floor_div(span, stride) + one;
  if (ahead.is_unknown() || behind.is_unknown()) return Dim::unknown();
  return Dim::floor_div(ahead, stride) + one - Dim::floor_div(behind, stride);
}

// The output dim of a window over `d` (auto_pad as the op defines it). With ceil_mode,
// ONNX counts ceil((d + pads - reach)/stride) + 1 windows, less one where the last would
// start at or past d + pad_begin: windows k = 0.. with k*stride <= d + pads - reach +
// stride - 1 and k*stride <= d + pad_begin - 1, so the count is
// floor((d - 1 + min(pads - reach + stride, pad_begin)) / stride) + 1.
Dim windowed(const Dim& d, const Axis& a, const std::string& auto_pad, bool ceil_mode = false) {
  if (d.is_unknown() || a.kernel <= 0 || a.stride <= 0 || a.dilation <= 0) return Dim::unknown();
  const Dim stride = Dim::constant(a.stride);
  if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    if (ceil_mode) return Dim::unknown();
    return Dim::ceil_div(d, stride);
  }
  int64_t pads = 0;
  if (auto_pad == "NOTSET")
    pads = a.pad_begin + a.pad_end;
  else if (auto_pad != "VALID")
    return Dim::unknown();
  const Dim reach = Dim::constant(a.dilation) * Dim::constant(a.kernel - 1) + Dim::constant(1);
  const Dim extra = Dim::constant(pads) - reach;
  if (!ceil_mode) return window_count(d, d + extra, a.stride);
  // ONNX drops at most one window; two would start in the right padding only where
  // pad_end > reach (the second-to-last starts before d + pads - reach), and the formula
  // below would drop both: left unknown there.
  if (auto_pad == "NOTSET" && a.pad_end > a.dilation * (a.kernel - 1) + 1) return Dim::unknown();
  const Dim first = Dim::min(extra + stride, Dim::constant(auto_pad == "VALID" ? 0 : a.pad_begin));
  return Dim::floor_div(d - Dim::constant(1) + first, stride) + Dim::constant(1);
}

// The axes of a window op over input `x` (rank 2 + spatial) with kernel `kernel`.
std::optional<std::vector<Axis>> window_axes(const FoldInput& node, const std::vector<int64_t>& kernel, bool has_dilations) {
  const size_t n = kernel.size();
  auto strides = per_axis(node, "strides", n, 1);
  auto dilations = has_dilations ? per_axis(node, "dilations", n, 1) : std::vector<int64_t>(n, 1);
  auto pads = per_axis(node, "pads", 2 * n, 0);
  if (!strides || !dilations || !pads) return std::nullopt;
  std::vector<Axis> axes(n);
  for (size_t i = 0; i < n; ++i)
    axes[i] = {kernel[i], (*strides)[i], (*dilations)[i], (*pads)[i], (*pads)[n + i]};
  return axes;
}

// [N, channels, windowed spatial dims...], or nothing when the window is not known.
std::optional<std::vector<Dim>> window_output(const FoldInput& node, const std::vector<Dim>& in, const Dim& channels,
                                              const std::vector<int64_t>& kernel, bool has_dilations,
                                              bool ceil_mode = false) {
  if (in.size() < 3 || kernel.size() != in.size() - 2) return std::nullopt;
  auto axes = window_axes(node, kernel, has_dilations);
  if (!axes) return std::nullopt;
  const std::string auto_pad = attr_string(node, "auto_pad", "NOTSET");
  std::vector<Dim> out{in[0], channels};
  for (size_t i = 0; i < kernel.size(); ++i) out.push_back(windowed(in[i + 2], (*axes)[i], auto_pad, ceil_mode));
  return out;
}

// The kernel of a convolution: its attribute, or the weight's spatial dims when constant.
std::optional<std::vector<int64_t>> conv_kernel(const FoldInput& node, const Fact* w) {
  if (auto k = attr_ints(node, "kernel_shape")) return k;
  if (!w || !w->shape || w->shape->size() < 3) return std::nullopt;
  return static_dims(std::vector<Dim>(w->shape->begin() + 2, w->shape->end()));
}

}  // namespace

// Conv(X[N,C,D...], W[M,C/group,k...]): [N, M, windowed D...].
std::vector<Fact> fold_conv(const FoldInput& node) {
  const Fact *x = node.input(0), *w = node.input(1);
  if (!x || !x->shape || x->other) return {};
  const Dim channels = w && w->shape && !w->shape->empty() ? w->shape->front() : Dim::unknown();
  auto kernel = conv_kernel(node, w);
  if (!kernel) return {};
  auto out = window_output(node, *x->shape, channels, *kernel, true);
  if (!out) return {};
  return {Fact::tensor(x->elem_type, std::move(*out))};
}

// ConvTranspose: stride*(D-1) + output_padding + dilation*(k-1) + 1 - pads, or D*stride
// for SAME (where the padding that needs is not negative); an output_shape attribute (constants) is ONNX's own inference's to apply.
std::vector<Fact> fold_conv_transpose(const FoldInput& node) {
  const Fact *x = node.input(0), *w = node.input(1);
  if (!x || !x->shape || x->other || x->shape->size() < 3 || node.attribute("output_shape")) return {};
  auto kernel = conv_kernel(node, w);
  const size_t n = x->shape->size() - 2;
  if (!kernel || kernel->size() != n) return {};
  auto axes = window_axes(node, *kernel, true);
  auto output_padding = per_axis(node, "output_padding", n, 0);
  if (!axes || !output_padding) return {};
  const std::string auto_pad = attr_string(node, "auto_pad", "NOTSET");
  Dim channels = Dim::unknown();
  if (w && w->shape && w->shape->size() >= 2) channels = (*w->shape)[1] * Dim::constant(attr_int(node, "group", 1));
  std::vector<Dim> out{x->shape->front(), channels};
  for (size_t i = 0; i < n; ++i) {
    const Axis& a = (*axes)[i];
    const Dim& d = (*x->shape)[i + 2];
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      // ONNX defines D*stride, which needs a total padding of output_padding + reach -
      // stride >= 0; where it would be negative, ONNX Runtime pads nothing and gives
      // stride*(D-1) + output_padding + reach instead (stride 3, kernel 1: 3*D-2), so
      // the runtimes may differ: unknown.
      const int64_t reach = a.dilation * (a.kernel - 1) + 1;
      out.push_back((*output_padding)[i] + reach >= a.stride ? d * Dim::constant(a.stride) : Dim::unknown());
    } else if (auto_pad == "NOTSET" || auto_pad == "VALID") {
      const int64_t pads = auto_pad == "VALID" ? 0 : a.pad_begin + a.pad_end;
      out.push_back(Dim::constant(a.stride) * (d - Dim::constant(1)) + Dim::constant((*output_padding)[i]) +
                    Dim::constant(a.dilation) * Dim::constant(a.kernel - 1) + Dim::constant(1) - Dim::constant(pads));
    } else {
      out.push_back(Dim::unknown());
    }
  }
  return {Fact::tensor(x->elem_type, std::move(out))};
}

// MaxPool, AveragePool, LpPool: [N, C, windowed D...] (MaxPool's Indices too).
std::vector<Fact> fold_pool(const FoldInput& node) {
  const Fact* x = node.input(0);
  auto kernel = attr_ints(node, "kernel_shape");
  if (!x || !x->shape || x->other || x->shape->size() < 3 || !kernel) return {};
  const bool ceil_mode = attr_int(node, "ceil_mode", 0) != 0;
  // Dilations: MaxPool from opset 10, AveragePool from 19, LpPool from 18.
  const bool dilations = node.op == "MaxPool" ? since(node, 10) : node.op == "AveragePool" ? since(node, 19) : since(node, 18);
  auto out = window_output(node, *x->shape, (*x->shape)[1], *kernel, dilations, ceil_mode);
  if (!out) return {};
  std::vector<Fact> results{Fact::tensor(x->elem_type, *out)};
  if (node.op == "MaxPool" && node.num_outputs > 1) results.push_back(Fact::tensor(TensorProto::INT64, std::move(*out)));
  return results;
}

namespace {

// floor(d * scale) where scale is p/q with q a power of two up to 64 (exact in floating
// point, so that the runtimes' product is this one); unknown otherwise.
Dim scaled(const Dim& d, double scale) {
  if (!(scale > 0) || !std::isfinite(scale)) return Dim::unknown();
  for (int64_t q = 1; q <= 64; q *= 2) {
    const double p = scale * static_cast<double>(q);
    if (p != std::floor(p) || p > 1e6) continue;
    return Dim::floor_div(d * Dim::constant(static_cast<int64_t>(p)), Dim::constant(q));
  }
  return Dim::unknown();
}

}  // namespace

// Resize (opset 10+) and Upsample: the sizes input where it has elements (symbolic ones
// included: Resize to Shape(y)), else floor(D * scale) per axis.
std::vector<Fact> fold_resize(const FoldInput& node) {
  const Fact* x = node.input(0);
  if (!x || !x->shape || x->other) return {};
  const size_t rank = x->shape->size();
  if (attr_string(node, "coordinate_transformation_mode", "half_pixel") == "tf_crop_and_resize") return {};
  if (attr_string(node, "keep_aspect_ratio_policy", "stretch") != "stretch") return {};
  // The axes the scales or sizes list (opset 18), all of them otherwise.
  std::vector<size_t> axes;
  if (auto a = attr_ints(node, "axes")) {
    for (int64_t k : *a) {
      auto axis = normalize_axis(k, static_cast<int64_t>(rank));
      if (!axis) return {};
      axes.push_back(static_cast<size_t>(*axis));
    }
  } else {
    for (size_t i = 0; i < rank; ++i) axes.push_back(i);
  }
  std::vector<Dim> out = *x->shape;
  const bool upsample = node.op == "Upsample";
  const Fact* sizes = !upsample && since(node, 11) ? node.input(3) : nullptr;
  if (sizes && sizes->ints) {
    if (sizes->ints->size() != axes.size()) return {};
    for (size_t i = 0; i < axes.size(); ++i) out[axes[i]] = (*sizes->ints)[i];
    return {Fact::tensor(x->elem_type, std::move(out))};
  }
  std::vector<double> scales;
  if (upsample && !since(node, 9)) {
    const auto* a = node.attribute("scales");
    if (!a) return {};
    scales.assign(a->floats().begin(), a->floats().end());
  } else {
    const Fact* s = node.input(upsample || !since(node, 11) ? 1 : 2);
    if (!s || !s->reals) return {};
    scales = *s->reals;
  }
  if (scales.size() != axes.size()) return {};
  for (size_t i = 0; i < axes.size(); ++i) out[axes[i]] = scaled((*x->shape)[axes[i]], scales[i]);
  return {Fact::tensor(x->elem_type, std::move(out))};
}

}  // namespace shapeprop::eval::detail
