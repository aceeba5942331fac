// Exercise 15.1: What tiled attention and checkpointing keep (chapter 15, docs/book/15_memory.md)
//
// Exercise 8.1 counted what one float32 nn::TransformerBlock keeps for
// backward with the stored-weights attention: 16 BTD + 4 BT floats, plus
// h B T² of attention weights. The block's default is now tiled attention
// (nn/attention.h, AttentionKernel::Tiled; autograd/ops/attention.cpp),
// which keeps no weights. Count again, for the block (dropout 0, causal) on
// x of shape (B, T, D) with h heads, x included:
//
//   tiled_saved_bytes        what the block saves, with tiled attention;
//   checkpointed_saved_bytes what it saves when it runs as
//                            nn::checkpoint(block, x) (nn/checkpoint.h),
//                            at the end of that forward.
//
// Read autograd/ops/attention.cpp:tiled_attention: what does its node save,
// and which of those tensors is the very memory that w_o saves as its input
// (a view counts once)? The checker measures both with the memory timeline.
//
// Check it:  bash scripts/exercise.sh 15.1
#include "exercises/exercise.h"

using namespace ember;

namespace ex15_1 {

int64_t tiled_saved_bytes(int64_t B, int64_t T, int64_t D, int64_t h) {
  (void)B;
  (void)T;
  (void)D;
  (void)h;
  TODO("8.1's sum, with the h*B*T*T weights replaced by what tiled attention keeps per query row and head");
}

int64_t checkpointed_saved_bytes(int64_t B, int64_t T, int64_t D, int64_t h) {
  (void)B;
  (void)T;
  (void)D;
  (void)h;
  TODO("what CheckpointBackward keeps besides the parameters (which count as parameters)");
}

}  // namespace ex15_1
