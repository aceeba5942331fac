// Checks exercise 9.1: H v against the closed-form Hessian of a cubic, and
// against central differences of the gradient for an MLP-like function.
#include <functional>

#include "exercises/checks/check.h"

namespace ex9_1 {
ember::Tensor hvp(const std::function<ember::Tensor(const ember::Tensor&)>& f, const ember::Tensor& x,
                  const ember::Tensor& v);
}

namespace {

using namespace ember;

// f = sum x^3 + x0 x1: H = diag(6 x) + 1 at (0, 1) and (1, 0).
Tensor cubic(const Tensor& x) { return sum(pow(x, 3.0)) + select(x, 0, 0) * select(x, 0, 1); }

Tensor gradient(const std::function<Tensor(const Tensor&)>& f, const Tensor& at) {
  Tensor x = at.detach().clone().requires_grad_();
  return grad({f(x)}, {x})[0];
}

}  // namespace

check::Exercise check::exercise() {
  return {"9.1", "A Hessian-vector product", "docs/book/09_higher_order_gradients.md", {
    {"the cubic's Hessian times e_0 is its first column", [] {
       Tensor x = tensor({1.0, 2.0, -1.0}, kFloat64).requires_grad_();
       Tensor hv = ex9_1::hvp(cubic, x, tensor({1.0, 0.0, 0.0}, kFloat64));
       expect_close(hv, tensor({6.0, 1.0, 0.0}, kFloat64), "H e_0", 1e-12,
                    "H e_0 is the Hessian's first column, (6 x0, 1, 0) here: the scalar whose gradient is H v is "
                    "the sum of the first gradient times v, element by element");
     },
     {{"does not require grad", "the first gradient has no graph of its own, so it cannot be differentiated: ask "
                                "the first grad for {.create_graph = true}"}}},
    {"H v for a general v", [] {
       Tensor x = tensor({1.0, 2.0, -1.0}, kFloat64).requires_grad_();
       Tensor v = tensor({0.5, -1.0, 2.0}, kFloat64);
       // (6 x0 v0 + v1, v0 + 6 x1 v1, 6 x2 v2)
       expect_close(ex9_1::hvp(cubic, x, v), tensor({2.0, -11.5, -12.0}, kFloat64), "H v", 1e-12);
     }},
    {"against central differences of the gradient, for tanh(W x) summed", [] {
       Generator gen(71);
       Tensor W = randn({4, 3}, gen, kFloat64);
       auto f = [W](const Tensor& x) { return sum(pow(tanh(matmul(W, x)), 2.0)); };
       Tensor x0 = randn({3}, gen, kFloat64), v = randn({3}, gen, kFloat64);
       const double eps = 1e-6;
       Tensor fd = (gradient(f, x0 + v * eps) - gradient(f, x0 - v * eps)) / (2 * eps);
       expect_close(ex9_1::hvp(f, x0.clone().requires_grad_(), v), fd, "H v", 1e-6);
     }},
  }};
}
