// Exercise 3.1: Central differences by hand (chapter 3, docs/book/03_checking_gradients.md)
//
// numeric_gradient(f, x, eps) approximates the gradient of a scalar function
// f at x without autograd, one element at a time:
//   grad[j] = (f(x + eps e_j) - f(x - eps e_j)) / (2 eps)
// where e_j is 1 at element j and 0 elsewhere. Return a float64 tensor of
// x's shape. x may be a non-contiguous view: work on a contiguous copy
// (x.contiguous().clone(), or x.clone()) and leave x itself as it was.
// f returns a 0-d float64 tensor; read it with .item<double>().
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
  TODO("copy x, and for every element j: f at x + eps e_j, f at x - eps e_j, their difference over 2 eps");
}

}  // namespace ex3_1
