// Decoding with a key-value cache (nn/kv_cache.h) and sampling
// (nn/gpt.h SampleOptions): cached logits against the model run on every
// token so far, the cache's limits and errors, and what each sampling
// option keeps.
//
// Why a bound and not bits: the whole prompt at once through the cache runs
// the very products forward() runs, row for row, and gives the same bits.
// One token at a time, every Linear multiplies a single row, for which
// OpenBLAS takes another kernel (a matrix-vector product) that adds the D
// terms of each dot product in another order. Each logit is a chain of such
// sums, so it moves by a few units in the last place of the values it sums:
// below 1e-5 of the logits' scale in float32 (24-bit mantissa, sums of at
// most 4D = 256 terms, through 2 to 4 layers) and 1e-12 in float64.
//
// Legend: B batch, T tokens, L context length, V vocabulary, D model dim.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "ember.h"
#include "test_util.h"

using namespace ember;
using ember::test::expect_error;

namespace {

nn::GPTConfig config(int64_t V, int64_t L, int64_t D, int64_t heads, int64_t layers, bool tied, nn::Positional pos,
                     DType dtype, uint64_t seed) {
  nn::GPTConfig c;
  c.vocab_size = V;
  c.context_length = L;
  c.dim = D;
  c.heads = heads;
  c.layers = layers;
  c.tie_weights = tied;
  c.positional = pos;
  c.dtype = dtype;
  c.seed = seed;
  return c;
}

// The shapes the tests run over: the lesson's tiny GPT (the defaults of
// GPTConfig: V 65, L 64, D 64, 4 heads, 2 layers) and random GPTs of
// other sizes, tied and untied, learned and sinusoidal, float32 and float64.
std::vector<nn::GPTConfig> configs() {
  using nn::Positional;
  return {
      nn::GPTConfig{},
      config(11, 8, 16, 2, 2, true, Positional::Learned, kFloat32, 3),
      config(23, 20, 24, 3, 3, false, Positional::Sinusoidal, kFloat32, 5),
      config(17, 12, 32, 4, 1, false, Positional::Learned, kFloat64, 7),
      config(31, 16, 12, 1, 4, true, Positional::Sinusoidal, kFloat64, 9),
  };
}

std::vector<int64_t> random_ids(int64_t n, int64_t V, uint64_t seed) {
  Generator g(seed);
  std::vector<int64_t> ids(static_cast<size_t>(n));
  for (auto& t : ids) t = static_cast<int64_t>(g.next_below(static_cast<uint64_t>(V)));
  return ids;
}

Tensor row_of(const std::vector<int64_t>& ids, size_t from, size_t to) {
  std::vector<int64_t> part(ids.begin() + static_cast<std::ptrdiff_t>(from), ids.begin() + static_cast<std::ptrdiff_t>(to));
  return tensor(part, {1, static_cast<int64_t>(part.size())});
}

double bound(DType dtype) { return dtype == kFloat64 ? 1e-12 : 1e-5; }

// max |a - b| over max(1, max |b|)
double relative_gap(const Tensor& a, const Tensor& b) {
  std::vector<double> x = a.to_vector<double>(), y = b.to_vector<double>();
  double gap = 0, scale = 1;
  for (size_t i = 0; i < x.size(); ++i) {
    gap = std::max(gap, std::abs(x[i] - y[i]));
    scale = std::max(scale, std::abs(y[i]));
  }
  return gap / scale;
}

}  // namespace

// The whole sequence through an empty cache: the same products, row for row, as forward().
TEST(NnKvCache, ThePromptAtOnceGivesForwardsBits) {
  for (const nn::GPTConfig& c : configs()) {
    SCOPED_TRACE(c.to_string());
    nn::GPT model(c);
    model.eval();
    NoGradGuard no_grad;
    std::vector<int64_t> ids = random_ids(c.context_length, c.vocab_size, c.seed + 100);
    Tensor full = model.forward(row_of(ids, 0, ids.size()));
    nn::KVCache cache = model.make_cache();
    Tensor cached = model.forward(row_of(ids, 0, ids.size()), cache);
    EXPECT_EQ(cache.length(), c.context_length);
    ASSERT_EQ(cached.shape(), full.shape());
    EXPECT_EQ(cached.to_vector<double>(), full.to_vector<double>());
  }
}

