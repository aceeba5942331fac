// Stage 9: attention and a Transformer block (docs/book/build_your_own/09_attention.md).
// Each MINI_TODO asks a question; replace it with your code, then run
//   bash scripts/build_your_own.sh 9
#include "mini/attention.h"

#include <cmath>
#include <limits>
#include <string>

#include "mini/error.h"

namespace mini {

namespace {

// "(2, 3)": a shape, for the messages of your refusals (given).
[[maybe_unused]] std::string str(const Shape& s) {
  std::string out = "(";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + ")";
}

}  // namespace

LayerNorm::LayerNorm(int64_t D) : weight(Tensor({}, {0})), bias(Tensor({}, {0})) {
  (void)D;
  MINI_TODO("which starting numbers make a fresh layer norm change nothing but the normalization?");
}

Var LayerNorm::forward(const Var& x) const {
  (void)x;
  MINI_TODO("which op of stage 6?");
}

Tensor causal_mask(int64_t T) {
  (void)T;
  MINI_TODO("which (query, key) pairs are the future, and what number added to a score makes its softmax weight "
            "exactly 0?");
}

CausalSelfAttention::CausalSelfAttention(int64_t D, int64_t heads, Generator& gen)
    : w_q(D, D, gen), w_k(D, D, gen), w_v(D, D, gen), w_o(D, D, gen), heads(heads) {
  MINI_TODO("what must be true of D and heads, and what must the module know about its four Linears?");
}

Var CausalSelfAttention::forward(const Var& x) const {
  (void)x;
  MINI_TODO("how do stage 7's reshape and transpose make each head a batch of its own, without mixing the "
            "numbers of two heads? Which dims does the product of q and k contract? Why divide by √d, and where "
            "does the mask go: before or after the softmax?");
}

TransformerBlock::TransformerBlock(int64_t D, int64_t heads, Generator& gen)
    : ln1(D), attn(D, heads, gen), ln2(D), fc1(D, 4 * D, gen), fc2(4 * D, D, gen) {
  MINI_TODO("which names, in which order (ember's: the header says)?");
}

Var TransformerBlock::forward(const Var& x) const {
  (void)x;
  MINI_TODO("pre-norm: what is normalized, and what is added back?");
}

}  // namespace mini
