// Exercise 8.1: Predict the saved-for-backward bytes of a block, a reference solution.
//
//   ln1     x, and a mean and 1/std per row                 BTD + 2BT
//   w_q/k/v ln1's output (once for the three)               BTD
//   q kᵀ    q and k                                         2BTD
//   softmax the weights (the causal mask saves nothing)     hBT²
//   · v     v (the weights already counted)                 BTD
//   w_o     the merged heads                                BTD
//   ln2     its input, mean and 1/std                       BTD + 2BT
//   fc1     ln2's output                                    BTD
//   gelu    fc1's output (4D wide)                          4BTD
//   fc2     gelu's output                                   4BTD
//   total                                  16BTD + 4BT + hBT² floats
#include "exercises/exercise.h"

using namespace ember;

namespace ex8_1 {

int64_t saved_bytes(int64_t B, int64_t T, int64_t D, int64_t h) {
  return 4 * (16 * B * T * D + 4 * B * T + h * B * T * T);
}

}  // namespace ex8_1
