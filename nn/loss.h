/// @file
/// Losses. cross_entropy is one fused op with its own backward rule, so it
/// lives with the other ops (autograd/ops/cross_entropy.cpp) and is only
/// named here; mse_loss composes ops.
#pragma once

#include "autograd/ops.h"

namespace ember::nn {

using ember::cross_entropy;  // logits (N, C) or (B, T, C), targets int64: see autograd/ops.h
using ember::Reduction;

/// mean/sum/none of (input - target)^2, shapes broadcast.
Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::Mean);

}  // namespace ember::nn
