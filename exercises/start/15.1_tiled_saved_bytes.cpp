// Exercise 15.1: What tiled attention and checkpointing keep (chapter 15, docs/book/15_memory.md)
//
// Exercise 8.1 counted what one float32 nn::TransformerBlock keeps for
// backward with the stored-weights attention: start from your count there.
// The block's default is now tiled attention (nn/attention.h,
// AttentionKernel::Tiled), which keeps no attention weights. Count again, for
// the block (dropout 0, causal) on x of shape (B, T, D) with h heads, x
// included:
//
//   tiled_saved_bytes        what the block saves, with tiled attention;
//   checkpointed_saved_bytes what it saves when it runs as
//                            nn::checkpoint(block, x), at the end of that
//                            forward.
//
// Think about:
//   * read autograd/ops/attention.cpp:tiled_attention: what does its node
//     save instead of the weights, and how many numbers is that per query
//     row and head?
//   * which of those tensors is the very memory that w_o saves as its input?
//     (a view counts once)
//   * inside nn::checkpoint, does the block's forward record nodes at all?
//     what must the checkpoint's own node keep to run it again in backward?
//     (the parameters it reads count as parameters)
// The checker measures both with the memory timeline, and tells you which
// sizes of tensor your count has too many or too few of.
//
// Compare with, after you try: nn/checkpoint.h and autograd/checkpoint.h.
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
  TODO("what changes from 8.1's count when the attention keeps no weights: what does it keep instead, and is "
       "any of that memory already counted?");
}

int64_t checkpointed_saved_bytes(int64_t B, int64_t T, int64_t D, int64_t h) {
  (void)B;
  (void)T;
  (void)D;
  (void)h;
  TODO("at the end of a checkpointed forward, which nodes exist, and what do they keep?");
}

}  // namespace ex15_1
