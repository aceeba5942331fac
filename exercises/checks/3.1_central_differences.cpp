// Checks exercise 3.1: numeric_gradient against backward(), on contiguous and
// transposed inputs, and that it leaves its input alone.
#include <functional>

#include "exercises/checks/check.h"

namespace ex3_1 {
ember::Tensor numeric_gradient(const std::function<ember::Tensor(const ember::Tensor&)>& f, const ember::Tensor& x,
                               double eps);
}

namespace {

using namespace ember;

// The gradient autograd computes.
Tensor analytic(const std::function<Tensor(const Tensor&)>& f, const Tensor& x) {
  Tensor leaf = x.detach().clone().requires_grad_();
  f(leaf).backward();
  return leaf.grad();
}

Tensor f1(const Tensor& x) { return sum(sin(x) * x); }
Tensor f2(const Tensor& x) { return sum(exp(x * 0.5)) * sum(x * x); }  // every element depends on every other

}  // namespace

check::Exercise check::exercise() {
  return {"3.1", "Central differences by hand", "docs/book/03_checking_gradients.md", {
    {"the gradient of sum(sin(x) x) at one point", [] {
       Tensor x = tensor({0.5}, kFloat64);
       Tensor g = ex3_1::numeric_gradient(f1, x, 1e-6);
       expect_close(g, tensor({std::sin(0.5) + 0.5 * std::cos(0.5)}, kFloat64), "numeric_gradient at x = 0.5", 1e-7,
                    "(f(x + eps) - f(x - eps)) / (2 eps)");
     }},
    {"the same shape as x, and the same numbers as backward(), on a (2, 3) input", [] {
       Generator gen(1);
       Tensor x = randn({2, 3}, gen, kFloat64);
       for (auto f : {f1, f2}) expect_close(ex3_1::numeric_gradient(f, x, 1e-6), analytic(f, x), "numeric_gradient", 1e-6);
     }},
    {"a transposed (non-contiguous) input", [] {
       Generator gen(2);
       Tensor x = randn({4, 3}, gen, kFloat64).t();  // (3, 4), strides (1, 3)
       expect_close(ex3_1::numeric_gradient(f2, x, 1e-6), analytic(f2, x), "numeric_gradient of a transposed x", 1e-6,
                    "perturb element j of a contiguous copy, so that j means the same as in the result");
     }},
    {"x is left as it was", [] {
       Tensor x = tensor({1.0, 2.0, 3.0}, kFloat64);
       (void)ex3_1::numeric_gradient(f1, x, 1e-3);
       expect_close(x, tensor({1.0, 2.0, 3.0}, kFloat64), "x after numeric_gradient", 0.0,
                    "perturb a copy, or put every element back");
     }},
  }};
}
