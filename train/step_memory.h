/// @file
/// The memory of one training step of a GPT with AdamW, in closed form, by
/// the kinds that inspect::MemoryTimeline measures. examples/inside_a_step
/// prints it beside the measurement; train::Trainer refuses, before its first
/// step, a run that cannot fit in this machine's memory.
///
/// Legend: B batch, T context length, D model dim, h heads, V vocabulary,
/// L layers, P parameters, n parameter tensors, f bytes per float (4 or 8).
///
///   parameters         f P
///   gradients          f P       one .grad per parameter (a tied matrix has one)
///   optimizer_state    2 f P + 8 n
///                      AdamW's two moments per parameter, and one int64 step
///                      count per parameter tensor
///   saved_activations  f B T (L (16 D + 4 + a) + 2 D + 2 + V + 1),
///                      plus f B T D (2 L + 1) with dropout
///     a = h with tiled attention (the default), h T with the stored weights
///     per block: ln1 keeps its input (BTD) and a mean and 1/std per row
///       (2 BT); q, k and v share ln1's output (BTD) as their input; the
///       attention keeps q, k, v (3 BTD) and, tiled, its output (which w_o
///       keeps as its input anyway) and one log-sum-exp per row and head
///       (h B T), or, stored, the weights (h B T T; the causal mask lives
///       inside scaled_softmax and saves nothing); w_o its input (BTD); ln2
///       like ln1 (BTD + 2 BT); fc1 its input (BTD); GELU its input
///       (4 BTD); fc2 its input (4 BTD). 16 BTD + 4 BT + a B T in all; the
///       residual adds keep nothing.
///     once: ln_f (BTD + 2 BT), the head's input (BTD), the logits (B T V) and
///       their log-sum-exp per row (B T), which the loss keeps.
///     dropout (p > 0): each of the 2 L + 1 dropouts keeps its mask (BTD).
///     A view saved by a node shares its input's memory and counts once.
///     With GPT::checkpoint_activations, each block keeps only its input
///       (L BTD instead of the L blocks' terms); the most saved at once is
///       then the larger of the end of the forward (L BTD + the once terms,
///       and the embedding's mask) and the moment backward has recomputed
///       the last block (L BTD, the embedding's mask, and that block's
///       terms but its input).
///   saved_batch        2 * 8 B T
///                      the ids (kept by the embedding) and the targets (by
///                      the loss), int64
///
/// Each is the most that kind holds during the step: the saved tensors all
/// at the end of the forward, the gradients at the end of backward (they
/// appear while backward frees the saved tensors), the optimizer state from
/// the first update on. total() adds them up, so no instant of the step
/// holds more of them at once; temporaries come on top.
#pragma once

#include <cstdint>

#include "nn/gpt.h"

namespace ember::train {

struct StepMemory {
  int64_t parameters = 0;
  int64_t gradients = 0;
  int64_t optimizer_state = 0;
  int64_t saved_activations = 0;
  int64_t saved_batch = 0;
  /// Every kind added up (an error if that overflows int64).
  int64_t total() const;
};

/// The closed form above for one step of `model` on `batch` sequences of its
/// full context length. An ember::Error (op "step_memory") naming the sizes
/// when a count overflows int64.
StepMemory step_memory(const nn::GPT& model, int64_t batch);

}  // namespace ember::train
