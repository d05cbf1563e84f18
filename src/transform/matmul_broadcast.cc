// A MatMul (or Gemm) between a Reshape that only flattens batch dims and a Reshape that
// only restores them is one broadcasting MatMul (issue 25, family 7), as PyTorch writes
// `linear` on a 3-D input (view to [B*S, K], addmm, view back to [B, S, N]) and `bmm` on
// 4-D attention tensors (views to [B*H, S, D] and back):
//   Reshape(MatMul(Reshape(a, [P, K]), w), [..., N])      -> MatMul(a, w)
//   Reshape(MatMul(Reshape(a, [P, M, K]), Reshape(c, [P, K, N])), [b..., M, N])
//                                                         -> MatMul(a, c)
//   Reshape(Gemm(Reshape(a, [P, K]), w, bias), [..., N])  -> Add(MatMul(a, w'), bias)
//   Reshape(MatMul(Reshape(x, [1, K]), b), [b..., N])     -> MatMul(x, b)  (x 1-D; issue 38)
// Every shape is the facts' (not a declaration): the flattened operand keeps `a`'s last
// dims (K, or M and K), so its rows are `a`'s rows in order; the other operand is a
// rank-2 weight, or flattens the same batch dims as `a` (equal dims, so no broadcasting
// hides in the flattening); the result is reshaped to exactly `a`'s batch dims and the
// product's last dims, which MatMul(a, ...) gives. For a Gemm: no transA, alpha and beta
// 1, a bias of at most one row (it broadcasts over the batch dims as over the rows); a
// transB weight is read through a Transpose (const-fold folds it where only it reads the
// weight, so only such weights are taken).
#include "rewrite_support.h"

namespace shapeprop::transform {

namespace {

using onnx::NodeProto;

struct Unflatten {
  ValueId a, b;                 // MatMul(a, b)
  bool transpose_b = false;     // b is read through a Transpose (a Gemm's transB)
  ValueId bias = ir::kNoValue;  // then Add(bias)
};

class MatMulBroadcast {
 public:
  explicit MatMulBroadcast(const MutableBody& body) : body_(body) {}

  std::optional<Unflatten> match(NodeId restore) const {
    const NodeProto& r = body_.node(restore);
    if (!is_op(r, "Reshape") || body_.num_outputs(restore) != 1 || body_.input(restore, 0) == ir::kNoValue)
      return std::nullopt;
    const ValueId product = body_.input(restore, 0);
    const NodeId mm = body_.producer(product);
    if (mm == kNone || body_.uses(product) != 1 || has_reference(body_.node(mm))) return std::nullopt;
    const NodeProto& m = body_.node(mm);
    const bool gemm = is_op(m, "Gemm");
    if (!(gemm || is_op(m, "MatMul")) || body_.num_outputs(mm) != 1 || body_.num_inputs(mm) < 2) return std::nullopt;
    const std::vector<Dim>* out = known_dims(body_.fact(body_.output(restore, 0)));
    if (!out) return std::nullopt;
    if (!gemm)
      if (auto v = vector_case(mm, *out)) return v;
    const ValueId flat_a = body_.input(mm, 0), rhs = body_.input(mm, 1);
    const NodeId flatten = body_.producer(flat_a);
    if (flatten == kNone || rhs == ir::kNoValue || !is_op(body_.node(flatten), "Reshape")) return std::nullopt;
    const ValueId a = body_.input(flatten, 0);
    const std::vector<Dim>* ad = known_dims(body_.fact(a));
    const std::vector<Dim>* fd = known_dims(body_.fact(flat_a));
    const std::vector<Dim>* rd = known_dims(body_.fact(rhs));
    if (!ad || !fd || !rd || fd->size() < 2 || fd->size() > 3 || ad->size() <= fd->size() - 1) return std::nullopt;
    // The flattened operand keeps a's last dims: its rows (matrices) are a's, in order.
    const size_t kept = fd->size() - 1;  // K, or M and K
    if (!std::equal(fd->end() - static_cast<std::ptrdiff_t>(kept), fd->end(), ad->end() - static_cast<std::ptrdiff_t>(kept)))
      return std::nullopt;
    if (gemm) return gemm_case(mm, a, *ad, *fd, *rd, *out);
    std::vector<Dim> expected(ad->begin(), ad->end() - 1);  // a's dims but the last
    if (rd->size() == 2 && fd->size() == 2) {                // linear: a [..., K] by w [K, N]
      expected.push_back(rd->back());
      if (*out != expected) return std::nullopt;
      return Unflatten{a, rhs};
    }
    if (fd->size() != 3 || rd->size() != 3) return std::nullopt;  // bmm: both flattened alike
    const NodeId flatten_b = body_.producer(rhs);
    if (flatten_b == kNone || !is_op(body_.node(flatten_b), "Reshape")) return std::nullopt;
    const ValueId c = body_.input(flatten_b, 0);
    const std::vector<Dim>* cd = known_dims(body_.fact(c));
    if (!cd || cd->size() != ad->size() || !std::equal(cd->end() - 2, cd->end(), rd->end() - 2) ||
        !std::equal(cd->begin(), cd->end() - 2, ad->begin()) || (*fd)[0] != (*rd)[0])
      return std::nullopt;
    expected.push_back(rd->back());  // a's batch dims and M, then N
    if (*out != expected) return std::nullopt;
    return Unflatten{a, c};
  }

