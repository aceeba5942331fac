// Exercise 4.1: The sinusoidal table by its formula (chapter 4, docs/book/04_embeddings.md)
//
// Write sinusoidal_table(L, D): the (L, D) float64 table of "Attention Is
// All You Need", for positions p = 0..L-1 and features i = 0..D-1:
//   angle(p, i)    = p / 10000^(2 * (i / 2) / D)     (i / 2 rounded down)
//   table[p, 2k]   = sin(angle)
//   table[p, 2k+1] = cos(angle)
// Think it through: which two features share one angle, and which of them
// is the sin? With an odd D, what is the last column? The exponent 2 (i / 2)
// / D is a fraction between 0 and 1: in which type must it be computed?
//
// Fill a tensor from empty({L, D}, kFloat64) through data_ptr<double>()
// (row-major: element (p, i) is at p * D + i), or build it from ember ops:
// both are fine.
//
// Compare with, after you try: nn::SinusoidalPositionalEmbedding (nn/embedding.h).
//
// Check it:  bash scripts/exercise.sh 4.1
#include "exercises/exercise.h"

using namespace ember;

namespace ex4_1 {

Tensor sinusoidal_table(int64_t L, int64_t D) {
  (void)L;
  (void)D;
  TODO("which angle does element (p, i) take, and is it its sin or its cos?");
}

}  // namespace ex4_1
