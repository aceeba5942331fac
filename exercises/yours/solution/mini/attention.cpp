// Stage 9, the reference solution: attention from the ops of stages 5 to 7
// (reshape and transpose for the heads, the batched matmul, the mask added,
// softmax), and the block from attention, layer norm and two Linears.
#include "mini/attention.h"

#include <cmath>
#include <limits>
#include <string>

#include "mini/error.h"

namespace mini {

namespace {

std::string str(const Shape& s) {
  std::string out = "(";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + ")";
}

Var constant(Tensor t) { return Var(std::move(t)); }

}  // namespace

LayerNorm::LayerNorm(int64_t D)
    : weight(Tensor(std::vector<double>(static_cast<size_t>(D), 1.0), {D}), true),
      bias(Tensor(std::vector<double>(static_cast<size_t>(D), 0.0), {D}), true) {
  register_parameter("weight", weight);
  register_parameter("bias", bias);
}

Var LayerNorm::forward(const Var& x) const { return layer_norm(x, weight, bias); }

Tensor causal_mask(int64_t T) {
  std::vector<double> m(static_cast<size_t>(T * T), 0.0);
  for (int64_t i = 0; i < T; ++i)
    for (int64_t j = i + 1; j < T; ++j) m[static_cast<size_t>(i * T + j)] = -std::numeric_limits<double>::infinity();
  return Tensor(std::move(m), {T, T});
}

CausalSelfAttention::CausalSelfAttention(int64_t D, int64_t heads, Generator& gen)
    : w_q(D, D, gen), w_k(D, D, gen), w_v(D, D, gen), w_o(D, D, gen), heads(heads) {
  MINI_CHECK(heads >= 1 && D % heads == 0, "CausalSelfAttention", heads << " heads do not divide D = " << D);
  register_module("w_q", w_q);
  register_module("w_k", w_k);
  register_module("w_v", w_v);
  register_module("w_o", w_o);
}

Var CausalSelfAttention::forward(const Var& x) const {
  const Shape& s = x.shape();
  const int64_t D = w_q.weight.shape()[1];
  MINI_CHECK(s.size() == 3 && s[2] == D, "CausalSelfAttention",
             "x of shape " << str(s) << ": it must be (B, T, " << D << ")");
  const int64_t B = s[0], T = s[1], h = heads, d = D / h;
  // (B, T, D) -> (B, T, h, d) -> (B, h, T, d): each head a batch of its own
  auto split = [&](const Var& y) { return transpose(reshape(y, {B, T, h, d}), 1, 2); };
  const Var q = split(w_q.forward(x)), k = split(w_k.forward(x)), v = split(w_v.forward(x));
  const Var scores = mul(matmul(q, transpose(k, 2, 3)), constant(Tensor({1 / std::sqrt(static_cast<double>(d))}, {1})));
  const Var weights = softmax(add(scores, constant(causal_mask(T))));  // the mask broadcasts over (B, h)
  const Var out = transpose(matmul(weights, v), 1, 2);                 // (B, T, h, d)
  return w_o.forward(reshape(out, {B, T, D}));
}

TransformerBlock::TransformerBlock(int64_t D, int64_t heads, Generator& gen)
    : ln1(D), attn(D, heads, gen), ln2(D), fc1(D, 4 * D, gen), fc2(4 * D, D, gen) {
  register_module("ln1", ln1);
  register_module("attn", attn);
  register_module("ln2", ln2);
  register_module("fc1", fc1);
  register_module("fc2", fc2);
}

Var TransformerBlock::forward(const Var& x) const {
  const Var y = add(x, attn.forward(ln1.forward(x)));
  return add(y, fc2.forward(gelu(fc1.forward(ln2.forward(y)))));
}

}  // namespace mini
