// Checks exercise 15.1: the learner's two closed forms against the memory
// timeline's saved-for-backward bytes at the end of one block's forward,
// tiled, then checkpointed, for several shapes. A wrong count is measured at
// more shapes and its difference written as a sum of B·T·D, B·T, h·B·T ...
// floats, which names the tensors missing or counted twice
// (saved_bytes_terms.h).
#include "exercises/checks/check.h"
#include "exercises/checks/saved_bytes_terms.h"
#include "inspect/memory.h"

namespace ex15_1 {
int64_t tiled_saved_bytes(int64_t B, int64_t T, int64_t D, int64_t h);
int64_t checkpointed_saved_bytes(int64_t B, int64_t T, int64_t D, int64_t h);
}  // namespace ex15_1

namespace {

using namespace ember;
using check::saved::BlockShape;
using check::saved::Mistake;

// Saved for backward at the end of one block's forward (x made under the
// timeline: it sees x saved).
int64_t measured(const BlockShape& s, bool checkpointed) {
  Generator gen(52);
  nn::TransformerBlock block(s.D, s.h, {.generator = &gen});
  inspect::MemoryTimeline memory;
  memory.track(block.parameters(), MemoryKind::Parameters);
  Tensor x = randn({s.B, s.T, s.D}, gen).requires_grad_();
  Tensor y = checkpointed ? nn::checkpoint(block, x) : block.forward(x);
  return memory.live()[static_cast<size_t>(MemoryKind::SavedForBackward)];
}

int64_t predicted(const BlockShape& s, bool checkpointed) {
  return checkpointed ? ex15_1::checkpointed_saved_bytes(s.B, s.T, s.D, s.h)
                      : ex15_1::tiled_saved_bytes(s.B, s.T, s.D, s.h);
}

double block_parameters(int64_t D, int64_t h) {
  Generator gen(0);
  double n = 0;
  for (const Tensor& p : nn::TransformerBlock(D, h, {.generator = &gen}).parameters()) n += double(p.numel());
  return n;
}

// Per term (B·T·D, B·T, h·B·T·T, B·T·T, h·B·T, parameters): how the usual
// mistakes differ from the measurement, in floats.
const std::vector<Mistake> kTiledMistakes = {
    {{0, 0, +1, 0, -1}, "that is the stored-weights count of exercise 8.1: tiled attention keeps no (T, T) "
                        "weights; what does its node keep instead, per query row and head?"},
    {{0, 0, +1}, "tiled attention keeps no (T, T) weights: its backward recomputes them, one tile at a time"},
    {{0, 0, 0, 0, -1}, "the tiled node also keeps one number per query row and head: what does the backward "
                       "need to recompute a row's softmax from its scores?"},
    {{+1}, "the attention's output is counted twice: w_o's input is a view of it (the heads merged back into "
           "(B, T, D)), one block of memory"},
    {{-1}, "one (B, T, D) tensor is missing: x itself (the first LayerNorm keeps it)? q, k or v (the tiled node "
           "keeps all three)? the attention's output (w_o's input)?"},
    {{0, -4}, "each LayerNorm also keeps a mean and a 1/std per row: 2 B·T floats each, and the block has two"},
    {{0, 0, 0, 0, 0, +1}, "the parameters count as parameters, not as saved, even when a node keeps them"},
};
const std::vector<Mistake> kCheckpointedMistakes = {
    {{-1}, "the checkpoint's node keeps the block's input x, to run the forward again in backward"},
    {{15, 4, 0, 0, 1}, "that is the block's count without checkpointing: inside nn::checkpoint the block's forward "
                       "records nothing, and only the checkpoint's own node keeps something"},
    {{16, 4, 0, 0, 1}, "that is the block's count without checkpointing, plus x: inside nn::checkpoint the block's "
                       "forward records nothing"},
    {{0, 0, 0, 0, 0, +1}, "the parameters the checkpoint reads stay parameters: they are not counted as saved"},
};

void same_as_measured(const BlockShape& s, bool checkpointed) {
  const int64_t want = measured(s, checkpointed), got = predicted(s, checkpointed);
  if (got == want) return;
  const std::string hint = check::saved::hint_for(
      [checkpointed](const BlockShape& t) { return predicted(t, checkpointed); },
      [checkpointed](const BlockShape& t) { return measured(t, checkpointed); },
      check::saved::block_terms(block_parameters), checkpointed ? kCheckpointedMistakes : kTiledMistakes);
  check::fail(std::string(checkpointed ? "checkpointed, " : "tiled, ") + check::saved::show(s) + ": you predict " +
                  std::to_string(got) + " bytes, the timeline measured " + std::to_string(want) +
                  " (you are off by " + std::to_string(got - want) + " bytes = " + check::num(double(got - want) / 4) +
                  " floats)",
              hint);
}

}  // namespace

check::Exercise check::exercise() {
  return {"15.1", "What tiled attention and checkpointing keep", "docs/book/15_memory.md", {
    {"tiled, B=2 T=8 D=16 h=2", [] { same_as_measured({2, 8, 16, 2}, false); }},
    {"tiled, a longer context and more heads: B=2 T=40 D=16 h=4", [] { same_as_measured({2, 40, 16, 4}, false); }},
    {"tiled, wider: B=3 T=8 D=32 h=2", [] { same_as_measured({3, 8, 32, 2}, false); }},
    {"checkpointed, B=2 T=8 D=16 h=2 and B=3 T=40 D=32 h=4", [] {
       same_as_measured({2, 8, 16, 2}, true);
       same_as_measured({3, 40, 32, 4}, true);
       note("at B=4 T=2048 D=256 h=8 a block keeps " + std::to_string(ex15_1::tiled_saved_bytes(4, 2048, 256, 8)) +
            " bytes tiled, " + std::to_string(ex15_1::checkpointed_saved_bytes(4, 2048, 256, 8)) +
            " checkpointed (stored: 8.1's formula, over 0.5 GB)");
     }},
  }};
}
