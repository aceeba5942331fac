// tiled_attention as one op: its node saves q, k, v, the output and one
// log-sum-exp per query row (no weights), and its rule is the tiled backward
// of tensor/attention.cpp. When backward records (create_graph) or tangents
// travel through it, the rule takes the composed formula below instead, in
// ember ops, which holds the weights but can be differentiated again.
//
// Legend: P = softmax(s q kᵀ) the weights, s = 1 / sqrt(d), g = dL/d out.
//   dv = Pᵀ g,  dP = g vᵀ,  dS = s P ⊙ (dP - rowsum(dP ⊙ P)),  dq = dS k,  dk = dSᵀ q
#include <cmath>

#include "autograd/forward.h"
#include "autograd/node.h"
#include "autograd/op_scope.h"
#include "autograd/ops.h"
#include "tensor/kernels.h"

namespace ember {

namespace {
// The weights, recomputed in ember ops (the composed rules below).
Tensor weights(const Tensor& q, const Tensor& k, double scale, bool causal) {
  return scaled_softmax(matmul(q, transpose(k, -2, -1)), scale, causal);
}
}  // namespace

struct TiledAttentionBackward final : Node {
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
  std::vector<Tensor> apply(const Tensor& g) override {
    const Tensor Q = q.get(*this), K = k.get(*this), V = v.get(*this);
    if (!backward_composes()) {
      kernel::TiledAttentionGrads d =
          kernel::tiled_attention_backward(Q, K, V, out.get(*this), lse.get(*this), g, scale, causal);
      return {d.q, d.k, d.v};
    }
    Tensor P = weights(Q, K, scale, causal);
    Tensor dP = matmul(g, transpose(V, -2, -1));
    Tensor dS = P * (dP - sum(dP * P, {-1}, true)) * scale;
    return {matmul(dS, K), matmul(transpose(dS, -2, -1), Q), matmul(transpose(P, -2, -1), g)};
  }
};

Tensor tiled_attention(const Tensor& q, const Tensor& k, const Tensor& v, bool causal) {
  OpScope scope("tiled_attention", q, k, v);
  EMBER_CHECK(q.dim() >= 2, "tiled_attention", "q needs shape (..., T, d), got " << shape_str(q.shape()));
  const double scale = 1.0 / std::sqrt(static_cast<double>(std::max<int64_t>(q.size(-1), 1)));
  kernel::TiledAttention f = kernel::tiled_attention_forward(q, k, v, scale, causal);
  if (needs_grad({q, k, v}))
    record(f.out, std::make_shared<TiledAttentionBackward>(q, k, v, f.out, f.lse, scale, causal), {q, k, v});
  // Forward: d out = dP v + P dv, with dP = P ⊙ (dS - rowsum(dS ⊙ P)) and
  // dS = s (dq kᵀ + q dkᵀ): the backward's terms read the other way.
  forward_rule(f.out, [&] {
    Tensor P = weights(q, k, scale, causal);
    Tensor dS = plus(term(q, [&](const Tensor& t) { return matmul(t, transpose(k, -2, -1)) * scale; }),
                     term(k, [&](const Tensor& t) { return matmul(q, transpose(t, -2, -1)) * scale; }));
    Tensor through_p = dS.defined() ? matmul(P * (dS - sum(dS * P, {-1}, true)), v) : Tensor();
    return plus(through_p, term(v, [&](const Tensor& t) { return matmul(P, t); }));
  }, q, k, v);
  return f.out;
}

}  // namespace ember