// Prefill a prompt, then one token at a time up to the context length: every
// step's logits are those of forward() on every token so far, at its last row.
TEST(NnKvCache, DecodingOneTokenAtATimeMatchesRecomputing) {
  for (const nn::GPTConfig& c : configs()) {
    SCOPED_TRACE(c.to_string());
    nn::GPT model(c);
    model.eval();
    NoGradGuard no_grad;
    const size_t L = static_cast<size_t>(c.context_length), prompt = 3;
    std::vector<int64_t> ids = random_ids(c.context_length, c.vocab_size, c.seed + 200);
    nn::KVCache cache = model.make_cache();
    Tensor first = model.forward(row_of(ids, 0, prompt), cache);
    EXPECT_LE(relative_gap(first, model.forward(row_of(ids, 0, prompt))), bound(c.dtype));
    double worst = 0;
    for (size_t n = prompt; n < L; ++n) {
      Tensor step = model.forward(row_of(ids, n, n + 1), cache);  // (1, 1, V)
      ASSERT_EQ(step.shape(), (Shape{1, 1, c.vocab_size}));
      Tensor full = model.forward(row_of(ids, 0, n + 1)).select(1, -1);
      worst = std::max(worst, relative_gap(step.select(1, 0), full));
      ASSERT_EQ(cache.length(), static_cast<int64_t>(n + 1));
    }
    EXPECT_LE(worst, bound(c.dtype));
  }
}

// What the profiler and the trace see of a cached step: attention over the
// cache as one tiled_attention op a layer, its inputs the queries and the
// whole cache so far.
TEST(NnKvCache, AttentionOverTheCacheIsAnOpTheObserversSee) {
  struct Watcher : AutogradObserver {
    std::vector<std::vector<Shape>> attention;  // the input shapes of each tiled_attention
    void op_begin(const char* op, const std::vector<const Tensor*>& inputs) override {
      if (std::string(op) != "tiled_attention") return;
      attention.emplace_back();
      for (const Tensor* t : inputs) attention.back().push_back(t->shape());
    }
  } watcher;
  nn::GPT model(config(11, 8, 16, 2, 3, true, nn::Positional::Learned, kFloat32, 3));
  model.eval();
  NoGradGuard no_grad;
  nn::KVCache cache = model.make_cache();
  model.forward(row_of({1, 2, 3}, 0, 3), cache);
  {
    struct Install {  // removed again also when forward throws
      explicit Install(AutogradObserver* o) { set_autograd_observer(o); }
      ~Install() { set_autograd_observer(nullptr); }
    } install(&watcher);
    model.forward(row_of({4}, 0, 1), cache);
  }
  // 3 layers; q (1, 2 heads, 1 token, 8) against the 4 keys and values so far
  const std::vector<Shape> one = {Shape{1, 2, 1, 8}, Shape{1, 2, 4, 8}, Shape{1, 2, 4, 8}};
  EXPECT_EQ(watcher.attention, (std::vector<std::vector<Shape>>{one, one, one}));
}

// Pieces of several tokens (a prompt in chunks, a batch of 2 sequences).
TEST(NnKvCache, ChunksAndBatchesMatchRecomputing) {
  nn::GPTConfig c = config(19, 16, 24, 3, 2, false, nn::Positional::Learned, kFloat32, 11);
  nn::GPT model(c);
  model.eval();
  NoGradGuard no_grad;
  std::vector<int64_t> ids = random_ids(2 * 16, 19, 12);  // two rows of 16
  Tensor all = tensor(ids, {2, 16});
  Tensor full = model.forward(all);  // (2, 16, V)
  nn::KVCache cache = model.make_cache(2);
  int64_t at = 0;
  for (int64_t piece : {5, 1, 4, 6}) {
    Tensor got = model.forward(narrow(all, 1, at, piece), cache);
    EXPECT_LE(relative_gap(got, narrow(full, 1, at, piece)), bound(kFloat32)) << "piece at " << at;
    at += piece;
  }
  EXPECT_EQ(cache.length(), 16);
}

