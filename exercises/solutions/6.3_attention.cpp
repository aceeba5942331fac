// Exercise 6.3: Scaled dot-product attention, a reference solution.
#include <cmath>

#include "exercises/exercise.h"

using namespace ember;

namespace ex6_3 {

// q (..., Tq, d), k (..., Tk, d), v (..., Tk, dv) -> (..., Tq, dv)
Tensor attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask, bool causal) {
  const int64_t d = q.size(-1), Tq = q.size(-2), Tk = k.size(-2);
  Tensor scores = matmul(q, transpose(k, -1, -2)) / std::sqrt(static_cast<double>(d));  // (..., Tq, Tk)
  if (mask.defined()) scores = masked_fill(scores, eq(mask, 0.0), -INFINITY);  // false: hidden
  if (causal) scores = masked_fill(scores, gt(triu(ones({Tq, Tk}), 1), 0.0), -INFINITY);
  // A query that may see no key has a row of only -inf: ember's softmax gives
  // it the weights 0 (no NaN), so its output is 0 and its gradient 0.
  return matmul(softmax(scores, -1), v);
}

}  // namespace ex6_3
