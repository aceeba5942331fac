// Exercise 4.1: The sinusoidal table by its formula (chapter 4, docs/book/04_embeddings.md)
//
// Write sinusoidal_table(L, D): the (L, D) float64 table of "Attention Is
// All You Need", for positions p = 0..L-1 and features i = 0..D-1:
//   angle(p, i)    = p / 10000^(2 * (i / 2) / D)     (i / 2 rounded down)
//   table[p, 2k]   = sin(angle)
//   table[p, 2k+1] = cos(angle)
// With an odd D the last column is a sin. Fill a tensor from empty({L, D},
// kFloat64) through data_ptr<double>() (row-major: element (p, i) is at
// p * D + i), or build it from ember ops: both are fine.
//
// Check it:  bash scripts/exercise.sh 4.1
#include "exercises/exercise.h"

using namespace ember;

namespace ex4_1 {

Tensor sinusoidal_table(int64_t L, int64_t D) {
  (void)L;
  (void)D;
  TODO("fill an (L, D) float64 tensor with the formula");
}

}  // namespace ex4_1
