// An RNN's initial state that is all zeros is omitted: LSTM, GRU and RNN take an omitted
// initial_h (and LSTM's initial_c) as zeros (issue 25, family 11). PyTorch's exporters
// build the zeros from the input's batch size (Shape, Gather or Squeeze, Concat, Expand of
// a zero, a Slice of that per layer); with the state gone, dce removes that glue. A state
// counts as zero when it is a zero constant, or a ConstantOfShape of 0, or an Expand,
// Slice, reshape, Transpose, Tile or Identity of such a value (each keeps "every element
// is 0"); and only when the facts prove its shape is the one the op reads,
// [num_directions, batch, hidden_size] (an ill-shaped state is the runtime's error to
// give, not ours to hide).
#include <cmath>
#include <unordered_set>

#include "rewrite_support.h"

namespace shapeprop::transform {

namespace {

using onnx::NodeProto;

constexpr size_t kInitialH = 5, kInitialC = 6;
constexpr int kMaxChain = 16;  // nodes walked back from a state

// Every element known to be 0, and for floats +0.0: the default state is +0.0, and a
// -0.0 state can give -0.0 where the default gives +0.0 (tanh(-0.0 + -0.0)).
bool all_positive_zeros(const Fact& f) {
  if (!f.is_tensor()) return false;
  if (f.reals) {
    if (f.reals->empty()) return false;
    for (double d : *f.reals)
      if (d != 0 || std::signbit(d)) return false;
    return true;
  }
  return all_elements_are(&f, 0);
}

bool is_zero_tensor(const onnx::TensorProto& t) { return all_positive_zeros(Fact::of_tensor(t)); }

// Every element of `v` is +0.0 (or integral 0).
bool all_zero(const MutableBody& body, ValueId v, int depth = 0) {
  if (v == ir::kNoValue || depth > kMaxChain) return false;
  if (const Fact* f = body.fact(v); f && all_positive_zeros(*f)) return true;
  if (const onnx::TensorProto* t = body.stored_constant(v)) return is_zero_tensor(*t);
  const NodeId p = body.producer(v);
  if (p == kNone || body.num_inputs(p) == 0) return false;
  const NodeProto& n = body.node(p);
  if (!FunctionId::is_default_domain(n.domain()) || has_reference(n)) return false;
  const std::string_view op = n.op_type();  // compared as a view: lengths first
  if (op == "ConstantOfShape") {
    const auto* a = attribute(n, "value");
    return !a || (a->type() == onnx::AttributeProto::TENSOR && is_zero_tensor(a->t()));
  }
  return one_of(op, {"Expand", "Slice", "Reshape", "Squeeze", "Unsqueeze", "Flatten", "Transpose", "Tile", "Identity"}) &&
         all_zero(body, body.input(p, 0), depth + 1);
}

// The dims the op reads a state as: [num_directions, batch, hidden_size] (layout 0), or
// [batch, num_directions, hidden_size] (layout 1).
std::optional<std::vector<Dim>> state_dims(const MutableBody& body, NodeId id) {
  const NodeProto& n = body.node(id);
  const std::vector<Dim>* x = known_dims(body.fact(body.input(id, 0)));
  const auto hidden = int_attribute(n, "hidden_size");
  if (!x || x->size() != 3 || !hidden) return std::nullopt;
  const auto layout = int_attribute(n, "layout").value_or(0);
  const auto* direction = attribute(n, "direction");
  const int64_t directions = direction && direction->s() == "bidirectional" ? 2 : 1;
  if (layout == 0) return std::vector<Dim>{Dim::constant(directions), (*x)[1], Dim::constant(*hidden)};
  if (layout == 1) return std::vector<Dim>{(*x)[0], Dim::constant(directions), Dim::constant(*hidden)};
  return std::nullopt;
}

bool is_rnn(const NodeProto& n) { return is_op(n, "LSTM") || is_op(n, "GRU") || is_op(n, "RNN"); }

}  // namespace

bool omit_zero_rnn_states(PassContext& ctx) {
  if (!ctx.may_hold({"LSTM", "GRU", "RNN"})) return false;  // each match starts at one of these
  MutableBody& body = ctx.body();
  for (auto id = body.first(); id != kNone && !ctx.stop(); id = body.next(id)) {
    const NodeProto& n = body.node(id);
    if (!is_rnn(n) || has_reference(n)) continue;
    std::optional<std::vector<Dim>> dims;
    for (size_t k : {kInitialH, kInitialC}) {
      if (k == kInitialC && !is_op(n, "LSTM")) continue;
      const ValueId state = body.input(id, k);
      if (state == ir::kNoValue || !all_zero(body, state)) continue;
      if (!dims) dims = state_dims(body, id);
      const std::vector<Dim>* have = known_dims(body.fact(state));
      if (!dims || !have || *have != *dims) continue;
      ctx.apply(Counter::StatesOmitted, [&] {
        body.set_input(id, k, ir::kNoValue);
        return true;
      });
      if (ctx.stop()) break;
    }
  }
  return ctx.changed();
}

}  // namespace shapeprop::transform
