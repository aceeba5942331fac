// Checks exercise 8.1: the learner's closed form against the memory
// timeline's peak of saved-for-backward bytes, for several block shapes. A
// wrong count is measured at more shapes and its difference written as a sum
// of B·T·D, B·T, h·B·T·T ... floats, which names the tensors missing or
// counted twice (saved_bytes_terms.h).
#include "exercises/checks/check.h"
#include "exercises/checks/saved_bytes_terms.h"
#include "inspect/memory.h"

namespace ex8_1 {
int64_t saved_bytes(int64_t B, int64_t T, int64_t D, int64_t h);
}

namespace {

using namespace ember;
using check::saved::BlockShape;

// The most bytes saved for backward at any moment of one block's forward.
int64_t measured(const BlockShape& s) {
  Generator gen(51);
  nn::TransformerBlock block(s.D, s.h, {.attention = nn::AttentionKernel::Stored, .generator = &gen});
  inspect::MemoryTimeline memory;
  memory.track(block.parameters(), MemoryKind::Parameters);
  Tensor x = randn({s.B, s.T, s.D}, gen).requires_grad_();  // made under the timeline: it sees x saved
  Tensor y = block.forward(x);
  int64_t peak = 0;
  for (const auto& sample : memory.samples())
    peak = std::max(peak, sample.live[static_cast<size_t>(MemoryKind::SavedForBackward)]);
  return peak;
}

double block_parameters(int64_t D, int64_t h) {
  Generator gen(0);
  double n = 0;
  for (const Tensor& p : nn::TransformerBlock(D, h, {.generator = &gen}).parameters()) n += double(p.numel());
  return n;
}

// Per term (B·T·D, B·T, h·B·T·T, B·T·T, h·B·T, parameters): how the usual
// mistakes differ from the measurement, in floats.
const std::vector<check::saved::Mistake> kMistakes = {
    {{-1}, "one (B, T, D) tensor is missing: x itself (the first LayerNorm keeps it)? v (the product with the "
           "weights keeps it)? the merged heads (w_o's input)?"},
    {{+1}, "one (B, T, D) tensor too many: is a tensor counted twice, saved by two nodes or a view of one "
           "already counted?"},
    {{+2}, "is ln1's output counted once for each of w_q, w_k and w_v? The three keep one tensor: one block of "
           "memory, counted once"},
    {{-4}, "a (B, T, 4D) tensor is missing: fc1's output (what GELU keeps) and GELU's output (what fc2 keeps) are "
           "two different tensors"},
    {{-8}, "the MLP's two (B, T, 4D) tensors are missing: fc1's output (kept by GELU) and GELU's output (kept by "
           "fc2)"},
    {{0, -4}, "each LayerNorm also keeps a mean and a 1/std per row: 2 B·T floats each, and the block has two"},
    {{0, -2}, "a LayerNorm keeps two numbers per row (the mean and the 1/std), and the block has two LayerNorms"},
    {{0, 0, +1}, "the attention weights are counted twice: the softmax keeps its output, and the product with v "
                 "keeps that same tensor"},
    {{0, 0, -1}, "the attention weights are missing: the softmax keeps its output, one (T, T) matrix per head "
                 "and sequence"},
    {{0, 0, -1, +1}, "the weights are one (T, T) matrix per head: h of them per sequence"},
    {{0, 0, 0, 0, 0, +1}, "the parameters count as parameters, not as saved, even when a node keeps them"},
};

void same_as_measured(const BlockShape& s) {
  const int64_t want = measured(s), got = ex8_1::saved_bytes(s.B, s.T, s.D, s.h);
  if (got == want) return;
  const std::string hint = check::saved::hint_for(
      [](const BlockShape& t) { return ex8_1::saved_bytes(t.B, t.T, t.D, t.h); }, measured,
      check::saved::block_terms(block_parameters), kMistakes);
  check::fail(check::saved::show(s) + ": you predict " + std::to_string(got) + " bytes, the timeline measured " +
                  std::to_string(want) + " (you are off by " + std::to_string(got - want) + " bytes = " +
                  check::num(double(got - want) / 4) + " floats)",
              hint);
}

}  // namespace

check::Exercise check::exercise() {
  return {"8.1", "Predict the saved-for-backward bytes of a block", "docs/book/08_watching_it_work.md", {
    {"B=2 T=8 D=16 h=2", [] { same_as_measured({2, 8, 16, 2}); }},
    {"a wider block: B=2 T=8 D=32 h=2", [] { same_as_measured({2, 8, 32, 2}); }},
    {"a longer context: B=2 T=32 D=16 h=2", [] { same_as_measured({2, 32, 16, 2}); }},
    {"more heads and a larger batch: B=3 T=8 D=16 h=4", [] {
       same_as_measured({3, 8, 16, 4});
       note("B=4 T=256 D=64 h=4 would save " + std::to_string(ex8_1::saved_bytes(4, 256, 64, 4)) +
            " bytes per block: at long contexts the h*B*T*T attention weights dominate");
     }},
  }};
}
