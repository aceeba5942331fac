// Exercise 6.3: Scaled dot-product attention, with a causal mask (chapter 6, docs/book/06_sequence_models.md)
//
// Write attention(q, k, v, causal) = softmax(q k^T / sqrt(d)) v for q
// (..., Tq, d), k (..., Tk, d), v (..., Tk, dv). With causal, query i may not
// see keys j > i: their scores become -inf before the softmax, so their
// weights are exactly 0.
//
// Useful ops (autograd/ops.h): matmul, transpose(k, -1, -2), softmax(s, -1),
// masked_fill(s, mask, -INFINITY) with a bool mask, triu(ones({Tq, Tk}), 1)
// (1 above the diagonal), gt(t, 0.0) (a bool tensor).
// The lesson's example: scores (2, 1) give weights (0.731, 0.269), and values
// (10, 4) the context 8.386.
//
// Check it:  bash scripts/exercise.sh 6.3
#include <cmath>

#include "exercises/exercise.h"

using namespace ember;

namespace ex6_3 {

Tensor attention(const Tensor& q, const Tensor& k, const Tensor& v, bool causal) {
  (void)q;
  (void)k;
  (void)v;
  (void)causal;
  TODO("how does each query score each key, which keys may a causal query not see, "
       "and how do the weights combine the values?");
}

}  // namespace ex6_3
