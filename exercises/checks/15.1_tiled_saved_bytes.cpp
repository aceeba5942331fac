// Checks exercise 15.1: the learner's two closed forms against the memory
// timeline's saved-for-backward bytes at the end of one block's forward,
// tiled, then checkpointed, for several shapes.
#include "exercises/checks/check.h"
#include "inspect/memory.h"

namespace ex15_1 {
int64_t tiled_saved_bytes(int64_t B, int64_t T, int64_t D, int64_t h);
int64_t checkpointed_saved_bytes(int64_t B, int64_t T, int64_t D, int64_t h);
}  // namespace ex15_1

namespace {

using namespace ember;

// Saved for backward at the end of one block's forward (x made under the
// timeline: it sees x saved).
int64_t measured(int64_t B, int64_t T, int64_t D, int64_t h, bool checkpointed) {
  Generator gen(52);
  nn::TransformerBlock block(D, h, {.generator = &gen});
  inspect::MemoryTimeline memory;
  memory.track(block.parameters(), MemoryKind::Parameters);
  Tensor x = randn({B, T, D}, gen).requires_grad_();
  Tensor y = checkpointed ? nn::checkpoint(block, x) : block.forward(x);
  return memory.live()[static_cast<size_t>(MemoryKind::SavedForBackward)];
}

void same_as_measured(int64_t B, int64_t T, int64_t D, int64_t h, bool checkpointed) {
  const int64_t want = measured(B, T, D, h, checkpointed);
  const int64_t got = checkpointed ? ex15_1::checkpointed_saved_bytes(B, T, D, h) : ex15_1::tiled_saved_bytes(B, T, D, h);
  const std::string what = std::string(checkpointed ? "checkpointed" : "tiled") + ", B=" + std::to_string(B) +
                           " T=" + std::to_string(T) + " D=" + std::to_string(D) + " h=" + std::to_string(h);
  check::expect_bytes(got, want, what);
}

}  // namespace

check::Exercise check::exercise() {
  return {"15.1", "What tiled attention and checkpointing keep", "docs/book/15_memory.md", {
    {"tiled, B=2 T=8 D=16 h=2", [] { same_as_measured(2, 8, 16, 2, false); }},
    {"tiled, a longer context and more heads: B=2 T=40 D=16 h=4", [] { same_as_measured(2, 40, 16, 4, false); }},
    {"tiled, wider: B=3 T=8 D=32 h=2", [] { same_as_measured(3, 8, 32, 2, false); }},
    {"checkpointed, B=2 T=8 D=16 h=2 and B=3 T=40 D=32 h=4", [] {
       same_as_measured(2, 8, 16, 2, true);
       same_as_measured(3, 40, 32, 4, true);
       note("at B=4 T=2048 D=256 h=8 a block keeps " + std::to_string(ex15_1::tiled_saved_bytes(4, 2048, 256, 8)) +
            " bytes tiled, " + std::to_string(ex15_1::checkpointed_saved_bytes(4, 2048, 256, 8)) +
            " checkpointed (stored: 8.1's formula, over 0.5 GB)");
     }},
  }};
}
