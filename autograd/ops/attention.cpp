// tiled_attention as one fused op (autograd/composed_rule.h): its node saves
// q, k, v, the output and one log-sum-exp per query row (no weights), and its
// rule is the tiled backward of tensor/attention.cpp. Its composed fallback
// holds the weights, and is what create_graph and tangents differentiate.
//
// Legend: P = softmax(s q kᵀ) the weights, s = 1 / sqrt(d), g = dL/d out.
#include <algorithm>
#include <cmath>

#include "autograd/batching.h"
#include "autograd/composed_rule.h"
#include "autograd/op_scope.h"
#include "autograd/ops.h"
#include "tensor/kernels.h"

namespace ember {

namespace {
// s = 1 / sqrt(d)
double attention_scale(const Tensor& q) { return 1.0 / std::sqrt(static_cast<double>(std::max<int64_t>(q.size(-1), 1))); }
}  // namespace

// The fallback, and the definition: softmax(s q kᵀ) v, the weights held whole.
Tensor composed::tiled_attention(const Tensor& q, const Tensor& k, const Tensor& v, bool causal) {
  return matmul(scaled_softmax(matmul(q, transpose(k, -2, -1)), attention_scale(q), causal), v);
}

// The kernel's backward, with P = softmax(s q kᵀ) the weights, recomputed
// tile by tile from the saved log-sum-exp, and g = dL/d out:
//   dv = Pᵀ g,  dP = g vᵀ,  dS = s P ⊙ (dP - rowsum(dP ⊙ P)),  dq = dS k,  dk = dSᵀ q
struct TiledAttentionBackward final : ComposedBackward {
  EMBER_NODE_NAME(TiledAttentionBackward)
  SavedTensor q, k, v, out, lse;
  double scale;
  bool causal;
  TiledAttentionBackward(const Tensor& q_, const Tensor& k_, const Tensor& v_, const Tensor& o, const Tensor& l,
                         double s, bool c)
      : q(q_), k(k_), v(v_), out(o), lse(l), scale(s), causal(c) {}
  std::vector<SavedRef> saved() override {
    return {{"q", &q}, {"k", &k}, {"v", &v}, {"output", &out}, {"lse", &lse}};
  }
  std::vector<Tensor> fast_backward(const Tensor& g) override {
    kernel::TiledAttentionGrads d = kernel::tiled_attention_backward(q.get(*this), k.get(*this), v.get(*this),
                                                                     out.get(*this), lse.get(*this), g, scale, causal);
    return {d.q, d.k, d.v};
  }
  std::vector<Tensor> backward_as_op(const Tensor& g) override {
    return tiled_attention_backward(g, q.get(*this), k.get(*this), v.get(*this), out.get(*this), lse.get(*this),
                                    causal);
  }
  Tensor fallback(const std::vector<Tensor>& in) const override {
    return composed::tiled_attention(in[0], in[1], in[2], causal);
  }
  std::vector<Tensor> fallback_inputs() override { return {q.get(*this), k.get(*this), v.get(*this)}; }
};

// The op's results are out and each query row's log-sum-exp, which its
// backward reads: a captured graph holds it.
std::vector<Tensor> detail::tiled_attention_saving(const Tensor& q, const Tensor& k, const Tensor& v, bool causal) {
  OpScope scope("tiled_attention", q, k, v, causal);
  EMBER_CHECK(q.dim() >= 2, "tiled_attention", "q needs shape (..., T, d), got " << shape_str(q.shape()));
  const double scale = attention_scale(q);
  kernel::TiledAttention f = kernel::tiled_attention_forward(q, k, v, scale, causal);
  if (needs_grad({q, k, v}))
    record(f.out, std::make_shared<TiledAttentionBackward>(q, k, v, f.out, f.lse, scale, causal), {q, k, v});
  composed_forward_rule(f.out, [&] { return composed::tiled_attention(q, k, v, causal); }, q, k, v);
  return scope.out(std::vector<Tensor>{f.out, f.lse});
}
Tensor tiled_attention(const Tensor& q, const Tensor& k, const Tensor& v, bool causal) {
  return detail::tiled_attention_saving(q, k, v, causal)[0];
}

// The backward kernel as an op of its own, which a captured backward pass
// calls (compile/): the gradients of q, k and v.
std::vector<Tensor> tiled_attention_backward(const Tensor& grad, const Tensor& q, const Tensor& k, const Tensor& v,
                                             const Tensor& out, const Tensor& lse, bool causal) {
  OpScope scope("tiled_attention_backward", grad, q, k, v, out, lse, causal);
  refuse_to_record("tiled_attention_backward", {grad, q, k, v, out, lse});
  EMBER_CHECK(q.dim() >= 2, "tiled_attention_backward", "q needs shape (..., T, d), got " << shape_str(q.shape()));
  kernel::TiledAttentionGrads d =
      kernel::tiled_attention_backward(q, k, v, out, lse, grad, attention_scale(q), causal);
  return scope.out(std::vector<Tensor>{d.q, d.k, d.v});
}

// ---- vmap (autograd/batching.h): the batch is one more leading dim, which
// the kernel runs over like any other (every tensor given it) ----
namespace {
batching::Result attention_batched(const batching::Call& c) {
  std::vector<OpArg> args = c.args;
  for (size_t i = 0; i < args.size(); ++i)
    if (std::holds_alternative<Tensor>(args[i])) args[i] = batching::with_batch(c.tensor(i), c.batched[i], c.size);
  return batching::batched(c.run(args));
}
}  // namespace
void batching::detail::add_attention_batching_rules(Rules& r) {
  r.add({"tiled_attention", "tiled_attention_backward"}, &attention_batched);
}

}  // namespace ember
