// Exercise 3.2: Make gradcheck fail on purpose, a reference solution.
//
// A transposed view reads its storage out of row-major order: the forward's
// raw loop pairs element j with the wrong number, the Jacobian gradcheck
// measures is no longer the diagonal the rule claims.
#include "exercises/exercise.h"

using namespace ember;

namespace ex3_2 {

Tensor input_that_exposes_the_bug() {
  Generator gen(0);
  return randn({4, 3}, gen, kFloat64).t().requires_grad_();  // (3, 4), strides (1, 3)
}

}  // namespace ex3_2
