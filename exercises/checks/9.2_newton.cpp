// Checks exercise 9.2: Newton's method finds the minimum of three functions
// the learner's code does not know, from their autograd derivatives.
#include <cmath>
#include <functional>

#include "exercises/checks/check.h"

namespace ex9_2 {
double newton_minimum(const std::function<ember::Tensor(const ember::Tensor&)>& f, double x0, int steps);
}

namespace {
using namespace ember;
}  // namespace

check::Exercise check::exercise() {
  return {"9.2", "Newton's method with second derivatives", "docs/book/09_higher_order_gradients.md", {
    {"a parabola in one step: (x - 3)^2 from 0", [] {
       auto f = [](const Tensor& x) { return pow(x - 3.0, 2.0); };
       expect_near(ex9_2::newton_minimum(f, 0.0, 1), 3.0, "x after one step", 1e-12,
                   "for a parabola f'/f'' is exactly the distance to the minimum");
     }},
    {"exp(x) - 2x: the minimum is ln 2", [] {
       auto f = [](const Tensor& x) { return exp(x) - x * 2.0; };
       expect_near(ex9_2::newton_minimum(f, 0.0, 8), std::log(2.0), "x after 8 steps", 1e-12);
     }},
    {"cosh(x - 0.7) from 2: the minimum is 0.7", [] {
       auto f = [](const Tensor& x) { return (exp(x - 0.7) + exp(0.7 - x)) * 0.5; };
       expect_near(ex9_2::newton_minimum(f, 2.0, 10), 0.7, "x after 10 steps", 1e-12);
     }},
  }};
}
