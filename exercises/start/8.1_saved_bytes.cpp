// Exercise 8.1: Predict the saved-for-backward bytes of a block (chapter 8, docs/book/08_watching_it_work.md)
//
// During the forward pass every op that records a node keeps what its rule
// will need (chapter 2): those tensors stay alive until backward walks past
// the node. For one float32 nn::TransformerBlock (nn/attention.h, dropout 0,
// causal, with the stored-weights attention: .attention =
// nn::AttentionKernel::Stored) on an input x of shape (B, T, D) with h heads,
// how many bytes are saved for backward at the end of the forward pass, x
// included? (Chapter 15 does the same for the tiled attention.)
//
// Read nn/attention.cpp:TransformerBlock::forward and
// nn/attention.cpp:MultiHeadAttention::project op by op, and for each op its
// node in autograd/ops/ (what does LayerNormBackward keep? MatmulBackward?
// the softmax? GELU?). Two rules: a tensor saved by several nodes is one
// block of memory, counted once, and so is a view of it; the parameters are
// counted as parameters, not as saved. The checker measures the answer with
// the memory timeline for several shapes and tells you by how much you are off.
//
// Check it:  bash scripts/exercise.sh 8.1
#include "exercises/exercise.h"

using namespace ember;

namespace ex8_1 {

int64_t saved_bytes(int64_t B, int64_t T, int64_t D, int64_t h) {
  (void)B;
  (void)T;
  (void)D;
  (void)h;
  TODO("which tensors are saved at the end of the forward pass, how many floats does each hold, and how many "
       "bytes is that?");
}

}  // namespace ex8_1
