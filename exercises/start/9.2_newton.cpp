// Exercise 9.2: Newton's method with second derivatives (chapter 9, docs/book/09_higher_order_gradients.md)
//
// To find the minimum of a smooth function f of one number, Newton's method
// repeats x <- x - f'(x) / f''(x). Write newton_minimum(f, x0, steps) with
// ember's autograd, not by hand: f is a function you do not know, given as
// code. Return x after `steps` updates.
//
// Think about:
//   * f'(x) and f''(x) are taken at the current x: what must the tensor that
//     f gets be, at each step, for ember::grad to differentiate at it?
//   * f'' is the derivative of f': what must the first grad do so that its
//     result can be differentiated once more? (chapter 9)
//   * which way does the update move x, and by how much?
//
// Check it:  bash scripts/exercise.sh 9.2
#include <functional>

#include "exercises/exercise.h"

using namespace ember;

namespace ex9_2 {

double newton_minimum(const std::function<Tensor(const Tensor&)>& f, double x0, int steps) {
  (void)f;
  (void)x0;
  (void)steps;
  TODO("steps times: f'(x) and f''(x) from ember's autograd at the current x, then the Newton update");
}

}  // namespace ex9_2
