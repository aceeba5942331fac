// Stage 9 of your framework: attention and a Transformer block
// (docs/book/build_your_own/09_attention.md).
//
// Causal self-attention over x (B, T, D) with h heads of d = D / h numbers:
//   q, k, v = x W_qᵀ + b_q, x W_kᵀ + b_k, x W_vᵀ + b_v        each (B, T, D)
//   split into heads: (B, T, D) -> (B, T, h, d) -> (B, h, T, d)
//   scores = q kᵀ / √d                                          (B, h, T, T)
//   scores[i][j] = -inf where j > i  (a query sees itself and the past, never the future)
//   out = softmax(scores) v, heads merged back to (B, T, D), then x W_oᵀ + b_o
// and the pre-norm block that GPT-2 (and ember) stacks:
//   x = x + attn(ln1(x));   x = x + fc2(gelu(fc1(ln2(x))))      fc1: D -> 4D, fc2: 4D -> D
// The members are named as ember's (w_q, ..., ln1, fc1, ...), so that a
// model's named_parameters() match ember's one for one.
#pragma once

#include "mini/derived.h"
#include "mini/nn.h"

namespace mini {

/// Layer norm over the last dim, with weight (γ, ones at first) and bias
/// (β, zeros at first), both of shape (D).
class LayerNorm : public Module {
 public:
  explicit LayerNorm(int64_t D);
  Var forward(const Var& x) const;
  Var weight, bias;
};

/// The (T, T) mask added to the scores: 0 where key j <= query i, -inf where j > i.
Tensor causal_mask(int64_t T);

class CausalSelfAttention : public Module {
 public:
  /// Refuses heads that do not divide D.
  CausalSelfAttention(int64_t D, int64_t heads, Generator& gen);
  /// x (B, T, D) -> (B, T, D). Refuses an x that is not (B, T, D).
  Var forward(const Var& x) const;
  Linear w_q, w_k, w_v, w_o;
  int64_t heads;
};

class TransformerBlock : public Module {
 public:
  TransformerBlock(int64_t D, int64_t heads, Generator& gen);
  Var forward(const Var& x) const;  // (B, T, D) -> (B, T, D)
  LayerNorm ln1;
  CausalSelfAttention attn;
  LayerNorm ln2;
  Linear fc1, fc2;
};

}  // namespace mini
