// Exercise 14.2: The Jacobian, the cheaper way (chapter 14, docs/book/14_forward_mode.md)
//
// f maps a vector x of n numbers to a vector of m numbers. Its Jacobian J
// (m, n) can be built two ways:
//   * column by column, forward mode: column j is J e_j, the tangent that
//     jvp(f, {x}, {e_j}) returns (e_j: zeros with a 1 at j) — n passes;
//   * row by row, reverse mode: vjp(f, {x}) runs f once and returns a
//     pullback; row i is pullback(e_i)[0] (e_i of the output's size) — m
//     pullbacks.
// Write jacobian(f, x, m) that takes the cheaper way: columns when n <= m,
// rows otherwise, with ember::jvp and ember::vjp (autograd/functional.h) and
// stack(...) to put the pieces together. x is a float64 vector.
// The checker counts how often your code calls f.
//
// Check it:  bash scripts/exercise.sh 14.2
#include "exercises/exercise.h"

using namespace ember;

namespace ex14_2 {

Tensor jacobian(const TensorFn& f, const Tensor& x, int64_t m) {
  const int64_t n = x.numel();
  (void)f;
  (void)m;
  (void)n;
  TODO("which takes fewer passes here, one jvp per input element or one pullback per output element, "
       "and is each pass a column or a row?");
}

}  // namespace ex14_2
