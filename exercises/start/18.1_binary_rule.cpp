// Exercise 18.1: The binary rule (chapter 18, docs/book/18_vmap.md)
//
// vmap runs each op of a function once for the whole batch, through the
// op's batching rule. Write the rule of a binary op with broadcasting:
//
//   batched_mul(a, a_batched, b, b_batched)
//
// where a tensor whose flag is true carries the batch as its dim 0 (B
// samples, each of the rest of its shape) and one whose flag is false is
// the same for every sample. At least one of them is batched. Return the
// batch of results, with the batch as dim 0: row b must equal
// a_b * b_b, where a_b is a.select(0, b) if a is batched and a itself if
// not (and the same for b); one sample's operands broadcast as usual.
//
// Use ember ops (reshape, unsqueeze, mul): no loop over the batch, and no
// vmap (autograd/batching.h has ember's own rule: write yours first).
//
// Think about:
//   * one sample of a has rank a.dim() - 1 if a is batched: which rank does
//     one sample's result have?
//   * broadcasting lines dims up from the right: where does a batched (B, 3)
//     meet an unbatched (4, 3)? Where must it, so that sample b meets b?
//   * what must happen to a tensor that is not batched?
//
// Check it:  bash scripts/exercise.sh 18.1
#include "exercises/exercise.h"

using namespace ember;

namespace ex18_1 {

Tensor batched_mul(const Tensor& a, bool a_batched, const Tensor& b, bool b_batched) {
  (void)a;
  (void)a_batched;
  (void)b;
  (void)b_batched;
  TODO("give each batched operand the rank of one sample's result, after its batch dim; then multiply");
}

}  // namespace ex18_1
