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
  explicit Gemms(BodyRewriter& body) : body_(body) {}

  bool run() {
    if (body_.options().onnx_opset < kGemmWithOptionalC) return false;
    return body_.rewrite_each([&](BodyRewriter::NodeId id) {
      const NodeProto& n = body_.node(id);
      if (is_op(n, "Gemm")) return fold_transposed_inputs(id);
      if (is_op(n, "Add")) return matmul_add(id);
      if (is_op(n, "MatMul")) return matmul_transposed(id);
      return false;
    });
  }

 private:
  BodyRewriter& body_;

  bool rank2(const std::string& name) const { return rank_of(body_.fact(name)) == 2u; }

  // The input of a Transpose that swaps the two dims of a 2-D value.
  std::optional<std::string> transposed(const std::string& name) const {
    const auto p = body_.producer(name);
    if (p == BodyRewriter::kEnd) return std::nullopt;
    const NodeProto& t = body_.node(p);
    if (!is_op(t, "Transpose") || t.input_size() != 1 || t.input(0).empty() || !rank2(t.input(0))) return std::nullopt;
    const auto perm = ints_attribute(t, "perm");
    if (perm && *perm != std::vector<int64_t>{1, 0}) return std::nullopt;
    return t.input(0);
  }

  bool gemm_type(const std::string& name) const {
    const Fact* f = body_.fact(name);
    return f && (f->elem_type == TensorProto::FLOAT || f->elem_type == TensorProto::DOUBLE);
  }

  // A Gemm of A and B (each read through a Transpose where one stands), with C if given.
  NodeProto gemm(const std::string& a, const std::string& b, const std::string& c, const std::string& output) const {
    NodeProto g;
    g.set_op_type("Gemm");
    auto ta = transposed(a), tb = transposed(b);
    g.add_input(ta ? *ta : a);
    g.add_input(tb ? *tb : b);
    if (!c.empty()) g.add_input(c);
    g.add_output(output);
    if (ta) set_int_attribute(g, "transA", 1);
    if (tb) set_int_attribute(g, "transB", 1);
    return g;
  }

  bool fold_transposed_inputs(BodyRewriter::NodeId id) {
    const NodeProto& n = body_.node(id);
    if (n.input_size() < 2 || n.output_size() != 1) return false;
    std::optional<std::string> inputs[2];
    for (int k = 0; k < 2; ++k)
      if (!n.input(k).empty()) inputs[k] = transposed(n.input(k));
    if (!inputs[0] && !inputs[1]) return false;
    if (body_.dry()) return true;
    NodeProto g = n;
    for (int k = 0; k < 2; ++k) {
      if (!inputs[k]) continue;
      g.set_input(k, *inputs[k]);
      const char* flag = k == 0 ? "transA" : "transB";
      const int64_t before = int_attribute(n, flag).value_or(0);
      auto* attrs = g.mutable_attribute();
      attrs->erase(std::remove_if(attrs->begin(), attrs->end(), [&](const auto& a) { return a.name() == flag; }),
                   attrs->end());
      if (before == 0) set_int_attribute(g, flag, 1);
    }
    body_.replace_node(id, std::move(g));
    ++body_.stats().gemms_formed;
    return true;
  }

  // The MatMul of two rank-2 values of a Gemm type that nothing else reads.
  bool plain_matmul(const std::string& name) const {
    const auto p = body_.producer(name);
    if (p == BodyRewriter::kEnd || body_.uses(name) != 1) return false;
    const NodeProto& m = body_.node(p);
    return is_op(m, "MatMul") && m.input_size() == 2 && !m.input(0).empty() && !m.input(1).empty() &&
           rank2(m.input(0)) && rank2(m.input(1)) && gemm_type(m.input(0));
  }

  // C is unidirectionally broadcastable to `out` (the product's [M, N]).
  bool broadcasts_to(const std::string& c, const std::vector<Dim>& out) const {
    const Fact* f = body_.fact(c);
    const std::vector<Dim>* dims = known_dims(f);
    if (!dims || dims->size() > 2) return false;
    const size_t offset = out.size() - dims->size();
    for (size_t i = 0; i < dims->size(); ++i) {
      const Dim& d = (*dims)[i];
      if (d.as_constant() != std::optional<int64_t>(1) && d != out[i + offset]) return false;
    }
    return true;
  }

  // The Add can be Gemm's C: it adds a value of the product's type that broadcasts to the
  // product's [M, N], and the sum is no larger. Returns C's name.
  std::optional<std::string> bias_of(const NodeProto& add, const std::string& product) const {
    if (!is_op(add, "Add") || add.input_size() != 2 || add.output_size() != 1 || add.input(0).empty() ||
        add.input(1).empty() || add.input(0) == add.input(1))
      return std::nullopt;
    const std::vector<Dim>* out = known_dims(body_.fact(add.output(0)));
    const std::vector<Dim>* mm = known_dims(body_.fact(product));
    const std::string& c = add.input(add.input(0) == product ? 1 : 0);
    const Fact* cf = body_.fact(c);
    const Fact* pf = body_.fact(product);
    if (!out || !mm || out->size() != 2 || *out != *mm || !cf || !pf || cf->elem_type != pf->elem_type ||
        !broadcasts_to(c, *out))
      return std::nullopt;
    return c;
  }

  // Add(MatMul(A, B), C) or Add(C, MatMul(A, B)).
  bool matmul_add(BodyRewriter::NodeId id) {
    const NodeProto& n = body_.node(id);
    for (int k = 0; k < 2 && k < n.input_size(); ++k) {
      const std::string& product = n.input(k);
      if (product.empty() || !plain_matmul(product)) continue;
      auto c = bias_of(n, product);
      if (!c) continue;
      if (body_.dry()) return true;
      const NodeProto& m = body_.node(body_.producer(product));
      body_.replace_node(id, gemm(m.input(0), m.input(1), *c, n.output(0)));
      ++body_.stats().gemms_formed;
      return true;
    }
    return false;
  }

  // MatMul(A, Transpose(W)), unless an Add will take it whole.
  bool matmul_transposed(BodyRewriter::NodeId id) {
    const NodeProto& n = body_.node(id);
    if (n.input_size() != 2 || n.output_size() != 1 || n.input(0).empty() || n.input(1).empty()) return false;
    if (!rank2(n.input(0)) || !gemm_type(n.input(0)) || !transposed(n.input(1))) return false;
    const auto readers = body_.readers(n.output(0));
    if (readers.size() == 1 && body_.uses(n.output(0)) == 1 && bias_of(body_.node(readers[0]), n.output(0)))
      return false;
    if (body_.dry()) return true;
    body_.replace_node(id, gemm(n.input(0), n.input(1), "", n.output(0)));
    ++body_.stats().gemms_formed;
    return true;
  }
};

}  // namespace

bool form_gemms(BodyRewriter& body) { return Gemms(body).run(); }

}  // namespace shapeprop::transform
