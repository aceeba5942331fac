// Exercise 14.1: Dual numbers by hand, a reference solution.
#include <cmath>

#include "exercises/exercise.h"

namespace ex14_1 {

struct Dual {
  double value;
  double tangent;
};

Dual operator+(Dual a, Dual b) { return {a.value + b.value, a.tangent + b.tangent}; }
Dual operator*(Dual a, Dual b) { return {a.value * b.value, a.tangent * b.value + a.value * b.tangent}; }
Dual operator/(Dual a, Dual b) {
  const double q = a.value / b.value;
  return {q, (a.tangent - q * b.tangent) / b.value};
}
Dual sin(Dual a) { return {std::sin(a.value), std::cos(a.value) * a.tangent}; }
Dual exp(Dual a) {
  const double e = std::exp(a.value);
  return {e, e * a.tangent};
}

}  // namespace ex14_1
