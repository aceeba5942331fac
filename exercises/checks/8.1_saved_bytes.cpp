// Checks exercise 8.1: the learner's closed form against the memory
// timeline's peak of saved-for-backward bytes, for several block shapes.
#include "exercises/checks/check.h"
#include "inspect/memory.h"

namespace ex8_1 {
int64_t saved_bytes(int64_t B, int64_t T, int64_t D, int64_t h);
}

namespace {

using namespace ember;

// The most bytes saved for backward at any moment of one block's forward.
int64_t measured(int64_t B, int64_t T, int64_t D, int64_t h) {
  Generator gen(51);
  nn::TransformerBlock block(D, h, {.attention = nn::AttentionKernel::Stored, .generator = &gen});
  inspect::MemoryTimeline memory;
  memory.track(block.parameters(), MemoryKind::Parameters);
  Tensor x = randn({B, T, D}, gen).requires_grad_();  // made under the timeline: it sees x saved
  Tensor y = block.forward(x);
  int64_t peak = 0;
  for (const auto& s : memory.samples())
    peak = std::max(peak, s.live[static_cast<size_t>(MemoryKind::SavedForBackward)]);
  return peak;
}

void same_as_measured(int64_t B, int64_t T, int64_t D, int64_t h) {
  const int64_t want = measured(B, T, D, h), got = ex8_1::saved_bytes(B, T, D, h);
  const std::string what = "B=" + std::to_string(B) + " T=" + std::to_string(T) + " D=" + std::to_string(D) +
                           " h=" + std::to_string(h);
  check::expect_bytes(got, want, what);
}

}  // namespace

check::Exercise check::exercise() {
  return {"8.1", "Predict the saved-for-backward bytes of a block", "docs/book/08_watching_it_work.md", {
    {"B=2 T=8 D=16 h=2", [] { same_as_measured(2, 8, 16, 2); }},
    {"a wider block: B=2 T=8 D=32 h=2", [] { same_as_measured(2, 8, 32, 2); }},
    {"a longer context: B=2 T=32 D=16 h=2", [] { same_as_measured(2, 32, 16, 2); }},
    {"more heads and a larger batch: B=3 T=8 D=16 h=4", [] {
       same_as_measured(3, 8, 16, 4);
       note("B=4 T=256 D=64 h=4 would save " + std::to_string(ex8_1::saved_bytes(4, 256, 64, 4)) +
            " bytes per block: at long contexts the h*B*T*T attention weights dominate");
     }},
  }};
}
