// Checks exercise 3.1: numeric_gradient against backward(), on contiguous and
// transposed inputs, and that it leaves its input alone. A wrong gradient is
// compared with the usual mistakes (a one-sided difference, over eps instead
// of 2 eps, the sign flipped, the elements in storage order) to name the one
// it is.
#include <functional>

#include "exercises/checks/check.h"

namespace ex3_1 {
ember::Tensor numeric_gradient(const std::function<ember::Tensor(const ember::Tensor&)>& f, const ember::Tensor& x,
                               double eps);
}

namespace {

using namespace ember;
using Function = std::function<Tensor(const Tensor&)>;

// The gradient autograd computes.
Tensor analytic(const Function& f, const Tensor& x) {
  Tensor leaf = x.detach().clone().requires_grad_();
  f(leaf).backward();
  return leaf.grad();
}

Tensor f1(const Tensor& x) { return sum(sin(x) * x); }
Tensor f2(const Tensor& x) { return sum(exp(x * 0.5)) * sum(x * x); }  // every element depends on every other

// (f(x + up e_j) - f(x - down e_j)) / (up + down) for every j: the central
// difference (eps, eps) and the one-sided ones (eps, 0) and (0, eps); without
// `restore`, element j stays at x_j - down for the elements after it.
Tensor difference(const Function& f, const Tensor& x, double up, double down, bool restore = true) {
  NoGradGuard no_grad;
  Tensor point = x.contiguous().clone(), grad = zeros(x.shape(), kFloat64);
  double* p = point.data_ptr<double>();
  for (int64_t j = 0; j < point.numel(); ++j) {
    const double orig = p[j];
    p[j] = orig + up;
    const double hi = f(point).item<double>();
    p[j] = orig - down;
    const double lo = f(point).item<double>();
    if (restore) p[j] = orig;
    grad.data_ptr<double>()[j] = (hi - lo) / (up + down);
  }
  return grad;
}

// The hint for a wrong numeric gradient of f at x, from the way it is wrong
// (x as the learner's code got it: `values` holds its numbers from before).
std::string hint_for(const Tensor& got, const Function& f, const Tensor& x, const Tensor& values, double eps) {
  const Tensor central = difference(f, values, eps, eps);
  const double tol = 1e-9;
  if (got.defined() && got.shape() != x.shape())
    return "the gradient has x's shape: one number per element of x, where that element stands";
  if (check::matches(got, difference(f, values, eps, 0.0), tol) || check::matches(got, difference(f, values, 0.0, eps), tol))
    return "that is a one-sided difference: its error shrinks only like eps, the central one's like eps^2, "
           "because the central one's first-order errors on both sides cancel";
  if (check::matches(got, difference(f, values, eps, eps, false), tol))
    return "each element was left at x_j - eps after its turn, so the elements after it were measured at a point "
           "that had moved: put every element back before the next";
  if (check::matches(got, central * 2.0, tol)) return "twice the gradient: x + eps and x - eps are 2 eps apart";
  if (check::matches(got, -central, tol)) return "the sign is flipped: the difference is f(x + eps e_j) minus f(x - eps e_j)";
  if (check::matches(got, central * (eps * eps), tol))
    return "the difference was multiplied by eps where it should be divided by 2 eps (mind the order of * and /)";
  if (x.dim() == 2 && !x.is_contiguous() &&
      check::matches(got, reshape(transpose(central, 0, 1).contiguous(), x.shape()), tol))
    return "the gradient is in x's storage order: on a transposed x the j-th number in memory is not element j "
           "in row-major order; perturb element j of a contiguous copy, so that j means the same in both";
  return "grad[j] = (f(x + eps e_j) - f(x - eps e_j)) / (2 eps), e_j moving element j only";
}

void expect_gradient(const Function& f, const Tensor& x, double eps, const Tensor& want, const std::string& what,
                     double tol) {
  const Tensor values = x.clone();  // x's numbers, should the learner's code move them
  const Tensor got = ex3_1::numeric_gradient(f, x, eps);
  if (check::matches(got, want, tol)) return;
  check::expect(got.defined() && got.shape() == x.shape(),
                what + " has shape " + (got.defined() ? check::show(got.shape()) : std::string("(undefined)")) +
                    ", but x has shape " + check::show(x.shape()),
                hint_for(got, f, x, values, eps));
  check::fail(what + " is " + check::show(got) + ", but should be " + check::show(want) + " (largest difference " +
                  check::num(check::max_diff(got, want, what)) + ")",
              hint_for(got, f, x, values, eps));
}

}  // namespace

check::Exercise check::exercise() {
  return {"3.1", "Central differences by hand", "docs/book/03_checking_gradients.md", {
    {"the gradient of sum(sin(x) x) at one point", [] {
       expect_gradient(f1, tensor({0.5}, kFloat64), 1e-6, tensor({std::sin(0.5) + 0.5 * std::cos(0.5)}, kFloat64),
                       "numeric_gradient at x = 0.5", 1e-7);
     }},
    {"the same shape as x, and the same numbers as backward(), on a (2, 3) input", [] {
       Generator gen(1);
       Tensor x = randn({2, 3}, gen, kFloat64);
       for (auto f : {f1, f2}) expect_gradient(f, x, 1e-6, analytic(f, x), "numeric_gradient", 1e-6);
     }},
    {"a transposed (non-contiguous) input", [] {
       Generator gen(2);
       Tensor x = randn({4, 3}, gen, kFloat64).t();  // (3, 4), strides (1, 3)
       expect_gradient(f2, x, 1e-6, analytic(f2, x), "numeric_gradient of a transposed x", 1e-6);
     }},
    {"x is left as it was", [] {
       const Tensor want = tensor({1.0, 2.0, 3.0}, kFloat64);
       Tensor x = want.clone();
       (void)ex3_1::numeric_gradient(f1, x, 1e-3);
       expect_close(x, want, "x after numeric_gradient", 0.0,
                    check::matches(x, want - 1e-3, 1e-12)
                        ? "every element was left at x_j - eps: the last move of each element was never undone"
                        : "the caller's x must come back unchanged: perturb a copy, or put every element back");
     }},
  }};
}
