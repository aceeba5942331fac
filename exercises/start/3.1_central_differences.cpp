// Exercise 3.1: Central differences by hand (chapter 3, docs/book/03_checking_gradients.md)
//
// numeric_gradient(f, x, eps) approximates the gradient of a scalar function
// f at x without autograd, one element at a time:
//   grad[j] = (f(x + eps e_j) - f(x - eps e_j)) / (2 eps)
// where e_j is 1 at element j and 0 elsewhere. Return a float64 tensor of
// x's shape. f returns a 0-d float64 tensor; .item<double>() reads it.
//
// Think it through:
//   * why both x + eps e_j and x - eps e_j, and not x itself and x + eps e_j?
//     (chapter 3: how does the error of each shrink with eps?)
//   * x may be a non-contiguous view (a transpose): when you move "element
//     j" through a pointer, is it the element j of the result, in row-major
//     order? On which tensor are the two the same?
//   * the caller's x must be as it was afterwards: what do you perturb?
//
// Check it:  bash scripts/exercise.sh 3.1
#include <functional>

#include "exercises/exercise.h"

using namespace ember;

namespace ex3_1 {

Tensor numeric_gradient(const std::function<Tensor(const Tensor&)>& f, const Tensor& x, double eps) {
  (void)f;
  (void)x;
  (void)eps;
  TODO("what do you perturb, and for each element j: how much does f change when only element j moves by eps "
       "either way?");
}

}  // namespace ex3_1
