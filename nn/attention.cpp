#include "nn/attention.h"

#include <cmath>
#include <limits>
#include <sstream>

#include "autograd/autocast.h"
#include "autograd/grad_mode.h"
#include "autograd/op_scope.h"
#include "autograd/ops.h"
#include "nn/init.h"
#include "tensor/factory.h"
#include "tensor/kernels.h"

namespace ember::nn {

Attention scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask,
                                       bool causal) {
  EMBER_CHECK(q.dim() >= 2 && k.dim() >= 2 && v.dim() >= 2, "scaled_dot_product_attention",
              "q, k, v need shape (..., T, d), got " << shape_str(q.shape()) << ", " << shape_str(k.shape()) << ", "
                                                     << shape_str(v.shape()));
  EMBER_CHECK(q.size(-1) == k.size(-1) && k.size(-2) == v.size(-2), "scaled_dot_product_attention",
              "q " << shape_str(q.shape()) << " and k " << shape_str(k.shape()) << " must share d, and k and v "
                   << shape_str(v.shape()) << " must share Tk");
  const int64_t Tq = q.size(-2), Tk = k.size(-2);
  const double scale = 1.0 / std::sqrt(static_cast<double>(q.size(-1)));
  Tensor scores = matmul(q, transpose(k, -2, -1));  // (…, Tq, Tk), not yet scaled
  if (!mask.defined()) {  // the common case: scale, causal mask and softmax in one op
    Tensor weights = scaled_softmax(scores, scale, causal);
    return {matmul(weights, v), weights};
  }
  // With a mask, one op per step (what scaled_softmax is tested against).
  scores = scores * scale;
  const double neg_inf = -std::numeric_limits<double>::infinity();
  {
    Shape b = broadcast_shapes(scores.shape(), mask.shape(), "scaled_dot_product_attention");
    EMBER_CHECK(b == scores.shape(), "scaled_dot_product_attention",
                "mask of shape " << shape_str(mask.shape()) << " does not broadcast to the scores "
                                 << shape_str(scores.shape()));
    if (mask.dtype() == kBool) scores = masked_fill(scores, eq(mask, 0.0), neg_inf);  // false = blocked
    else scores = scores + mask;
  }
  if (causal) {
    // key j is in the future of query i when j > i
    Tensor future = triu(ones({Tq, Tk}, kBool), 1);  // ops: compile/ sees the mask made
    scores = masked_fill(scores, future, neg_inf);
  }
  Tensor weights = softmax(scores, -1);  // an all -inf row gives all zeros (tensor/reduce.cpp)
  return {matmul(weights, v), weights};
}

// ---- additive (Bahdanau) attention ----
AdditiveAttention::AdditiveAttention(int64_t Dq, int64_t Dk, int64_t A, const InitOptions& o) {
  Generator* gen = &init::generator(o.generator);
  w = register_module("w", std::make_shared<Linear>(Dq, A, LinearOptions{.bias = false, .dtype = o.dtype, .generator = gen}));
  u = register_module("u", std::make_shared<Linear>(Dk, A, LinearOptions{.bias = true, .dtype = o.dtype, .generator = gen}));
  v = register_module("v", std::make_shared<Linear>(A, 1, LinearOptions{.bias = false, .dtype = o.dtype, .generator = gen}));
}

Attention AdditiveAttention::forward(const Tensor& s, const Tensor& h, const Tensor& mask) const {
  ModuleScope scope(*this);
  EMBER_CHECK(s.dim() == 2 && h.dim() == 3 && s.size(0) == h.size(0), "AdditiveAttention",
              "expected s (B, Dq) and h (B, T, Dk), got " << shape_str(s.shape()) << " and " << shape_str(h.shape()));
  // e (B, T) = v(tanh(W s (B, 1, A) + U h (B, T, A)))
  Tensor e = squeeze(v->forward(tanh(unsqueeze(w->forward(s), 1) + u->forward(h))), -1);
  if (mask.defined()) {
    EMBER_CHECK(mask.dtype() == kBool && mask.shape() == e.shape(), "AdditiveAttention",
                "mask must be bool " << shape_str(e.shape()) << ", got " << dtype_name(mask.dtype()) << " "
                                     << shape_str(mask.shape()));
    e = masked_fill(e, eq(mask, 0.0), -std::numeric_limits<double>::infinity());
  }
  Tensor alpha = softmax(e, -1);                                       // (B, T)
  Tensor context = squeeze(matmul(unsqueeze(alpha, 1), h), 1);         // (B, 1, T) @ (B, T, Dk) -> (B, Dk)
  return {context, alpha};
}

