// Exercise 14.1: Dual numbers by hand (chapter 14, docs/book/14_forward_mode.md)
//
// A dual number carries a value and a tangent: the derivative of that value
// along one direction. Every operation computes both, the value as usual and
// the tangent by the chain rule, so that evaluating f on Dual{x, 1} gives
// f(x) and f'(x) in one pass — forward mode, on one number. The rules of
// calculus, with a' for a's tangent:
//   (a + b)' = a' + b'      (a * b)' = a' b + a b'
//   sin(a)'  = cos(a) a'    exp(a)'  = exp(a) a'
// and (a / b)' is for you to work out: with q = a / b, a = q b, so the
// product rule gives a' in terms of q' — solve for q'.
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
  TODO("the value of a sum, and its tangent");
}

Dual operator*(Dual a, Dual b) {
  (void)a;
  (void)b;
  TODO("the value of a product, and its tangent: how much does each factor's change contribute?");
}

Dual operator/(Dual a, Dual b) {
  (void)a;
  (void)b;
  TODO("the value of a quotient, and the tangent you solved for");
}

Dual sin(Dual a) {
  (void)a;
  TODO("sin's value, and its tangent: the derivative of sin at a's value, times what?");
}

Dual exp(Dual a) {
  (void)a;
  TODO("exp's value, and its tangent by the chain rule");
}

}  // namespace ex14_1
