// Exercise 6.3: Scaled dot-product attention, with a causal mask (chapter 6, docs/book/06_sequence_models.md)
//
// Write attention(q, k, v, mask, causal) = softmax(q k^T / sqrt(d)) v for q
// (..., Tq, d), k (..., Tk, d), v (..., Tk, dv) -> (..., Tq, dv), in which a
// query may be kept from seeing some keys: their scores become -inf before
// the softmax, so that their weights are exactly 0. Two things hide keys:
//   * mask, a bool tensor that broadcasts to (..., Tq, Tk), or an undefined
//     Tensor() for none: query i may see key j where it is true (ember's and
//     PyTorch's convention);
//   * causal: query i may not see the keys j > i, its future.
// The lesson's example (d = 1): scores (2, 1) give weights (0.731, 0.269),
// and values (10, 4) the context 8.386.
//
// Think it through:
//   * why divide the scores by sqrt(d) once d is larger than 1?
//   * along which dim must one query's weights sum to 1?
//   * masked_fill(s, m, value) fills where m is true: is that where a key is
//     visible, or where it is hidden?
//   * which entries of the (Tq, Tk) scores does causal hide: above or below
//     the diagonal, and the diagonal itself?
//   * a query whose every key is hidden (its row of the mask all false):
//     what should its weights, its output and its gradient be? And what
//     does a softmax give for a row of only -inf, if it computes
//     exp(s - max(s)) / sum? Decide before you run the checker: it tests
//     such a row against ember.
//
// Useful ops (autograd/ops.h): matmul, transpose, softmax, masked_fill,
// triu and tril (a matrix's upper and lower triangle), ones, and the
// comparisons eq, gt, ... (bool results).
//
// Compare with, after you try: nn::scaled_dot_product_attention
// (nn/attention.cpp), and what ember's softmax does with a row of only -inf
// (tensor/reduce.cpp).
//
// Check it:  bash scripts/exercise.sh 6.3
#include <cmath>

#include "exercises/exercise.h"

using namespace ember;

namespace ex6_3 {

Tensor attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask, bool causal) {
  (void)q;
  (void)k;
  (void)v;
  (void)mask;
  (void)causal;
  TODO("how does each query score each key, which keys may it not see (mask, causal), "
       "and how do the weights combine the values?");
}

}  // namespace ex6_3
