// Exercise 11.1: A matrix product in three loops (chapter 11, docs/book/11_speed.md)
//
// Write matmul_loops(a, b) for float32 matrices a (M, K) and b (K, N):
// C = A B, with plain loops over the numbers, reading them through
// data_ptr<float>() and writing C's the same way. Sizes that do not fit are
// an ember::Error naming both shapes. The checker compares with ember's
// matmul (OpenBLAS) and shows how long each took.
//
// Think about:
//   * data_ptr<float>() gives the numbers as they lie in memory: in which
//     order do they lie for a transposed view? (chapter 1) what gives you a
//     tensor whose numbers lie row by row?
//   * element (r, c) of a row-major matrix with n columns is which number?
//   * C[i, j] is a sum over k: where does each sum start?
//   * loop order: put i, then k, then j. What does the innermost loop then
//     walk through in memory, for b and for C, and why does that suit the
//     compiler's vector instructions?
//
// Check it:  bash scripts/exercise.sh 11.1
#include "exercises/exercise.h"

using namespace ember;

namespace ex11_1 {

Tensor matmul_loops(const Tensor& a, const Tensor& b) {
  (void)a;
  (void)b;
  TODO("refuse shapes that do not multiply; then C (M, N) as sums over k, with the loops in the order i, k, j");
}

}  // namespace ex11_1
