// Linear layers as Gemm (the form backends fuse best):
//  - MatMul(A, B) read only by Add(·, C), A and B proven rank 2, C unidirectionally
//    broadcastable to the product's [M, N] (what Gemm's C must be) and the sum no larger
//    than the product: Gemm(A, B, C) writing the sum;
//  - MatMul(A, Transpose(W)) with A and W proven rank 2: Gemm<transB = 1>(A, W);
//  - a Gemm input that is a 2-D Transpose: the Transpose's input, with transA/transB
//    flipped.
// New Gemms are made only for float and double, the types ONNX Runtime's CPU Gemm has.
#include <algorithm>

#include "rewrite_support.h"

namespace shapeprop::transform {

namespace {

using onnx::NodeProto;
using onnx::TensorProto;

constexpr int64_t kGemmWithOptionalC = 11;

class Gemms {
 public:
  explicit Gemms(const MutableBody& body) : body_(body) {}

  bool rank2(ValueId v) const { return rank_of(body_.fact(v)) == 2u; }

  // The input of a Transpose that swaps the two dims of a 2-D value.
  std::optional<ValueId> transposed(ValueId v) const {
    const auto p = body_.producer(v);
    if (p == kNone) return std::nullopt;
    const NodeProto& t = body_.node(p);
    if (!is_op(t, "Transpose") || body_.num_inputs(p) != 1 || body_.input(p, 0) == ir::kNoValue || !rank2(body_.input(p, 0)))
      return std::nullopt;
    const auto perm = ints_attribute(t, "perm");
    if (perm && *perm != std::vector<int64_t>{1, 0}) return std::nullopt;
    return body_.input(p, 0);
  }

  bool gemm_type(ValueId v) const {
    const Fact* f = body_.fact(v);
    return f && (f->elem_type == TensorProto::FLOAT || f->elem_type == TensorProto::DOUBLE);
  }

  // The MatMul of two rank-2 values of a Gemm type that nothing else reads.
  bool plain_matmul(ValueId v) const {
    const auto p = body_.producer(v);
    if (p == kNone || body_.uses(v) != 1) return false;
    return is_op(body_.node(p), "MatMul") && body_.num_inputs(p) == 2 && body_.input(p, 0) != ir::kNoValue &&
           body_.input(p, 1) != ir::kNoValue && rank2(body_.input(p, 0)) && rank2(body_.input(p, 1)) &&
           gemm_type(body_.input(p, 0));
  }

  // C is unidirectionally broadcastable to `out` (the product's [M, N]).
  bool broadcasts_to(ValueId c, const std::vector<Dim>& out) const {
    const std::vector<Dim>* dims = known_dims(body_.fact(c));
    if (!dims || dims->size() > 2) return false;
    const size_t offset = out.size() - dims->size();
    for (size_t i = 0; i < dims->size(); ++i) {
      const Dim& d = (*dims)[i];
      if (d.as_constant() != std::optional<int64_t>(1) && d != out[i + offset]) return false;
    }
    return true;
  }

  // The Add can be Gemm's C: it adds a value of the product's type that broadcasts to the
  // product's [M, N], and the sum is no larger. Returns C.
  std::optional<ValueId> bias_of(NodeId add, ValueId product) const {
    if (!is_op(body_.node(add), "Add") || body_.num_inputs(add) != 2 || body_.num_outputs(add) != 1) return std::nullopt;
    const ValueId a = body_.input(add, 0), b = body_.input(add, 1);
    if (a == ir::kNoValue || b == ir::kNoValue || a == b) return std::nullopt;
    const std::vector<Dim>* out = known_dims(body_.fact(body_.output(add, 0)));
    const std::vector<Dim>* mm = known_dims(body_.fact(product));
    const ValueId c = a == product ? b : a;
    const Fact* cf = body_.fact(c);
    const Fact* pf = body_.fact(product);
    if (!out || !mm || out->size() != 2 || *out != *mm || !cf || !pf || cf->elem_type != pf->elem_type ||
        !broadcasts_to(c, *out))
      return std::nullopt;
    return c;
  }

