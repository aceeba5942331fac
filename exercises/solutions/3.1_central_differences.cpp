// Exercise 3.1: Central differences by hand, a reference solution.
#include <functional>

#include "exercises/exercise.h"

using namespace ember;

namespace ex3_1 {

Tensor numeric_gradient(const std::function<Tensor(const Tensor&)>& f, const Tensor& x, double eps) {
  NoGradGuard no_grad;                        // nothing here is differentiated
  Tensor point = x.to(kFloat64).contiguous().clone();  // ours to perturb, row-major
  Tensor grad = zeros(x.shape(), kFloat64);
  double* p = point.data_ptr<double>();
  double* g = grad.data_ptr<double>();
  for (int64_t j = 0; j < point.numel(); ++j) {
    const double orig = p[j];
    p[j] = orig + eps;
    const double up = f(point).item<double>();
    p[j] = orig - eps;
    const double down = f(point).item<double>();
    p[j] = orig;
    g[j] = (up - down) / (2 * eps);
  }
  return grad;
}

}  // namespace ex3_1
