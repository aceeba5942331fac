// Exercise 18.1, a solution: pad each batched operand with size-1 dims
// right after its batch dim, up to the rank of one sample's result, so that
// broadcasting lines the samples' own dims up from the right and the batch
// dims meet each other (or nothing, for an operand that is not batched).
#include "exercises/exercise.h"

using namespace ember;

namespace ex18_1 {

namespace {
Tensor padded(const Tensor& x, bool batched, int64_t rank) {
  if (!batched) return x;  // broadcasting already aligns it from the right
  Tensor y = x;
  while (y.dim() - 1 < rank) y = y.unsqueeze(1);
  return y;
}
}  // namespace

Tensor batched_mul(const Tensor& a, bool a_batched, const Tensor& b, bool b_batched) {
  const int64_t rank = std::max(a.dim() - (a_batched ? 1 : 0), b.dim() - (b_batched ? 1 : 0));
  return padded(a, a_batched, rank) * padded(b, b_batched, rank);
}

}  // namespace ex18_1
