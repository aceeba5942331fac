// Checks exercise 3.7 (GELU's backward by hand): the gradient against
// ember's gelu (and which mistake a wrong one is), the values at 0 and far
// out, gradcheck on a transposed input.
#include "exercises/checks/check.h"

namespace ex3_7 {
ember::Tensor my_gelu(const ember::Tensor& x);
}

namespace {

using namespace ember;

Tensor grad_of(const std::function<Tensor(const Tensor&)>& f, const Tensor& x0, const Tensor& w) {
  Tensor x = x0.clone().requires_grad_();
  sum(f(x) * w).backward();
  return x.grad();
}

std::string which_mistake(const Tensor& got, const Tensor& x, const Tensor& g) {
  const double pi = 3.14159265358979323846;
  Tensor Phi = (1.0 + erf(x / std::sqrt(2.0))) * 0.5, phi = exp(x * x * -0.5) / std::sqrt(2.0 * pi);
  if (check::matches(got, g * Phi, 1e-9)) return "x appears twice in x Phi(x): the product rule adds x Phi'(x) = x phi(x)";
  if (check::matches(got, g * (Phi + x * exp(x * x * -0.5)), 1e-9))
    return "phi(x) = exp(-x^2/2) / sqrt(2 pi): the normal density has its 1/sqrt(2 pi)";
  if (check::matches(got, g * (Phi + phi), 1e-9)) return "the second term of the product rule is x phi(x), not phi(x)";
  Tensor approx_grad = grad_of([](const Tensor& t) { return gelu(t, GeluApprox::Tanh); }, x, g);
  if (check::matches(got, approx_grad, 1e-9))
    return "that is the derivative of the tanh approximation; this gelu is the exact one, x Phi(x) with erf";
  return "d(x Phi(x))/dx = Phi(x) + x Phi'(x), and Phi' is the normal density phi";
}

}  // namespace

check::Exercise check::exercise() {
  return {"3.7", "GELU's backward, by hand", "docs/book/03_checking_gradients.md", {
    {"dL/dx is ember's gelu's", [] {
       Tensor x = tensor({-3.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0, 4.0}, kFloat64);
       Tensor w = tensor({1.0, -2.0, 0.5, 3.0, 1.0, 1.5, -1.0, 2.0}, kFloat64);
       Tensor want = grad_of([](const Tensor& t) { return gelu(t); }, x, w);
       Tensor got = grad_of(ex3_7::my_gelu, x, w);
       expect(got.defined() && got.shape() == x.shape(), "dL/dx has shape " +
              (got.defined() ? show(got.shape()) : std::string("(undefined)")) + ", x has (8)", "the gradient has x's shape");
       if (check::max_diff(got, want, "dL/dx") > 1e-9)
         fail("dL/dx at x = (-3, -1, -0.5, 0, 0.5, 1, 2, 4) is " + show(got) + ", but should be " + show(want),
              which_mistake(got, x, w));
       note("gelu'(0) = 1/2, and gelu' dips below 0 for x < -0.75: unlike relu, a little gradient flows back there");
     }, {{"returned", "the rule returns one gradient, dL/dx"}}},
    {"gradcheck passes, also on a transposed (non-contiguous) input", [] {
       Generator gen(2);
       for (bool transposed : {false, true}) {
         Tensor x = transposed ? randn({4, 3}, gen, kFloat64).t() : randn({3, 4}, gen, kFloat64);
         x.requires_grad_();
         GradcheckResult r = gradcheck([](const std::vector<Tensor>& in) { return ex3_7::my_gelu(in[0]); }, {x});
         expect(r.ok, "gradcheck failed" + std::string(transposed ? " on a transposed input" : "") + ":\n" + r.report);
       }
     }},
  }};
}
