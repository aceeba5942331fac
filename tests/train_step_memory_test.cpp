// The memory of one training step in closed form (train/step_memory.h),
// checked two ways: against numbers worked out by hand for a small GPT, and
// against what inspect::MemoryTimeline measures during a real step, kind by
// kind and byte for byte, over configs that change every term.
//
// Legend: B batch, T context, D model dim, h heads, V vocabulary, L layers,
// P parameters, n parameter tensors, f bytes per float.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <vector>

#include "inspect/memory.h"
#include "nn/gpt.h"
#include "test_util.h"
#include "train/data.h"
#include "train/optim.h"
#include "train/step_memory.h"

namespace {

using namespace ember;
using ember::test::expect_error;

// V = 11, T = 8, D = 16, h = 2, L = 2: tied, learned positions, float32.
nn::GPTConfig small_config() {
  nn::GPTConfig c;
  c.vocab_size = 11;
  c.context_length = 8;
  c.dim = 16;
  c.heads = 2;
  c.layers = 2;
  c.seed = 4;
  return c;
}

// The closed form of a model with the stored-weights attention (the hand
// numbers below count its h T weights per row).
train::StepMemory stored_memory(const nn::GPTConfig& c, int64_t batch) {
  nn::GPT model(c);
  model.set_attention(nn::AttentionKernel::Stored);
  return train::step_memory(model, batch);
}

TEST(TrainStepMemory, HandComputedForASmallGpt) {
  // P = token 11*16 (176) + positions 8*16 (128) + 2 blocks of 12 D^2 + 13 D
  // (3280) + ln_f 2 D (32) = 6896; n = 1 + 1 + 2 * 16 + 2 = 36 tensors.
  // Per (sequence, position), floats saved: 2 (16 D + 4 + h T) = 552, then
  // 2 D + 2 + V + 1 = 46: 598. B = 3: B T = 24.
  nn::GPT model(small_config());
  model.set_attention(nn::AttentionKernel::Stored);
  ASSERT_EQ(model.num_parameters(), 6896);
  ASSERT_EQ(model.parameters().size(), 36u);
  const train::StepMemory m = train::step_memory(model, 3);
  EXPECT_EQ(m.parameters, 4 * 6896);               // 27 584
  EXPECT_EQ(m.gradients, 27584);
  EXPECT_EQ(m.optimizer_state, 2 * 27584 + 8 * 36);  // 55 456
  EXPECT_EQ(m.saved_activations, 4 * 24 * 598);      // 57 408
  EXPECT_EQ(m.saved_batch, 2 * 8 * 24);              // 384
  EXPECT_EQ(m.total(), 27584 + 27584 + 55456 + 57408 + 384);

  // Each option moves its own terms, by hand:
  nn::GPTConfig c = small_config();
  c.tie_weights = false;  // the head's own (V, D): P + 176, one more tensor
  const train::StepMemory untied = stored_memory(c, 3);
  EXPECT_EQ(untied.parameters, 4 * (6896 + 176));
  EXPECT_EQ(untied.optimizer_state, 8 * (6896 + 176) + 8 * 37);
  EXPECT_EQ(untied.saved_activations, 57408);
  c = small_config();
  c.positional = nn::Positional::Sinusoidal;  // a buffer, not a parameter: P - 128, one tensor fewer
  const train::StepMemory sinusoidal = stored_memory(c, 3);
  EXPECT_EQ(sinusoidal.parameters, 4 * (6896 - 128));
  EXPECT_EQ(sinusoidal.optimizer_state, 8 * (6896 - 128) + 8 * 35);
  EXPECT_EQ(sinusoidal.saved_activations, 57408);
  c = small_config();
  c.dtype = kFloat64;  // f = 8, but a step count stays one int64
  const train::StepMemory f64 = stored_memory(c, 3);
  EXPECT_EQ(f64.parameters, 8 * 6896);
  EXPECT_EQ(f64.optimizer_state, 16 * 6896 + 8 * 36);
  EXPECT_EQ(f64.saved_activations, 8 * 24 * 598);
  EXPECT_EQ(f64.saved_batch, 384);
  c = small_config();
  c.dropout = 0.25;  // 2 L + 1 = 5 masks of B T D floats
  EXPECT_EQ(stored_memory(c, 3).saved_activations, 57408 + 4 * 24 * 16 * 5);
  c = small_config();
  c.layers = 0;  // no blocks: ln_f, the head's input, the logits
  EXPECT_EQ(stored_memory(c, 3).saved_activations, 4 * 24 * 46);

  // Tiled attention keeps h log-sum-exps per row instead of h T weights:
  // 2 (16 D + 4 + h) + 46 = 570.
  nn::GPT tiled(small_config());
  EXPECT_EQ(train::step_memory(tiled, 3).saved_activations, 4 * 24 * 570);  // 54 720
  // Checkpointed: L D = 32 block inputs; at the end of the forward 32 + 46 =
  // 78; recomputing the last block 32 + (16 D + 4 + h - D) = 278, the larger.
  tiled.checkpoint_activations = true;
  EXPECT_EQ(train::step_memory(tiled, 3).saved_activations, 4 * 24 * 278);  // 26 688
  c = small_config();
  c.vocab_size = 300;  // now the logits dominate: 32 + (2 D + 2 + V + 1) = 367 at the end of the forward
  nn::GPT wide_vocab(c);
  wide_vocab.checkpoint_activations = true;
  EXPECT_EQ(train::step_memory(wide_vocab, 3).saved_activations, 4 * 24 * 367);
}

TEST(TrainStepMemory, BadBatchesAreErrorsNamingTheSizes) {
  nn::GPT model(small_config());
  expect_error([&] { (void)train::step_memory(model, 0); }, "step_memory", {"batch", "positive", "0"});
  expect_error([&] { (void)train::step_memory(model, -3); }, "step_memory", {"-3"});
  expect_error([&] { (void)train::step_memory(model, INT64_MAX / 4); }, "step_memory",
               {"batch 2305843009213693951", "context 8", "int64"});
}

// ---- against the memory timeline ----

struct Measured {
  int64_t parameters = 0, gradients = 0, optimizer_state = 0, saved = 0;
};

// One AdamW step of a fresh model, watched the way examples/inside_a_step
// watches it: the parameters tracked, each kind's highest value over the
// step. `batch_inside`: the batch is sampled after the timeline starts, so
// the ids and targets it keeps count as saved too.
Measured measure_step(const nn::GPTConfig& c, int64_t batch, bool batch_inside,
                      const std::function<void(nn::GPT&)>& setup) {
  std::vector<int64_t> tokens(400);
  for (size_t i = 0; i < tokens.size(); ++i) tokens[i] = static_cast<int64_t>((i * 7 + i / 5) % c.vocab_size);
  nn::GPT model(c);
  setup(model);
  optim::AdamW opt(model.parameters(), 3e-3);
  train::BatchSampler sampler(tokens, batch, c.context_length, 0.0, 1);
  {  // unwatched first: whatever is made once, on first use, exists before the timeline
    auto [x, y] = sampler.sample();
    model.loss(x, y).backward();
    opt.zero_grad();
  }
  std::pair<Tensor, Tensor> early = sampler.sample();
  inspect::MemoryTimeline memory;
  memory.track(model.parameters(), MemoryKind::Parameters);
  const auto [x, y] = batch_inside ? sampler.sample() : early;
  Tensor loss = model.loss(x, y);
  opt.zero_grad();
  loss.backward();
  opt.step();
  Measured m;
  auto most = [&](MemoryKind k) {
    int64_t v = 0;
    for (const auto& s : memory.samples()) v = std::max(v, s.live[static_cast<size_t>(k)]);
    return v;
  };
  m.parameters = most(MemoryKind::Parameters);
  m.gradients = most(MemoryKind::Gradients);
  m.optimizer_state = most(MemoryKind::OptimizerState);
  m.saved = most(MemoryKind::SavedForBackward);
  return m;
}

TEST(TrainStepMemory, EqualsWhatTheMemoryTimelineMeasures) {
  struct Case {
    const char* what;
    nn::GPTConfig config;
    int64_t batch;
    std::function<void(nn::GPT&)> setup;
  };
  std::vector<Case> cases;
  auto with = [&](const char* what, int64_t batch, auto change, std::function<void(nn::GPT&)> setup = [](nn::GPT&) {}) {
    nn::GPTConfig c = small_config();
    change(c);
    cases.push_back({what, c, batch, setup});
  };
  auto stored = [](nn::GPT& m) { m.set_attention(nn::AttentionKernel::Stored); };
  auto checkpointed = [](nn::GPT& m) { m.checkpoint_activations = true; };
  with("stored weights", 3, [](nn::GPTConfig&) {}, stored);
  with("checkpointed", 3, [](nn::GPTConfig&) {}, checkpointed);
  with("checkpointed, stored weights, dropout", 2, [](nn::GPTConfig& c) { c.dropout = 0.2; }, [](nn::GPT& m) {
    m.set_attention(nn::AttentionKernel::Stored);
    m.checkpoint_activations = true;
  });
  with("checkpointed, logits dominate", 2, [](nn::GPTConfig& c) { c.vocab_size = 300; }, checkpointed);
  with("small", 3, [](nn::GPTConfig&) {});
  with("untied", 2, [](nn::GPTConfig& c) { c.tie_weights = false; });
  with("sinusoidal", 2, [](nn::GPTConfig& c) { c.positional = nn::Positional::Sinusoidal; });
  with("float64", 2, [](nn::GPTConfig& c) { c.dtype = kFloat64; });
  with("dropout", 2, [](nn::GPTConfig& c) { c.dropout = 0.2; });
  with("no blocks", 4, [](nn::GPTConfig& c) { c.layers = 0; });
  with("wide and deep", 1, [](nn::GPTConfig& c) {
    c.vocab_size = 29;
    c.context_length = 12;
    c.dim = 24;
    c.heads = 3;
    c.layers = 3;
  });
  for (const Case& k : cases) {
    for (bool batch_inside : {false, true}) {
      SCOPED_TRACE(std::string(k.what) + (batch_inside ? ", batch made inside the timeline" : ""));
      nn::GPT model(k.config);
      k.setup(model);
      const train::StepMemory closed = train::step_memory(model, k.batch);
      const Measured got = measure_step(k.config, k.batch, batch_inside, k.setup);
      EXPECT_EQ(got.parameters, closed.parameters);
      EXPECT_EQ(got.gradients, closed.gradients);
      EXPECT_EQ(got.optimizer_state, closed.optimizer_state);
      EXPECT_EQ(got.saved, closed.saved_activations + (batch_inside ? closed.saved_batch : 0));
    }
  }
}

}  // namespace