// Attention alone: the cached form equals the full causal form at the new
// rows, and the cache holds the keys and values appended, in order.
TEST(NnKvCache, AttentionAppendsKeysAndValuesInPlace) {
  nn::MultiHeadAttention attn(8, 2, nn::MultiHeadAttentionOptions{.causal = true, .dtype = kFloat64,
                                                                   .generator = test::seeded(4)});
  NoGradGuard no_grad;
  Tensor x = randn({1, 6, 8}, *test::seeded(5), kFloat64);
  Tensor full = attn.forward(x);
  nn::KVCache cache(1, 1, 2, 6, 4, kFloat64);
  Tensor a = attn.forward(narrow(x, 1, 0, 4), cache, 0);
  cache.advance(4);
  Tensor b = attn.forward(narrow(x, 1, 4, 2), cache, 0);
  cache.advance(2);
  EXPECT_LE(relative_gap(a, narrow(full, 1, 0, 4)), 1e-12);
  EXPECT_LE(relative_gap(b, narrow(full, 1, 4, 2)), 1e-12);
  // the cached keys are W_k x split into heads: (1, 2, 6, 4)
  Tensor k = transpose(view(attn.w_k->forward(x), {1, 6, 2, 4}), 1, 2);
  auto [keys, values] = cache.append(0, zeros({1, 2, 0, 4}, kFloat64), zeros({1, 2, 0, 4}, kFloat64));
  EXPECT_LE(relative_gap(keys, k), 1e-15);
  EXPECT_EQ(values.shape(), (Shape{1, 2, 6, 4}));
}

// Positions after a cache: rows start..start+T-1 of the table.
TEST(NnKvCache, PositionsStartAfterTheCache) {
  nn::LearnedPositionalEmbedding learned(10, 4, nn::InitOptions{.generator = test::seeded(1)});
  nn::SinusoidalPositionalEmbedding fixed(10, 4);
  EXPECT_EQ(learned.positions(3, 2).to_vector<float>(), narrow(learned.weight, 0, 3, 2).to_vector<float>());
  EXPECT_EQ(fixed.positions(7, 3).to_vector<float>(), narrow(fixed.table, 0, 7, 3).to_vector<float>());
  // sin(9 / 10000^0) and cos(9) in columns 0 and 1 of position 9
  EXPECT_NEAR(fixed.positions(9, 1).to_vector<float>()[0], std::sin(9.0), 1e-6);
  EXPECT_NEAR(fixed.positions(9, 1).to_vector<float>()[1], std::cos(9.0), 1e-6);
  EXPECT_EQ(fixed.positions(10, 0).numel(), 0);
  expect_error([&] { learned.positions(8, 3); }, {"LearnedPositionalEmbedding", "positions 8..10", "L = 10"});
  expect_error([&] { fixed.positions(-1, 2); }, {"SinusoidalPositionalEmbedding", "start -1"});
  expect_error([&] { learned.forward(11); }, {"LearnedPositionalEmbedding", "T = 11", "L = 10"});
}

// The context limit is an error naming the lengths, and leaves the cache as it was.
TEST(NnKvCache, TheContextLimitIsAnErrorAndChangesNothing) {
  nn::GPT model(config(11, 8, 16, 2, 2, true, nn::Positional::Learned, kFloat32, 3));
  model.eval();
  NoGradGuard no_grad;
  std::vector<int64_t> ids = random_ids(9, 11, 1);
  nn::KVCache cache = model.make_cache();
  Tensor before = model.forward(row_of(ids, 0, 6), cache);
  expect_error([&] { model.forward(row_of(ids, 6, 9), cache); },
               {"GPT", "3 new tokens after the 6 in the cache", "context length 8"});
  EXPECT_EQ(cache.length(), 6);
  // the cache still continues the same sequence
  Tensor next = model.forward(row_of(ids, 6, 8), cache);
  EXPECT_LE(relative_gap(next, narrow(model.forward(row_of(ids, 0, 8)), 1, 6, 2)), bound(kFloat32));
  EXPECT_EQ(cache.length(), 8);
  expect_error([&] { model.forward(row_of(ids, 8, 9), cache); }, {"GPT", "1 new token after the 8", "context length 8"});
  cache.reset();
  EXPECT_EQ(cache.length(), 0);
  EXPECT_EQ(model.forward(row_of(ids, 0, 6), cache).to_vector<float>(), before.to_vector<float>());
}

