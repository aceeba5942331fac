// Checks exercise 14.1: each operation's value and tangent, then whole
// functions made of them against their closed-form derivatives and against
// ember's forward mode (ember::jvp) on the same function.
#include <cmath>
#include <string>

#include "exercises/checks/check.h"

namespace ex14_1 {
struct Dual {
  double value;
  double tangent;
};
Dual operator+(Dual a, Dual b);
Dual operator*(Dual a, Dual b);
Dual operator/(Dual a, Dual b);
Dual sin(Dual a);
Dual exp(Dual a);
}  // namespace ex14_1

namespace {

using namespace ember;
using ex14_1::Dual;

void expect_dual(Dual got, double value, double tangent, const std::string& what, const std::string& hint = "") {
  check::expect_near(got.value, value, what + ": the value", 1e-14, hint);
  check::expect_near(got.tangent, tangent, what + ": the tangent", 1e-14, hint);
}

// ember's forward mode on the same function of one number
double ember_derivative(const std::function<Tensor(const Tensor&)>& f, double x) {
  TensorFn g = [&](const std::vector<Tensor>& in) { return f(in[0]); };
  return jvp(g, {scalar_tensor(x, kFloat64)}, {scalar_tensor(1.0, kFloat64)}).tangent.item<double>();
}

}  // namespace

check::Exercise check::exercise() {
  return {"14.1", "Dual numbers by hand", "docs/book/14_forward_mode.md", {
    {"a + b adds the values and the tangents", [] {
       expect_dual(Dual{1.5, 2.0} + Dual{-0.5, 3.0}, 1.0, 5.0, "(1.5, 2) + (-0.5, 3)");
     }},
    {"a * b follows the product rule", [] {
       expect_dual(Dual{3.0, 1.0} * Dual{2.0, 0.5}, 6.0, 1.0 * 2.0 + 3.0 * 0.5, "(3, 1) * (2, 0.5)",
                   "the tangent of a product is a' b + a b'");
     }},
    {"a / b follows the quotient rule", [] {
       expect_dual(Dual{3.0, 1.0} / Dual{2.0, 0.5}, 1.5, (1.0 - 1.5 * 0.5) / 2.0, "(3, 1) / (2, 0.5)");
     }},
    {"sin and exp carry the tangent through the chain rule", [] {
       expect_dual(ex14_1::sin(Dual{0.5, 2.0}), std::sin(0.5), std::cos(0.5) * 2.0, "sin((0.5, 2))",
                   "sin(a)' = cos(a) a': do not forget the factor a.tangent");
       expect_dual(ex14_1::exp(Dual{-1.0, 3.0}), std::exp(-1.0), std::exp(-1.0) * 3.0, "exp((-1, 3))");
     }},
    {"f(x) = sin(x) x: f'(x) = cos(x) x + sin(x), and ember's jvp says the same", [] {
       for (double x : {-2.0, 0.5, 3.0}) {
         Dual d = ex14_1::sin(Dual{x, 1.0}) * Dual{x, 1.0};
         const std::string at = "at x = " + std::to_string(x);
         check::expect_near(d.tangent, std::cos(x) * x + std::sin(x), "f'(x) " + at, 1e-14);
         check::expect_near(d.tangent, ember_derivative([](const Tensor& t) { return sin(t) * t; }, x),
                            "against ember's jvp " + at, 1e-14);
       }
     }},
    {"g(x) = exp(x x) / (1 + x): a longer chain", [] {
       for (double x : {0.3, 1.2}) {
         Dual X{x, 1.0};
         Dual d = ex14_1::exp(X * X) / (Dual{1.0, 0.0} + X);
         const double e = std::exp(x * x);
         const double closed = (2 * x * e * (1 + x) - e) / ((1 + x) * (1 + x));
         check::expect_near(d.tangent, closed, "g'(" + std::to_string(x) + ")", 1e-13);
         check::expect_near(d.tangent, ember_derivative([](const Tensor& t) { return exp(t * t) / (t + 1.0); }, x),
                            "against ember's jvp", 1e-13);
       }
     }},
  }};
}
