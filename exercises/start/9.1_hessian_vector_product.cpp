// Exercise 9.1: A Hessian-vector product (chapter 9, docs/book/09_higher_order_gradients.md)
//
// For a scalar function f of x, the Hessian H (all second derivatives) times
// a vector v is the gradient of <grad f(x), v>:
//   H v = d/dx ( sum_i (df/dx_i) v_i )
// Write hvp(f, x, v) with ember::grad (autograd/engine.h) twice: the first
// with {.create_graph = true}, so that the gradient is itself a recorded
// function of x, then the gradient of its dot product with v. No Hessian is
// ever built. x is a float64 leaf that requires grad; return a tensor of x's shape.
//
// Check it:  bash scripts/exercise.sh 9.1
#include <functional>

#include "exercises/exercise.h"

using namespace ember;

namespace ex9_1 {

Tensor hvp(const std::function<Tensor(const Tensor&)>& f, const Tensor& x, const Tensor& v) {
  (void)f;
  (void)x;
  (void)v;
  TODO("what makes the first gradient a function of x you can differentiate again, "
       "and which scalar has H v as its gradient?");
}

}  // namespace ex9_1
