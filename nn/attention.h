/// @file
/// Attention (lesson C): from a weighted average over encoder states
/// (Bahdanau) to scaled dot-product self-attention, multiple heads, and the
/// pre-LN Transformer block.
///
/// Legend: B batch, T sequence length (Tq queries, Tk keys), D model dim,
///         h heads, d = D / h head dim.
#pragma once

#include <optional>

#include "nn/init.h"
#include "nn/kv_cache.h"
#include "nn/layers.h"

namespace ember::nn {

struct Attention {
  Tensor output;   // (…, Tq, dv)
  Tensor weights;  // (…, Tq, Tk), rows sum to 1 (or 0, see below)
};

/// softmax(q kᵀ / sqrt(d) + mask) v for q (…, Tq, d), k (…, Tk, d), v (…, Tk, dv).
/// mask (optional, broadcast to (…, Tq, Tk)): a floating mask is ADDED to the
/// scores (use -inf to block); a bool mask keeps the positions that are true
/// (PyTorch's convention). causal blocks key j for query i when j > i.
/// A query whose every key is blocked attends to nothing: its weights are all
/// 0 and its output is 0 (never NaN).
Attention scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask = Tensor(),
                                       bool causal = false);

/// Bahdanau's additive score e_j = vᵀ tanh(W s + U h_j), α = softmax_j(e),
/// context = Σ_j α_j h_j — the decoder state s asks, the encoder states h answer.
class AdditiveAttention : public Module {
 public:
  AdditiveAttention(int64_t query_dim, int64_t key_dim, int64_t hidden_dim, const InitOptions& options = {});
  /// s (B, Dq), h (B, T, Dk), optional bool mask (B, T) of valid positions
  /// -> output (B, Dk) context, weights (B, T)
  Attention forward(const Tensor& s, const Tensor& h, const Tensor& mask = Tensor()) const;
  std::string type_name() const override { return "AdditiveAttention"; }
  std::shared_ptr<Linear> w, u, v;  // W: Dq -> A, U: Dk -> A, v: A -> 1
};

/// How multi-head self-attention computes softmax(q kᵀ / sqrt(d)) v.
enum class AttentionKernel {
  /// tiled_attention (autograd/ops.h): saves the output and one log-sum-exp
  /// per query row; backward recomputes the weights tile by tile.
  Tiled,
  /// scaled_softmax and two matmuls: the (B, h, T, T) weights are saved for
  /// backward.
  Stored,
};
const char* attention_kernel_name(AttentionKernel k);  // "tiled", "stored"

struct MultiHeadAttentionOptions {
  bool causal = false;  // query i sees keys 0..i only
  AttentionKernel kernel = AttentionKernel::Tiled;
  bool bias = true;     // of the four projections
  DType dtype = kFloat32;
  Generator* generator = nullptr;  // null: the default generator (nn/init.h)
};

/// Multi-head attention with separate W_Q, W_K, W_V, W_O projections (D -> D).
/// Heads are split and merged with views: (B, T, D) -> (B, T, h, d) -> (B, h, T, d).
class MultiHeadAttention : public Module {
 public:
  MultiHeadAttention(int64_t dim, int64_t heads, const MultiHeadAttentionOptions& options = {});
  /// Self-attention: x (B, T, D) -> (B, T, D). With no mask, outside autocast,
  /// through `kernel`; otherwise (and in the form below) the weights are
  /// computed and stored.
  Tensor forward(const Tensor& x, const Tensor& mask = Tensor());
  /// General form (cross-attention): query (B, Tq, D), key/value (B, Tk, D).
  /// The weights (B, h, Tq, Tk) are returned too (so this form stores them).
  Attention forward(const Tensor& query, const Tensor& key, const Tensor& value, const Tensor& mask = Tensor());
  /// Causal self-attention of x (B, T, D), the T tokens after the
  /// cache.length() that `cache` holds for `layer`: their keys and values
  /// are appended to the cache, and query i attends to the cached keys and
  /// to the new ones up to its own. Equals forward(x_all) at those rows
  /// (x_all: every token so far), within rounding: see nn/kv_cache.h.
  /// The cache's length moves on in the caller (GPT::forward), after every
  /// layer. Inference only: an error under grad mode, or without causal.
  Tensor forward(const Tensor& x, KVCache& cache, int64_t layer);
  std::string type_name() const override { return "MultiHeadAttention"; }
  std::string extra_repr() const override;
  int64_t heads() const { return heads_; }

  std::shared_ptr<Linear> w_q, w_k, w_v, w_o;
  AttentionKernel kernel;  // of self-attention, see forward(x)

 private:
  Tensor project(const Tensor& query, const Tensor& key, const Tensor& value, const Tensor& mask, Tensor* weights);
  int64_t dim_, heads_;
  bool causal_;
};

struct TransformerBlockOptions {
  int64_t mlp_ratio = 4;  // the MLP's hidden width, in multiples of dim
  double dropout = 0.0;
  bool causal = true;
  AttentionKernel attention = AttentionKernel::Tiled;  // MultiHeadAttention::kernel
  GeluApprox gelu = GeluApprox::None;  // the MLP's GELU: exact (erf), or GPT-2's tanh form
  DType dtype = kFloat32;
  Generator* generator = nullptr;  // null: the default generator (nn/init.h)
};

/// Pre-LN Transformer block:
///   x = x + dropout(attn(ln1(x)))
///   x = x + dropout(fc2(gelu(fc1(ln2(x)))))     fc1: D -> mlp_ratio·D
/// (GPT-2's layout: ln1 = ln_1, attn's four projections = c_attn split in
/// three and c_proj, ln2 = ln_2, fc1 = mlp.c_fc, fc2 = mlp.c_proj.)
class TransformerBlock : public UnaryModule {
 public:
  TransformerBlock(int64_t dim, int64_t heads, const TransformerBlockOptions& options = {});
  Tensor forward(const Tensor& x) override;  // (B, T, D) -> (B, T, D)
  /// The same for the T tokens after those `cache` holds (MultiHeadAttention's form).
  Tensor forward(const Tensor& x, KVCache& cache, int64_t layer);
  std::string type_name() const override { return "TransformerBlock"; }

  std::shared_ptr<LayerNorm> ln1, ln2;
  std::shared_ptr<MultiHeadAttention> attn;
  std::shared_ptr<Linear> fc1, fc2;
  std::shared_ptr<Dropout> drop;
  GeluApprox gelu_approx;
};

}  // namespace ember::nn
