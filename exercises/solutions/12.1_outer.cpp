// Exercise 12.1: An op that refuses bad input, a reference solution.
#include "exercises/exercise.h"

using namespace ember;

namespace ex12_1 {

// a (n), b (m) -> (n, m)
Tensor outer(const Tensor& a, const Tensor& b) {
  OpScope scope("outer", a, b);  // also refuses an undefined tensor, naming the argument
  EMBER_CHECK(a.dim() == 1, "outer", "a must be 1-D, got shape " << shape_str(a.shape()));
  EMBER_CHECK(b.dim() == 1, "outer", "b must be 1-D, got shape " << shape_str(b.shape()));
  EMBER_CHECK(a.dtype() == b.dtype(), "outer",
              "a and b must have one dtype, got " << dtype_name(a.dtype()) << " and " << dtype_name(b.dtype()));
  return unsqueeze(a, 1) * unsqueeze(b, 0);
}

}  // namespace ex12_1
