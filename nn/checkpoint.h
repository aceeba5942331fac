/// @file
/// Activation checkpointing for a module: module.forward(x) run by
/// ember::checkpoint (autograd/checkpoint.h), which keeps only x and runs the
/// module again inside backward.
///
///   for (auto& blk : *gpt.blocks) x = nn::checkpoint(*blk, x);
#pragma once

#include "autograd/checkpoint.h"
#include "nn/layers.h"

namespace ember::nn {

using ember::checkpoint;  // checkpoint(fn, inputs)
/// module.forward(x), checkpointed. The module must outlive the backward.
Tensor checkpoint(UnaryModule& module, const Tensor& x);

}  // namespace ember::nn
