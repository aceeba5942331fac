// Exercise 12.1: An op that refuses bad input (chapter 12, docs/book/12_bad_input_and_faults.md)
//
// Write outer(a, b), the outer product of two vectors: (n) and (m) -> (n, m),
// out[i, j] = a[i] * b[j], differentiable (compose ember ops: unsqueeze and
// a broadcasting multiply need no rule of your own).
//
// Then make it refuse what it cannot do, the way every ember op does
// (base/error.h): before computing anything, an ember::Error whose message
// starts with the op's name and names the offending value and the shapes:
//   * a or b not 1-D ("outer: a must be 1-D, got shape (2, 3)");
//   * a and b of different dtypes ("... float32 and float64").
// EMBER_CHECK(condition, "outer", "message " << value) builds it;
// shape_str and dtype_name (tensor/shape.h, tensor/dtype.h) write the values.
//
// Check it:  bash scripts/exercise.sh 12.1
#include "exercises/exercise.h"

using namespace ember;

namespace ex12_1 {

Tensor outer(const Tensor& a, const Tensor& b) {
  (void)a;
  (void)b;
  TODO("the checks, then unsqueeze(a, 1) * unsqueeze(b, 0)");
}

}  // namespace ex12_1
