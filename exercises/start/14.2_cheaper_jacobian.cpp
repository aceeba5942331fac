// Exercise 14.2: The Jacobian, the cheaper way (chapter 14, docs/book/14_forward_mode.md)
//
// f maps a vector x of n numbers to a vector of m numbers. Its Jacobian J
// (m, n) can be built two ways:
//   * forward mode: jvp(f, {x}, {t}) runs f once and returns J t, the
//     change of the output along a direction t of x's shape;
//   * reverse mode: vjp(f, {x}) runs f once and returns a pullback, which
//     maps a u of the output's shape to uᵀ J (pullback(u)[0]), as often as
//     you call it, without running f again.
// Write jacobian(f, x, m) that takes the cheaper way for the n and m it is
// given (when n == m, take forward mode), with ember::jvp and ember::vjp and
// stack(pieces, dim) to put the pieces together. x is a float64 vector.
// The checker counts how often your code calls f.
//
// Think about:
//   * which t makes J t one column of J? which u makes uᵀ J one row?
//   * how many runs of f does each way take, for n inputs and m outputs?
//   * do columns stand side by side or one under another in J, and rows?
//
// Compare with, after you try: jacfwd and jacrev in autograd/functional.cpp.
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
  TODO("which takes fewer runs of f here, one jvp per input element or one vjp and a pullback per output "
       "element, and is each piece a column or a row?");
}

}  // namespace ex14_2
