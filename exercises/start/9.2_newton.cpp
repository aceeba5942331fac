// Exercise 9.2: Newton's method with second derivatives (chapter 9, docs/book/09_higher_order_gradients.md)
//
// To find the minimum of a smooth function f of one number, Newton's method
// repeats x <- x - f'(x) / f''(x). Write newton_minimum(f, x0, steps) with
// ember's autograd, not by hand: f is a function you do not know, given as
// code. At each step make x a 0-d float64 leaf that requires grad, take
// f'(x) with grad(..., {.create_graph = true}) and f''(x) as the gradient of
// that (chapter 9), and update the number. Return the last x.
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
  TODO("steps times: x <- x - f'(x) / f''(x), both derivatives from ember::grad");
}

}  // namespace ex9_2
