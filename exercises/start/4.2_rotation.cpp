// Exercise 4.2: Position p + offset as a rotation of position p (chapter 4, docs/book/04_embeddings.md)
//
// In the sinusoidal table (exercise 4.1), features 2k and 2k+1 of position p
// are (sin(p w), cos(p w)) with w = 1 / 10000^(2k / D). Write rotation(offset,
// k, D): the 2x2 float64 matrix M with
//   (table[p + offset, 2k], table[p + offset, 2k+1]) = M (table[p, 2k], table[p, 2k+1])
// for EVERY position p: it depends on offset, k and D only. The addition
// formulas sin(a + b) = sin a cos b + cos a sin b and
// cos(a + b) = cos a cos b - sin a sin b give its four entries.
//
// Return tensor({m00, m01, m10, m11}, {2, 2}, kFloat64).
//
// Check it:  bash scripts/exercise.sh 4.2
#include "exercises/exercise.h"

using namespace ember;

namespace ex4_2 {

Tensor rotation(int64_t offset, int64_t k, int64_t D) {
  (void)offset;
  (void)k;
  (void)D;
  TODO("b = offset * w; M from the addition formulas, with (sin, cos) as the vector");
}

}  // namespace ex4_2
