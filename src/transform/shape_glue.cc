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

class ShapeGlue {
 public:
  explicit ShapeGlue(BodyRewriter& body) : body_(body) {}

  bool run() {
    return body_.rewrite_each([&](BodyRewriter::NodeId id) {
      const NodeProto& n = body_.node(id);
      if (n.input_size() != 2 || n.output_size() != 1 || n.input(0).empty() || n.input(1).empty()) return false;
      if (is_op(n, "Reshape")) return reshape(id);
      if (is_op(n, "Expand")) return expand(id);
      return false;
    });
  }

 private:
  BodyRewriter& body_;

  const std::vector<Dim>* shape_of(const std::string& name) const {
    const Fact* f = body_.fact(name);
    return f && f->is_tensor() && f->shape ? &*f->shape : nullptr;
  }
  bool shape_input_is_constant(const NodeProto& n) const { return constant_ints(body_, n.input(1)).has_value(); }

  bool reshape(BodyRewriter::NodeId id) {
    const NodeProto& n = body_.node(id);
    const std::vector<Dim>* out = known_dims(body_.fact(n.output(0)));
    if (!out) return false;
    const bool allowzero = int_attribute(n, "allowzero").value_or(0) != 0;
    const bool assume = body_.options().assume_positive_dims;
    const std::string data = n.input(0);
    // The inner Reshape's input, when the outer one reads a Reshape.
    std::string inner;
    const auto p = body_.producer(data);
    if (p != BodyRewriter::kEnd && is_op(body_.node(p), "Reshape") && !body_.node(p).input(0).empty())
      inner = body_.node(p).input(0);
    auto relative_to = [&](const std::string& source) -> std::optional<Target> {
      const std::vector<Dim>* in = source.empty() ? nullptr : shape_of(source);
      return in ? reshape_target(*in, *out, allowzero, assume) : std::nullopt;
    };
    std::string source = data;
    std::optional<Target> target;
    if (!inner.empty() && body_.uses(data) == 1) {  // the inner Reshape can go
      target = relative_to(inner);
      if (target) source = inner;
    }
    if (!target) {
      if (shape_input_is_constant(n)) return false;  // nothing to gain
      target = relative_to(data);
    }
    if (!target && !inner.empty()) {
      target = relative_to(inner);
      source = inner;
    }
    if (!target) return false;
    if (body_.dry()) return true;
    if (target->needs_positive_dims)
      body_.note_assumption("Reshape '" + n.output(0) + "': shape input made a constant with -1 beside copied symbolic dims");
    const std::string shape = body_.add_constant(int64_vector(target->entries), id, "shape");
    if (source != data) {
      body_.set_input(id, 0, source);
      ++body_.stats().reshapes_folded;
    }
    if (body_.node(id).input(1) != shape) {
      body_.set_input(id, 1, shape);
      ++body_.stats().shape_inputs_folded;
    }
    return true;
  }

  bool expand(BodyRewriter::NodeId id) {
    const NodeProto& n = body_.node(id);
    if (shape_input_is_constant(n)) return false;
    const std::vector<Dim>* out = known_dims(body_.fact(n.output(0)));
    const std::vector<Dim>* in = shape_of(n.input(0));
    if (!out || !in) return false;
    auto target = expand_target(*in, *out);
    if (!target) return false;
    if (body_.dry()) return true;
    body_.set_input(id, 1, body_.add_constant(int64_vector(target->entries), id, "shape"));
    ++body_.stats().shape_inputs_folded;
    return true;
  }
};

}  // namespace

bool simplify_shape_inputs(BodyRewriter& body) { return ShapeGlue(body).run(); }

}  // namespace shapeprop::transform
