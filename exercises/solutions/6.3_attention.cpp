// Exercise 6.3: Scaled dot-product attention, a reference solution.
#include <cmath>

#include "exercises/exercise.h"

using namespace ember;

namespace ex6_3 {

// q (..., Tq, d), k (..., Tk, d), v (..., Tk, dv) -> (..., Tq, dv)
Tensor attention(const Tensor& q, const Tensor& k, const Tensor& v, bool causal) {
  const int64_t d = q.size(-1), Tq = q.size(-2), Tk = k.size(-2);
  Tensor scores = matmul(q, transpose(k, -1, -2)) / std::sqrt(static_cast<double>(d));  // (..., Tq, Tk)
  if (causal) scores = masked_fill(scores, gt(triu(ones({Tq, Tk}), 1), 0.0), -INFINITY);
  return matmul(softmax(scores, -1), v);
}

}  // namespace ex6_3
