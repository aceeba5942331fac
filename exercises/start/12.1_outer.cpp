// Exercise 12.1: An op that refuses bad input (chapter 12, docs/book/12_bad_input_and_faults.md)
//
// Write outer(a, b), the outer product of two vectors: (n) and (m) -> (n, m),
// out[i, j] = a[i] * b[j], differentiable: composed of ember ops, so that it
// needs no backward rule of its own.
//
// Then make it refuse what it cannot do, the way every ember op does
// (base/error.h): before computing anything, an ember::Error whose message
// starts with the op's name and names the offending value and the shapes:
//   * a or b not 1-D ("outer: a must be 1-D, got shape (2, 3)");
//   * a and b of different dtypes ("... float32 and float64").
// shape_str and dtype_name (tensor/shape.h, tensor/dtype.h) write the values.
//
// Think about:
//   * a * b multiplies element by element: which shapes must a and b take
//     for broadcasting (chapter 1) to build the whole (n, m) table?
//   * broadcasting accepts more than two vectors: what would it make of a
//     matrix, or of a 0-d tensor, if your own check did not stop it first?
//   * a refusal that comes from inside (from mul) names mul, not outer: why
//     does that matter to whoever reads it?
//
// Check it:  bash scripts/exercise.sh 12.1
#include "exercises/exercise.h"

using namespace ember;

namespace ex12_1 {

Tensor outer(const Tensor& a, const Tensor& b) {
  (void)a;
  (void)b;
  TODO("the refusals first; then the (n, m) table of products, from ember ops");
}

}  // namespace ex12_1
