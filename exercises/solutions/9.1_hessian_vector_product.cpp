// Exercise 9.1: A Hessian-vector product, a reference solution.
#include <functional>

#include "exercises/exercise.h"

using namespace ember;

namespace ex9_1 {

Tensor hvp(const std::function<Tensor(const Tensor&)>& f, const Tensor& x, const Tensor& v) {
  Tensor g = grad({f(x)}, {x}, {}, {.create_graph = true})[0];  // recorded: a function of x
  return grad({sum(g * v)}, {x})[0];
}

}  // namespace ex9_1