TEST(NnKvCache, BadUseIsANamedError) {
  nn::GPT model(config(11, 8, 16, 2, 2, true, nn::Positional::Learned, kFloat32, 3));
  model.eval();
  nn::KVCache cache = model.make_cache();
  expect_error([&] { model.forward(zeros({1, 2}, kInt64), cache); }, {"MultiHeadAttention", "NoGradGuard"});
  EXPECT_EQ(cache.length(), 0);
  NoGradGuard no_grad;
  expect_error([&] { model.forward(zeros({2, 2}, kInt64), cache); }, {"GPT", "not made for this model", "make_cache(2)"});
  nn::GPT other(config(11, 8, 16, 2, 3, true, nn::Positional::Learned, kFloat32, 3));
  expect_error([&] { other.forward(zeros({1, 2}, kInt64), cache); }, {"GPT", "2 layers", "3 layers"});
  expect_error([&] { model.forward(full({1, 2}, 11.0, kInt64), cache); }, {"11"});
  EXPECT_EQ(cache.length(), 0);
  expect_error([&] { cache.append(2, zeros({1, 2, 1, 8}), zeros({1, 2, 1, 8})); }, {"KVCache", "layer 2", "[0, 2)"});
  expect_error([&] { cache.append(0, zeros({1, 2, 1, 8}), zeros({1, 2, 1, 7})); }, {"KVCache", "(1, 2, T, 8)", "(1, 2, 1, 7)"});
  expect_error([&] { cache.append(0, zeros({1, 2, 1, 8}, kFloat64), zeros({1, 2, 1, 8}, kFloat64)); },
               {"KVCache", "float64", "float32"});
  expect_error([&] { cache.append(0, zeros({1, 2, 9, 8}), zeros({1, 2, 9, 8})); },
               {"KVCache", "9 new positions after the 0 cached", "capacity 8"});
  expect_error([&] { cache.advance(9); }, {"KVCache", "advance(9)", "[0, 8]"});
  expect_error([] { nn::KVCache(1, 0, 2, 8, 4); }, {"KVCache", "batch 0"});
  expect_error([] { nn::KVCache(1, 1, 2, 8, 4, kInt64); }, {"KVCache", "int64"});
  nn::MultiHeadAttention both_ways(16, 2);  // not causal
  nn::KVCache c1(1, 1, 2, 8, 8);
  expect_error([&] { both_ways.forward(zeros({1, 2, 16}), c1, 0); }, {"MultiHeadAttention", "causal"});
  EXPECT_EQ(cache.nbytes(), 2 * 2 * 1 * 2 * 8 * 8 * 4);
}

// generate() with the cache gives the tokens it gives recomputing every
// context, for greedy and sampled decoding, past the context length too
// (the sliding window), and the same seed gives the same tokens.
TEST(NnKvCache, GenerateWithTheCacheGivesTheSameTokens) {
  for (const nn::GPTConfig& c : configs()) {
    SCOPED_TRACE(c.to_string());
    nn::GPT model(c);
    const std::vector<int64_t> prompt = random_ids(4, c.vocab_size, 1);
    const int64_t n = c.context_length + 6;  // past L: the window slides
    for (double temperature : {0.0, 1.0}) {
      nn::SampleOptions o{.temperature = temperature, .top_k = 5, .top_p = 0.9, .seed = 3};
      std::vector<int64_t> cached = model.generate(prompt, n, o);
      o.cache = false;
      std::vector<int64_t> recomputed = model.generate(prompt, n, o);
      ASSERT_EQ(cached.size(), prompt.size() + static_cast<size_t>(n));
      EXPECT_EQ(cached, recomputed) << "temperature " << temperature;
      o.cache = true;
      EXPECT_EQ(model.generate(prompt, n, o), cached);
    }
    EXPECT_TRUE(model.is_training());  // the mode is restored
  }
}

