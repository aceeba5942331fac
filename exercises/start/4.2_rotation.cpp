// Exercise 4.2: Position p + offset as a rotation of position p (chapter 4, docs/book/04_embeddings.md)
//
// In the sinusoidal table (exercise 4.1), features 2k and 2k+1 of position p
// are (sin(p w), cos(p w)) with w = 1 / 10000^(2k / D). Write rotation(offset,
// k, D): the 2x2 float64 matrix M with
//   (table[p + offset, 2k], table[p + offset, 2k+1]) = M (table[p, 2k], table[p, 2k+1])
// for EVERY position p: it depends on offset, k and D only. Think it
// through: by how much does pair k's angle grow over offset positions? With
// a the angle at p and b that growth, the addition formulas
//   sin(a + b) = sin a cos b + cos a sin b
//   cos(a + b) = cos a cos b - sin a sin b
// write the new pair from the old one: which entry of M multiplies which,
// given that the vector is (sin, cos), in that order?
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
  TODO("how far does the angle move in offset positions, and which row of M gives the new sin, which the new cos?");
}

}  // namespace ex4_2