// ---- multi-head attention ----
const char* attention_kernel_name(AttentionKernel k) { return k == AttentionKernel::Tiled ? "tiled" : "stored"; }

MultiHeadAttention::MultiHeadAttention(int64_t dim, int64_t heads, const MultiHeadAttentionOptions& o)
    : kernel(o.kernel), dim_(dim), heads_(heads), causal_(o.causal) {
  EMBER_CHECK(heads > 0 && dim > 0 && dim % heads == 0, "MultiHeadAttention",
              "dim " << dim << " must be a positive multiple of heads " << heads << " (each head gets dim / heads)");
  const LinearOptions proj{.bias = o.bias, .dtype = o.dtype, .generator = &init::generator(o.generator)};
  w_q = register_module("w_q", std::make_shared<Linear>(dim, dim, proj));
  w_k = register_module("w_k", std::make_shared<Linear>(dim, dim, proj));
  w_v = register_module("w_v", std::make_shared<Linear>(dim, dim, proj));
  w_o = register_module("w_o", std::make_shared<Linear>(dim, dim, proj));
}

Tensor MultiHeadAttention::forward(const Tensor& x, const Tensor& mask) {
  ModuleScope scope(*this);
  return project(x, x, x, mask, nullptr);
}

Attention MultiHeadAttention::forward(const Tensor& query, const Tensor& key, const Tensor& value, const Tensor& mask) {
  ModuleScope scope(*this);
  Attention a;
  a.output = project(query, key, value, mask, &a.weights);
  return a;
}

Tensor MultiHeadAttention::forward(const Tensor& x, KVCache& cache, int64_t layer) {
  ModuleScope scope(*this);
  EMBER_CHECK(!is_grad_enabled(), "MultiHeadAttention",
              "a key-value cache is for inference: run it under NoGradGuard (its buffers are written in place, "
              "which a graph cannot differentiate)");
  EMBER_CHECK(causal_, "MultiHeadAttention",
              "a key-value cache needs causal attention: without it, earlier tokens would attend to later ones and "
              "their cached keys and values would change");
  EMBER_CHECK(x.dim() == 3 && x.size(2) == dim_ && x.size(0) == cache.batch(), "MultiHeadAttention",
              "expected x (" << cache.batch() << ", T, " << dim_ << ") for a cache of batch " << cache.batch()
                             << ", got " << shape_str(x.shape()));
  const int64_t B = x.size(0), T = x.size(1), h = heads_, d = dim_ / heads_, past = cache.length();
  auto split = [&](const Tensor& t) { return transpose(view(t, {B, T, h, d}), 1, 2); };
  Tensor q = split(w_q->forward(x));
  auto [keys, values] = cache.append(layer, split(w_k->forward(x)), split(w_v->forward(x)));
  // query i sits at position past + i: it sees keys 0..past+i. The kernel of
  // tiled_attention with that offset, under the op's name, so that the
  // profiler and the trace show it as the op it is.
  Tensor heads_out;
  {
    OpScope scope("tiled_attention", q, keys, values);
    heads_out = kernel::tiled_attention_forward(q, keys, values, 1.0 / std::sqrt(static_cast<double>(d)),
                                                /*causal=*/true, past)
                    .out;
  }
  return w_o->forward(reshape(transpose(heads_out, 1, 2), {B, T, dim_}));
}

