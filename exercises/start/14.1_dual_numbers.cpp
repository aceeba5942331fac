// Exercise 14.1: Dual numbers by hand (chapter 14, docs/book/14_forward_mode.md)
//
// A dual number carries a value and a tangent: the derivative of that value
// along one direction. Every operation computes both, the value as usual and
// the tangent by the chain rule, so that evaluating f on Dual{x, 1} gives
// f(x) and f'(x) in one pass — forward mode, on one number:
//   (a + b)' = a' + b'      (a * b)' = a' b + a b'      sin(a)' = cos(a) a'
//   exp(a)'  = exp(a) a'    (a / b)' = (a' - (a / b) b') / b
// Write the five operations below (plain doubles: <cmath>'s std::sin etc.).
// The checker differentiates functions made of them and compares with
// their closed forms and with ember's own forward mode (ember::jvp).
//
// Check it:  bash scripts/exercise.sh 14.1
#include <cmath>

#include "exercises/exercise.h"

namespace ex14_1 {

struct Dual {
  double value;
  double tangent;
};

Dual operator+(Dual a, Dual b) {
  (void)a;
  (void)b;
  TODO("the values add, and so do the tangents");
}

Dual operator*(Dual a, Dual b) {
  (void)a;
  (void)b;
  TODO("the product rule: tangent a.tangent * b.value + a.value * b.tangent");
}

Dual operator/(Dual a, Dual b) {
  (void)a;
  (void)b;
  TODO("q = a.value / b.value; tangent (a.tangent - q * b.tangent) / b.value");
}

Dual sin(Dual a) {
  (void)a;
  TODO("value std::sin(a.value), tangent std::cos(a.value) * a.tangent");
}

Dual exp(Dual a) {
  (void)a;
  TODO("value std::exp(a.value), tangent the same exp times a.tangent");
}

}  // namespace ex14_1
