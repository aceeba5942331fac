// Checks exercise 14.1: each operation's value and tangent (a wrong tangent is
// compared with the usual mistakes': the tangents multiplied or added, a
// term of the product rule missing, a division or a sign missing in the
// quotient rule, the chain rule's factor a' missing), then whole functions
// made of them against their closed-form derivatives and against ember's
// forward mode (ember::jvp) on the same function.
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

// Typical wrong tangents, each with what the mistake is.
using Wrong = std::vector<std::pair<double, std::string>>;

void expect_dual(Dual got, double value, double tangent, const std::string& what, const Wrong& wrong) {
  check::expect_near(got.value, value, what + ": the value", 1e-14,
                     "the value is the ordinary result, computed from the values alone");
  if (std::abs(got.tangent - tangent) <= 1e-14) return;
  std::string hint = "the tangent is the derivative of the value along the inputs' tangents, by the chain rule";
  for (const auto& [t, h] : wrong)
    if (std::abs(got.tangent - t) <= 1e-14) hint = h;
  check::fail(what + ": the tangent is " + check::num(got.tangent) + ", but should be " + check::num(tangent), hint);
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
       expect_dual(Dual{1.5, 2.0} + Dual{-0.5, 3.0}, 1.0, 5.0, "(1.5, 2) + (-0.5, 3)",
                   {{6.0, "the tangents were multiplied: a sum changes by the sum of its terms' changes"},
                    {2.0, "only a's tangent is there: b changes too"},
                    {3.0, "only b's tangent is there: a changes too"}});
     }},
    {"a * b follows the product rule", [] {
       expect_dual(Dual{3.0, 1.0} * Dual{2.0, 0.25}, 6.0, 1.0 * 2.0 + 3.0 * 0.25, "(3, 1) * (2, 0.25)",
                   {{0.25, "the tangent of a product is not the product of the tangents: each factor's change is "
                           "scaled by the other factor"},
                    {1.25, "the tangents were added, as for a sum: in a product each factor's change is scaled by "
                           "the other factor"},
                    {2.0, "only a's change is there (a' b): b's change, scaled by a, adds to it"},
                    {0.75, "only b's change is there (a b'): a's change, scaled by b, adds to it"},
                    {3.5, "each factor's change was scaled by itself: it is scaled by the other factor"}});
     }},
    {"a / b follows the quotient rule", [] {
       expect_dual(Dual{3.0, 1.0} / Dual{2.0, 0.5}, 1.5, (1.0 - 1.5 * 0.5) / 2.0, "(3, 1) / (2, 0.5)",
                   {{2.0, "the tangent of a quotient is not the quotient of the tangents"},
                    {0.25, "one division by b is missing: from a = q b, the product rule gives a' = q' b + q b', "
                           "and q' is what is left divided by b"},
                    {0.875, "b's change has the wrong sign: a growing b makes q smaller"},
                    {0.5, "only a's change is there: b's change moves q too"}});
     }},
    {"sin and exp carry the tangent through the chain rule", [] {
       expect_dual(ex14_1::sin(Dual{0.5, 2.0}), std::sin(0.5), std::cos(0.5) * 2.0, "sin((0.5, 2))",
                   {{std::cos(0.5), "cos(a) is sin's derivative at a, per unit of a: the chain rule multiplies it "
                                    "by how fast a itself changes, its tangent"},
                    {std::sin(0.5) * 2.0, "the derivative of sin is cos, not sin"},
                    {-std::cos(0.5) * 2.0, "the derivative of sin is cos, with no minus sign (that is cos's own)"}});
       expect_dual(ex14_1::exp(Dual{-1.0, 3.0}), std::exp(-1.0), std::exp(-1.0) * 3.0, "exp((-1, 3))",
                   {{std::exp(-1.0), "exp(a) is exp's derivative at a, per unit of a: the chain rule multiplies it "
                                     "by how fast a itself changes, its tangent"},
                    {std::exp(3.0), "exp of the tangent is no rule: the derivative at the value, times the tangent"}});
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