// The projections, the heads and the attention between them; the weights
// into *weights when asked for (which stores them).
Tensor MultiHeadAttention::project(const Tensor& query, const Tensor& key, const Tensor& value, const Tensor& mask,
                                   Tensor* weights) {
  EMBER_CHECK(query.dim() == 3 && key.dim() == 3 && value.dim() == 3 && query.size(2) == dim_ && key.size(2) == dim_ &&
                  value.size(2) == dim_ && key.size(1) == value.size(1) && query.size(0) == key.size(0) &&
                  key.size(0) == value.size(0),
              "MultiHeadAttention",
              "expected query (B, Tq, " << dim_ << ") and key/value (B, Tk, " << dim_ << "), got "
                                        << shape_str(query.shape()) << ", " << shape_str(key.shape()) << ", "
                                        << shape_str(value.shape()));
  const int64_t B = query.size(0), Tq = query.size(1), Tk = key.size(1), h = heads_, d = dim_ / heads_;
  // (B, T, D) -> (B, T, h, d) -> (B, h, T, d): a view, no copy
  auto split = [&](const Tensor& t, int64_t T) { return transpose(view(t, {B, T, h, d}), 1, 2); };
  Tensor q = split(w_q->forward(query), Tq);
  Tensor k = split(w_k->forward(key), Tk);
  Tensor v = split(w_v->forward(value), Tk);
  Tensor heads_out;  // (B, h, Tq, d)
  if (!weights && !mask.defined() && kernel == AttentionKernel::Tiled && !is_autocast_enabled()) {
    heads_out = tiled_attention(q, k, v, causal_);  // in q's layout: the merge below is a view
  } else {
    Attention a = scaled_dot_product_attention(q, k, v, mask, causal_);
    heads_out = a.output;
    if (weights) *weights = a.weights;
  }
  // merge heads: (B, h, Tq, d) -> (B, Tq, h, d) -> (B, Tq, D)
  Tensor merged = reshape(transpose(heads_out, 1, 2), {B, Tq, dim_});
  return w_o->forward(merged);
}

std::string MultiHeadAttention::extra_repr() const {
  std::ostringstream os;
  os << "dim=" << dim_ << ", heads=" << heads_ << (causal_ ? ", causal" : "");
  return os.str();
}

// ---- Transformer block ----
TransformerBlock::TransformerBlock(int64_t dim, int64_t heads, const TransformerBlockOptions& o) : gelu_approx(o.gelu) {
  EMBER_CHECK(o.mlp_ratio > 0, "TransformerBlock", "mlp_ratio must be positive, got " << o.mlp_ratio);
  Generator& gen = init::generator(o.generator);
  const int64_t hidden = o.mlp_ratio * dim;
  ln1 = register_module("ln1", std::make_shared<LayerNorm>(dim, LayerNormOptions{.dtype = o.dtype}));
  attn = register_module("attn", std::make_shared<MultiHeadAttention>(
                                     dim, heads, MultiHeadAttentionOptions{.causal = o.causal, .kernel = o.attention,
                                                                           .dtype = o.dtype, .generator = &gen}));
  ln2 = register_module("ln2", std::make_shared<LayerNorm>(dim, LayerNormOptions{.dtype = o.dtype}));
  fc1 = register_module("fc1", std::make_shared<Linear>(dim, hidden, LinearOptions{.dtype = o.dtype, .generator = &gen}));
  fc2 = register_module("fc2", std::make_shared<Linear>(hidden, dim, LinearOptions{.dtype = o.dtype, .generator = &gen}));
  const uint64_t drop_seed = [&] {
    GeneratorLock lock(gen);  // gen may be the shared default generator
    return gen.next_u64();
  }();
  drop = register_module("drop", std::make_shared<Dropout>(o.dropout, DropoutOptions{.seed = drop_seed}));
}

Tensor TransformerBlock::forward(const Tensor& x) {
  ModuleScope scope(*this);
  Tensor y = x + drop->forward(attn->forward(ln1->forward(x)));
  return y + drop->forward(fc2->forward(gelu(fc1->forward(ln2->forward(y)), gelu_approx)));
}

Tensor TransformerBlock::forward(const Tensor& x, KVCache& cache, int64_t layer) {
  ModuleScope scope(*this);
  Tensor y = x + drop->forward(attn->forward(ln1->forward(x), cache, layer));
  return y + drop->forward(fc2->forward(gelu(fc1->forward(ln2->forward(y)), gelu_approx)));
}

}  // namespace ember::nn