// Generation ends after the first stop token, which is kept.
TEST(NnKvCache, GenerationStopsAtAStopToken) {
  nn::GPT model(config(11, 8, 16, 2, 2, true, nn::Positional::Learned, kFloat32, 3));
  const std::vector<int64_t> greedy = model.generate({1, 2}, 12, nn::SampleOptions{.temperature = 0});
  ASSERT_EQ(greedy.size(), 14u);
  const int64_t stop = greedy[5];
  const size_t first = static_cast<size_t>(std::find(greedy.begin() + 2, greedy.end(), stop) - greedy.begin());
  std::vector<int64_t> out = model.generate({1, 2}, 12, nn::SampleOptions{.temperature = 0, .stop = {10, stop}});
  EXPECT_EQ(out, std::vector<int64_t>(greedy.begin(), greedy.begin() + static_cast<std::ptrdiff_t>(first) + 1));
  expect_error([&] { model.generate({1}, 3, nn::SampleOptions{.stop = {11}}); }, {"generate", "stop token 11", "[0, 11)"});
  expect_error([&] { model.generate({1}, 3, nn::SampleOptions{.top_p = 0}); }, {"generate", "top_p", "(0, 1]"});
  expect_error([&] { model.generate({1}, 3, nn::SampleOptions{.top_p = 1.5}); }, {"generate", "top_p", "1.5"});
  expect_error([&] { model.generate({1}, 3, nn::SampleOptions{.top_p = NAN}); }, {"generate", "top_p", "nan"});
  EXPECT_TRUE(model.is_training());
}

// What each option keeps, on logits whose softmax is known:
// p = (0.5, 0.3, 0.15, 0.05).
TEST(NnKvCache, SamplingKeepsWhatEachOptionSays) {
  const std::vector<double> p = {0.5, 0.3, 0.15, 0.05};
  std::vector<double> lp;
  for (double v : p) lp.push_back(std::log(v));
  Tensor logits = tensor(lp, {4});
  auto counts = [&](const nn::SampleOptions& o) {
    Generator gen(o.seed);
    std::vector<int> n(4, 0);
    for (int i = 0; i < 20000; ++i) ++n[static_cast<size_t>(nn::sample_next(logits, o, gen))];
    return n;
  };
  // No limit: each token about as often as its probability (5 standard deviations).
  std::vector<int> all = counts({});
  for (size_t i = 0; i < 4; ++i) EXPECT_NEAR(all[i] / 20000.0, p[i], 5 * std::sqrt(p[i] * (1 - p[i]) / 20000)) << i;
  // top_p 0.45: token 0 alone reaches it.
  EXPECT_EQ(counts({.top_p = 0.45}), (std::vector<int>{20000, 0, 0, 0}));
  // top_p 0.7: tokens 0 and 1 (0.5 < 0.7 <= 0.8), renormalised: 0.625 and 0.375.
  std::vector<int> nucleus = counts({.top_p = 0.7});
  EXPECT_EQ(nucleus[2] + nucleus[3], 0);
  EXPECT_NEAR(nucleus[0] / 20000.0, 0.625, 5 * std::sqrt(0.625 * 0.375 / 20000));
  // top_k 3 drops the last; then top_p 0.9 of (0.5, 0.3, 0.15)/0.95 keeps all three (0.842 < 0.9).
  std::vector<int> k3 = counts({.top_k = 3, .top_p = 0.9});
  EXPECT_EQ(k3[3], 0);
  EXPECT_GT(k3[2], 0);
  // Temperature 2 before top_p: p ∝ sqrt(p) = (0.707, 0.548, 0.387, 0.224) / 1.866,
  // so 0.379 + 0.294 = 0.673 < 0.7: three tokens.
  std::vector<int> warm = counts({.temperature = 2, .top_p = 0.7});
  EXPECT_EQ(warm[3], 0);
  EXPECT_NEAR(warm[2] / 20000.0, 0.387 / (0.707 + 0.548 + 0.387), 0.01);
  // greedy, and the same seed gives the same draws
  EXPECT_EQ(counts({.temperature = 0}), (std::vector<int>{20000, 0, 0, 0}));
  EXPECT_EQ(counts({.seed = 4}), counts({.seed = 4}));
  EXPECT_NE(counts({.seed = 4}), counts({.seed = 5}));
  Generator gen;
  expect_error([&] { nn::sample_next(zeros({2, 2}), {}, gen); }, {"sample_next", "(V)", "(2, 2)"});
  expect_error([&] { nn::sample_next(tensor(std::vector<double>{0.0, NAN}, {2}), {}, gen, 7); },
               {"sample_next", "nan", "step 7"});
  expect_error([&] { nn::sample_next(logits, {.top_k = -1}, gen); }, {"sample_next", "top_k", "-1"});
}
