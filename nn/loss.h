// Losses. cross_entropy is one fused op: log-softmax and the pick of the
// target's log-probability in one pass, with the textbook gradient
// softmax(logits) - one_hot(target), so it stays exact at ±1e4 logits.
#pragma once

#include "tensor/tensor.h"

namespace ember::nn {

enum class Reduction { Mean, Sum, None };

// logits (N, C) or (B, T, C), targets (N) or (B, T) int64 in [0, C).
// Targets equal to ignore_index contribute nothing (and are not counted by
// Mean). Reduction::None returns the per-target losses (0 where ignored).
// Mean over zero counted targets is NaN, as in PyTorch.
Tensor cross_entropy(const Tensor& logits, const Tensor& targets, Reduction reduction = Reduction::Mean,
                     int64_t ignore_index = -100);

// mean/sum/none of (input - target)^2, shapes broadcast.
Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::Mean);

}  // namespace ember::nn
