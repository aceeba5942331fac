// Exercise 1.2: The broadcasting rule (chapter 1, docs/book/01_tensors.md)
//
// Write broadcast_shape(a, b): the shape of a + b when a has shape a and b
// has shape b. Align the shapes from the right; at each dim the two sizes
// must be equal, or one of them must be 1 (or missing), and the result takes
// the other. (2, 1) and (1, 3) give (2, 3); (4, 1, 5) and (3, 1) give
// (4, 3, 5); (3) and (0) do not broadcast, but (1) and (0) give (0).
//
// When they do not broadcast, throw an ember::Error that names both shapes,
// with EMBER_CHECK or EMBER_FAIL (base/error.h) and shape_str (tensor/shape.h).
//
// Check it:  bash scripts/exercise.sh 1.2
#include "exercises/exercise.h"

using namespace ember;

namespace ex1_2 {

Shape broadcast_shape(const Shape& a, const Shape& b) {
  (void)a;
  (void)b;
  TODO("walk both shapes from the last dim to the first and build the result");
}

}  // namespace ex1_2
