// Exercise 11.1: A matrix product in three loops (chapter 11, docs/book/11_speed.md)
//
// Write matmul_loops(a, b) for float32 matrices a (M, K) and b (K, N): C = A B
// with plain loops over the numbers (data_ptr<float>() of contiguous copies:
// a.contiguous()). Put the loops in the order i, k, j: the innermost loop then
// walks a row of b and a row of C, both contiguous, which the compiler can
// vectorize. Sizes that do not fit are an ember::Error naming both shapes.
// The checker compares with ember's matmul (OpenBLAS) and shows how long
// each took.
//
// Check it:  bash scripts/exercise.sh 11.1
#include "exercises/exercise.h"

using namespace ember;

namespace ex11_1 {

Tensor matmul_loops(const Tensor& a, const Tensor& b) {
  (void)a;
  (void)b;
  TODO("check the shapes, then C = zeros({M, N}) and C[i, j] += A[i, k] * B[k, j] in the order i, k, j");
}

}  // namespace ex11_1
