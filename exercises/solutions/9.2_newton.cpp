// Exercise 9.2: Newton's method with second derivatives, a reference solution.
#include <functional>

#include "exercises/exercise.h"

using namespace ember;

namespace ex9_2 {

double newton_minimum(const std::function<Tensor(const Tensor&)>& f, double x0, int steps) {
  double x = x0;
  for (int s = 0; s < steps; ++s) {
    Tensor t = scalar_tensor(x, kFloat64).requires_grad_();
    Tensor d1 = grad({f(t)}, {t}, {}, {.create_graph = true})[0];  // f'(x), recorded
    Tensor d2 = grad({d1}, {t})[0];                                  // f''(x)
    x -= d1.item<double>() / d2.item<double>();
  }
  return x;
}

}  // namespace ex9_2
