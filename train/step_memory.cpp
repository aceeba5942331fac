#include "train/step_memory.h"

#include <algorithm>

#include "base/error.h"

namespace ember::train {

namespace {
// int64 arithmetic that fails, naming the sizes, instead of wrapping.
struct Counter {
  const nn::GPTConfig& c;
  int64_t batch;
  [[noreturn]] void overflow() const {
    EMBER_FAIL("step_memory", "batch " << batch << " x context " << c.context_length << " (dim " << c.dim << ", "
                                       << c.layers << " layers, vocabulary " << c.vocab_size
                                       << ") needs more bytes than int64 can count");
  }
  int64_t add(int64_t a, int64_t b) const {
    int64_t r = 0;
    if (__builtin_add_overflow(a, b, &r)) overflow();
    return r;
  }
  int64_t mul(int64_t a, int64_t b) const {
    int64_t r = 0;
    if (__builtin_mul_overflow(a, b, &r)) overflow();
    return r;
  }
};
}  // namespace

int64_t StepMemory::total() const {
  int64_t sum = 0;
  for (int64_t part : {parameters, gradients, optimizer_state, saved_activations, saved_batch})
    EMBER_CHECK(!__builtin_add_overflow(sum, part, &sum), "step_memory", "the total overflows int64");
  return sum;
}

StepMemory step_memory(const nn::GPT& model, int64_t batch) {
  const nn::GPTConfig& c = model.config();
  EMBER_CHECK(batch > 0, "step_memory", "batch must be positive, got " << batch);
  const Counter ck{c, batch};
  const int64_t f = static_cast<int64_t>(dtype_size(c.dtype)), P = model.num_parameters(),
                tensors = static_cast<int64_t>(model.parameters().size());
  const int64_t BT = ck.mul(batch, c.context_length), D = c.dim, T = c.context_length;
  StepMemory m;
  m.parameters = ck.mul(f, P);
  m.gradients = ck.mul(f, P);
  m.optimizer_state = ck.add(ck.mul(2, m.parameters), ck.mul(8, tensors));
  // Floats kept per (sequence, position): per block, then once; see the header.
  const bool tiled = model.attention() == nn::AttentionKernel::Tiled;
  const int64_t attention = tiled ? c.heads : ck.mul(c.heads, T);  // lse per row and head, or the weights
  int64_t block = ck.add(ck.add(ck.mul(16, D), 4), attention);
  if (c.dropout > 0) block = ck.add(block, ck.mul(2, D));  // the block's two dropout masks
  int64_t once = ck.add(ck.add(ck.mul(2, D), 2), ck.add(c.vocab_size, 1));
  if (c.dropout > 0) once = ck.add(once, D);  // the embedding's dropout mask
  int64_t per_row = ck.add(ck.mul(c.layers, block), once);
  if (model.checkpoint_activations) {
    // Each block keeps only its input until backward; when backward reaches
    // the last block, it recomputes it: that block's own saves (its input
    // among them, counted already) while the other inputs are still kept,
    // and the final LayerNorm, head and loss have freed theirs.
    const int64_t inputs = ck.mul(c.layers, D), before = c.dropout > 0 ? D : 0;
    const int64_t end_of_forward = ck.add(inputs, once);
    const int64_t recomputing = c.layers > 0 ? ck.add(ck.add(inputs, before), block - D) : 0;
    per_row = std::max(end_of_forward, recomputing);
  }
  m.saved_activations = ck.mul(f, ck.mul(BT, per_row));
  m.saved_batch = ck.mul(2 * 8, BT);
  return m;
}

}  // namespace ember::train