 private:
  const MutableBody& body_;

  // Reshape(MatMul(Reshape(x, [1, K]), b), s) for x of shape [K] and b of rank 2 or more is
  // MatMul(x, b): ONNX's MatMul (numpy's) makes a 1-D first operand the row [1, K] and
  // removes that 1, the product's second last dim, from the result; so where s is the
  // product's shape without it, the reshapes only add and remove it. Not a 1-D second
  // operand reshaped to a column [K, 1], equal as well: ONNX Runtime's kernels then sum in
  // another order (the last bits differ), where for the row they agree bit for bit.
  std::optional<Unflatten> vector_case(NodeId mm, const std::vector<Dim>& out) const {
    if (body_.num_inputs(mm) != 2) return std::nullopt;
    const ValueId row = body_.input(mm, 0), b = body_.input(mm, 1);
    const std::vector<Dim>* product = known_dims(body_.fact(body_.output(mm, 0)));
    const std::optional<size_t> rank_b = rank_of(body_.fact(b));
    const ValueId x = vector_of(row);
    if (!product || product->size() < 2 || !rank_b || *rank_b < 2 || x == ir::kNoValue) return std::nullopt;
    std::vector<Dim> expected = *product;
    expected.erase(expected.end() - 2);
    if (out != expected) return std::nullopt;
    return Unflatten{x, b};
  }

  // x where `v` is Reshape(x) of a 1-D x of shape [K] to the row [1, K].
  ValueId vector_of(ValueId v) const {
    const NodeId reshape = body_.producer(v);
    if (reshape == kNone || !is_op(body_.node(reshape), "Reshape") || has_reference(body_.node(reshape)))
      return ir::kNoValue;
    const ValueId x = body_.input(reshape, 0);
    const std::vector<Dim>* xd = known_dims(body_.fact(x));
    const std::vector<Dim>* vd = known_dims(body_.fact(v));
    if (!xd || !vd || xd->size() != 1) return ir::kNoValue;
    return *vd == std::vector<Dim>{Dim::constant(1), xd->front()} ? x : ir::kNoValue;
  }

  std::optional<Unflatten> gemm_case(NodeId mm, ValueId a, const std::vector<Dim>& ad, const std::vector<Dim>& fd,
                                     const std::vector<Dim>& wd, const std::vector<Dim>& out) const {
    const NodeProto& m = body_.node(mm);
    if (fd.size() != 2 || wd.size() != 2 || int_attribute(m, "transA").value_or(0) != 0) return std::nullopt;
    for (const char* name : {"alpha", "beta"}) {
      const auto* at = attribute(m, name);
      if (at && (at->type() != onnx::AttributeProto::FLOAT || at->f() != 1.0f)) return std::nullopt;
    }
    const bool transpose = int_attribute(m, "transB").value_or(0) != 0;
    const ValueId w = body_.input(mm, 1);
    if (transpose && (!body_.stored_constant(w) || body_.uses(w) != 1)) return std::nullopt;
    std::vector<Dim> expected(ad.begin(), ad.end() - 1);
    expected.push_back(transpose ? wd[0] : wd[1]);
    if (out != expected) return std::nullopt;
    const ValueId bias = body_.input(mm, 2);
    if (bias != ir::kNoValue) {
      const std::vector<Dim>* bd = known_dims(body_.fact(bias));
      if (!bd || bd->size() > 2 || (bd->size() == 2 && (*bd)[0].as_constant() != std::optional<int64_t>(1)))
        return std::nullopt;
    }
    return Unflatten{a, w, transpose, bias};
  }
};

}  // namespace

bool unflatten_matmuls(PassContext& ctx) {
  MutableBody& body = ctx.body();
  const MatMulBroadcast matmuls(body);
  return rewrite_matches(
      ctx, Counter::MatMulsUnflattened, [&](NodeId id) { return matmuls.match(id); },
      [&](NodeId id, const auto& u) {
        ValueId b = u->b;
        if (u->transpose_b) {
          NodeProto t;
          t.set_op_type("Transpose");
          set_ints_attribute(t, "perm", {1, 0});
          b = body.new_value(std::string(body.name(u->b)) + "_t");
          body.insert_before(id, std::move(t), {u->b}, {b});
        }
        NodeProto mm;
        mm.set_op_type("MatMul");
        if (u->bias == ir::kNoValue) {
          body.replace_node(id, std::move(mm), {u->a, b});
          return true;
        }
        const ValueId product = body.new_value(std::string(body.name(body.output(id, 0))) + "_matmul");
        body.insert_before(id, std::move(mm), {u->a, b}, {product});
        NodeProto add;
        add.set_op_type("Add");
        body.replace_node(id, std::move(add), {product, u->bias});
        return true;
      });
}

}  // namespace shapeprop::transform