 private:
  const MutableBody& body_;
};

// A Gemm of A and B (each read through a Transpose where one stands), with C if given, in
// the place of `id`.
bool make_gemm(MutableBody& body, const Gemms& gemms, NodeId id, ValueId a, ValueId b, ValueId c) {
  NodeProto g;
  g.set_op_type("Gemm");
  auto ta = gemms.transposed(a), tb = gemms.transposed(b);
  if (ta) set_int_attribute(g, "transA", 1);
  if (tb) set_int_attribute(g, "transB", 1);
  std::vector<ValueId> inputs{ta ? *ta : a, tb ? *tb : b};
  if (c != ir::kNoValue) inputs.push_back(c);
  body.replace_node(id, std::move(g), inputs);
  return true;
}

}  // namespace

bool form_gemms(PassContext& ctx) {
  if (ctx.options().onnx_opset < kGemmWithOptionalC) return false;
  MutableBody& body = ctx.body();
  const Gemms gemms(body);
  for (auto id = body.first(); id != kNone && !ctx.stop(); id = body.next(id)) {
    const NodeProto& n = body.node(id);
    if (is_op(n, "Gemm")) {
      // A Gemm input that is a 2-D Transpose: its input, with transA/transB flipped.
      if (body.num_inputs(id) < 2 || body.num_outputs(id) != 1) continue;
      std::optional<ValueId> inputs[2];
      for (size_t k = 0; k < 2; ++k)
        if (body.input(id, k) != ir::kNoValue) inputs[k] = gemms.transposed(body.input(id, k));
      if (!inputs[0] && !inputs[1]) continue;
      ctx.apply(Counter::GemmsFormed, [&] {
        NodeProto g = n;
        std::vector<ValueId> reads;
        for (size_t k = 0; k < body.num_inputs(id); ++k) reads.push_back(k < 2 && inputs[k] ? *inputs[k] : body.input(id, k));
        for (size_t k = 0; k < 2; ++k) {
          if (!inputs[k]) continue;
          const char* flag = k == 0 ? "transA" : "transB";
          const int64_t before = int_attribute(n, flag).value_or(0);
          auto* attrs = g.mutable_attribute();
          attrs->erase(std::remove_if(attrs->begin(), attrs->end(), [&](const auto& a) { return a.name() == flag; }),
                       attrs->end());
          if (before == 0) set_int_attribute(g, flag, 1);
        }
        body.replace_node(id, std::move(g), reads);
        return true;
      });
    } else if (is_op(n, "Add")) {
      // Add(MatMul(A, B), C) or Add(C, MatMul(A, B)).
      for (size_t k = 0; k < 2 && k < body.num_inputs(id); ++k) {
        const ValueId product = body.input(id, k);
        if (product == ir::kNoValue || !gemms.plain_matmul(product)) continue;
        const auto c = gemms.bias_of(id, product);
        if (!c) continue;
        const NodeId m = body.producer(product);
        ctx.apply(Counter::GemmsFormed, [&] { return make_gemm(body, gemms, id, body.input(m, 0), body.input(m, 1), *c); });
        break;
      }
    } else if (is_op(n, "MatMul")) {
      // MatMul(A, Transpose(W)), unless an Add will take it whole.
      if (body.num_inputs(id) != 2 || body.num_outputs(id) != 1) continue;
      const ValueId a = body.input(id, 0), w = body.input(id, 1), out = body.output(id, 0);
      if (a == ir::kNoValue || w == ir::kNoValue || !gemms.rank2(a) || !gemms.gemm_type(a) || !gemms.transposed(w))
        continue;
      const auto readers = body.readers(out);
      if (readers.size() == 1 && body.uses(out) == 1 && gemms.bias_of(readers[0], out)) continue;
      ctx.apply(Counter::GemmsFormed, [&] { return make_gemm(body, gemms, id, a, w, ir::kNoValue); });
    }
  }
  return ctx.changed();
}

}  // namespace shapeprop::transform
