// Exercise 15.1: What tiled attention and checkpointing keep, a reference solution.
//
// 8.1's terms, with the attention's changed:
//   q kᵀ, · v   q, k, v (as before)                           3BTD
//   the weights, h B T², are gone; tiled_attention keeps
//     its output, which is the memory w_o keeps as its input
//     (the heads merge back into (B, T, D) as a view)         0 more
//     and one log-sum-exp per query row and head              hBT
//   total                                        16BTD + 4BT + hBT floats
// Checkpointed, the block's one node keeps its input x (BTD) and the
// parameters it read, which stay parameters.
#include "exercises/exercise.h"

using namespace ember;

namespace ex15_1 {

int64_t tiled_saved_bytes(int64_t B, int64_t T, int64_t D, int64_t h) {
  return 4 * (16 * B * T * D + 4 * B * T + h * B * T);
}

int64_t checkpointed_saved_bytes(int64_t B, int64_t T, int64_t D, int64_t h) {
  (void)h;
  return 4 * B * T * D;
}

}  // namespace ex15_1
