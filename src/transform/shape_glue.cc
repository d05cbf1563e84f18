// Shape glue: where the facts know the shape a Reshape or Expand produces, the chain of
// Shape/Slice/Gather/Concat/Cast that computes its shape input at run time is replaced by
// a constant, and the chain dies.
//  - Reshape (allowzero = 0): a constant dim is written as it is; a dim equal to the
//    input's dim at the same place as 0 (copy it); at most one other dim as -1, which
//    Reshape computes exactly when the other entries multiply to a size that is not 0:
//    constants are known not to be, copied symbolic dims only under the assumption that
//    symbolic dims are at least 1 (said in --debug-analysis). With allowzero = 1 only
//    constants and one -1.
//  - Reshape of a Reshape: the outer one reads the inner one's input when its shape is a
//    constant relative to it (and the inner one dies when nothing else reads it).
//  - Expand: a constant dim as it is (the input's dim there is 1 or that constant), a dim
//    equal to the input's dim at the same place (aligned right) as 1.
// Where some dim can be computed only at run time, the node stays as it is.
#include <optional>

#include "rewrite_support.h"

namespace shapeprop::transform {

namespace {

using onnx::NodeProto;

struct Target {
  std::vector<int64_t> entries;
  bool needs_positive_dims = false;  // a -1 beside copied symbolic dims
};

std::optional<Target> reshape_target(const std::vector<Dim>& in, const std::vector<Dim>& out, bool allowzero,
                                     bool assume_positive_dims) {
  Target t;
  int minus_one = -1;
  for (size_t i = 0; i < out.size(); ++i) {
    const Dim& d = out[i];
    const bool same_as_input = i < in.size() && !in[i].is_unknown() && in[i] == d;
    if (auto c = d.as_constant()) {
      if (*c > 0 || allowzero) {
        t.entries.push_back(*c);
        continue;
      }
      if (same_as_input) {  // 0 copies the input's 0
        t.entries.push_back(0);
        continue;
      }
      return std::nullopt;
    }
    if (!allowzero && same_as_input) {
      t.entries.push_back(0);
      continue;
    }
    if (minus_one >= 0) return std::nullopt;
    minus_one = static_cast<int>(i);
    t.entries.push_back(-1);
  }
  if (minus_one < 0) return t;
  for (size_t i = 0; i < t.entries.size(); ++i) {
    if (static_cast<int>(i) == minus_one || t.entries[i] > 0) continue;
    if (t.entries[i] == 0 && !in[i].is_constant()) {  // a copied symbolic dim
      if (!assume_positive_dims) return std::nullopt;
      t.needs_positive_dims = true;
      continue;
    }
    return std::nullopt;  // a zero: -1 would be undetermined
  }
  return t;
}

std::optional<Target> expand_target(const std::vector<Dim>& in, const std::vector<Dim>& out) {
  if (out.size() < in.size()) return std::nullopt;
  const size_t offset = out.size() - in.size();
  Target t;
  for (size_t i = 0; i < out.size(); ++i) {
    if (auto c = out[i].as_constant()) {
      t.entries.push_back(*c);
    } else if (i >= offset && !in[i - offset].is_unknown() && in[i - offset] == out[i]) {
      t.entries.push_back(1);
    } else {
      return std::nullopt;
    }
  }
  return t;
}

// What the Reshape or Expand reads once its shape glue is folded: its data (the inner
// Reshape's input, when that one can go) and the shape's entries.
struct Glue {
  ValueId source;
  Target target;
};

const std::vector<Dim>* shape_of(const MutableBody& body, ValueId v) {
  const Fact* f = body.fact(v);
  return f && f->is_tensor() && f->shape ? &*f->shape : nullptr;
}

bool shape_input_is_constant(const MutableBody& body, NodeId id) { return constant_ints(body, body.input(id, 1)).has_value(); }

std::optional<Glue> match_reshape(const MutableBody& body, NodeId id, bool assume_positive_dims) {
  const onnx::NodeProto& n = body.node(id);
  const std::vector<Dim>* out = known_dims(body.fact(body.output(id, 0)));
  if (!out) return std::nullopt;
  const bool allowzero = int_attribute(n, "allowzero").value_or(0) != 0;
  const ValueId data = body.input(id, 0);
  // The inner Reshape's input, when the outer one reads a Reshape.
  ValueId inner = ir::kNoValue;
  const auto p = body.producer(data);
  if (p != kNone && is_op(body.node(p), "Reshape")) inner = body.input(p, 0);
  auto relative_to = [&](ValueId source) -> std::optional<Target> {
    const std::vector<Dim>* in = source == ir::kNoValue ? nullptr : shape_of(body, source);
    return in ? reshape_target(*in, *out, allowzero, assume_positive_dims) : std::nullopt;
  };
  ValueId source = data;
  std::optional<Target> target;
  if (inner != ir::kNoValue && body.uses(data) == 1) {  // the inner Reshape can go
    target = relative_to(inner);
    if (target) source = inner;
  }
  if (!target) {
    if (shape_input_is_constant(body, id)) return std::nullopt;  // nothing to gain
    target = relative_to(data);
  }
  if (!target && inner != ir::kNoValue) {
    target = relative_to(inner);
    source = inner;
  }
  if (!target) return std::nullopt;
  return Glue{source, std::move(*target)};
}

std::optional<Glue> match_expand(const MutableBody& body, NodeId id) {
  if (shape_input_is_constant(body, id)) return std::nullopt;
  const std::vector<Dim>* out = known_dims(body.fact(body.output(id, 0)));
  const std::vector<Dim>* in = shape_of(body, body.input(id, 0));
  if (!out || !in) return std::nullopt;
  auto target = expand_target(*in, *out);
  if (!target) return std::nullopt;
  return Glue{body.input(id, 0), std::move(*target)};
}

}  // namespace

bool simplify_shape_inputs(PassContext& ctx) {
  if (!ctx.may_hold({"Reshape", "Expand"})) return false;  // each match starts at one of these
  MutableBody& body = ctx.body();
  for (auto id = body.first(); id != kNone && !ctx.stop(); id = body.next(id)) {
    const onnx::NodeProto& n = body.node(id);
    if (body.num_inputs(id) != 2 || body.num_outputs(id) != 1 || body.input(id, 0) == ir::kNoValue ||
        body.input(id, 1) == ir::kNoValue || body.output(id, 0) == ir::kNoValue)
      continue;
    const bool reshape = is_op(n, "Reshape");
    if (!reshape && !is_op(n, "Expand")) continue;
    const auto glue = reshape ? match_reshape(body, id, ctx.options().assume_positive_dims) : match_expand(body, id);
    if (!glue) continue;
    ctx.apply([&] {
      if (glue->target.needs_positive_dims)
        ctx.note_assumption("Reshape '" + std::string(body.name(body.output(id, 0))) +
                            "': shape input made a constant with -1 beside copied symbolic dims");
      const ValueId shape = body.add_constant(int64_vector(glue->target.entries), "shape");
      if (glue->source != body.input(id, 0)) {
        body.set_input(id, 0, glue->source);
        ctx.count(Counter::ReshapesFolded);
      }
      if (body.input(id, 1) != shape) {
        body.set_input(id, 1, shape);
        ctx.count(Counter::ShapeInputsFolded);
      }
      return true;
    });
  }
  return ctx.changed();
}

}  // namespace shapeprop::transform
