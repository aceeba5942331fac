// Exercise 7.3: The learning-rate schedule (chapter 7, docs/book/07_training_a_gpt.md)
//
// train_gpt's learning rate has three parts:
//   * the warmup, steps 0 .. warmup-1: it rises in equal steps to max_lr, and
//     step 0 already trains (chapter 7: step s gets max_lr (s + 1) / warmup);
//   * the decay, steps warmup .. total-1: half a period of a cosine, from
//     max_lr at step warmup down towards min_lr, which it reaches at step total;
//   * after that, min_lr for good.
// Write lr_at(step, max_lr, min_lr, warmup, total).
//
// Think about:
//   * how far along the decay is a step, as a number from 0 to 1? where
//     does that count start?
//   * cos runs from 1 to -1 over half a period: what turns it into a factor
//     that runs from 1 to 0?
//   * step, warmup and total are integers: what does dividing two of them give?
// std::cos and std::numbers::pi are in <cmath> and <numbers>.
//
// Compare with, after you try: WarmupCosineLR::lr in train/optim.cpp.
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
  TODO("which of the three parts is step in, and how far along that part is it?");
}

}  // namespace ex7_3
