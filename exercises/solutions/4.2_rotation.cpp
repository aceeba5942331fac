// Exercise 4.2: Position p + offset as a rotation, a reference solution.
//   sin(a + b) =  cos b · sin a + sin b · cos a
//   cos(a + b) = -sin b · sin a + cos b · cos a
#include <cmath>

#include "exercises/exercise.h"

using namespace ember;

namespace ex4_2 {

Tensor rotation(int64_t offset, int64_t k, int64_t D) {
  const double w = 1.0 / std::pow(10000.0, static_cast<double>(2 * k) / static_cast<double>(D));
  const double b = static_cast<double>(offset) * w;
  return tensor({std::cos(b), std::sin(b), -std::sin(b), std::cos(b)}, {2, 2}, kFloat64);
}

}  // namespace ex4_2
