// Exercise 7.3: The learning-rate schedule (chapter 7, docs/book/07_training_a_gpt.md)
//
// train_gpt's learning rate warms up, then decays along half a cosine:
//   step < warmup:          max_lr * (step + 1) / warmup   (step 0 already trains)
//   warmup <= step < total: min_lr + (max_lr - min_lr) * (1 + cos(pi * progress)) / 2,
//                           progress = (step - warmup) / (total - warmup), from 0 to 1
//   step >= total:          min_lr
// Write lr_at(step, ...). std::numbers::pi is in <numbers>.
//
// Check it:  bash scripts/exercise.sh 7.3
#include <cmath>
#include <numbers>

#include "exercises/exercise.h"

using namespace ember;

namespace ex7_3 {

double lr_at(int64_t step, double max_lr, double min_lr, int64_t warmup, int64_t total) {
  (void)step;
  (void)max_lr;
  (void)min_lr;
  (void)warmup;
  (void)total;
  TODO("the three cases");
}

}  // namespace ex7_3
