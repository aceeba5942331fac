// Exercise 7.3: The learning-rate schedule, a reference solution.
#include <cmath>
#include <numbers>

#include "exercises/exercise.h"

using namespace ember;

namespace ex7_3 {

double lr_at(int64_t step, double max_lr, double min_lr, int64_t warmup, int64_t total) {
  if (step < warmup) return max_lr * static_cast<double>(step + 1) / static_cast<double>(warmup);
  if (step >= total) return min_lr;
  const double progress = static_cast<double>(step - warmup) / static_cast<double>(std::max<int64_t>(total - warmup, 1));
  return min_lr + (max_lr - min_lr) * (1 + std::cos(std::numbers::pi * progress)) / 2;
}

}  // namespace ex7_3
