// Exercise 4.1: The sinusoidal table by its formula, a reference solution.
#include <cmath>

#include "exercises/exercise.h"

using namespace ember;

namespace ex4_1 {

Tensor sinusoidal_table(int64_t L, int64_t D) {
  Tensor t = empty({L, D}, kFloat64);
  double* p = t.data_ptr<double>();
  for (int64_t pos = 0; pos < L; ++pos)
    for (int64_t i = 0; i < D; ++i) {
      const double angle = static_cast<double>(pos) / std::pow(10000.0, static_cast<double>(2 * (i / 2)) / static_cast<double>(D));
      p[pos * D + i] = i % 2 == 0 ? std::sin(angle) : std::cos(angle);
    }
  return t;
}

}  // namespace ex4_1
