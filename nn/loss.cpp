#include "nn/loss.h"

namespace ember::nn {

Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction reduction) {
  Tensor diff = input - target;
  Tensor sq = diff * diff;
  if (reduction == Reduction::None) return sq;
  return reduction == Reduction::Sum ? sum(sq) : mean(sq);
}

}  // namespace ember::nn
