// The tiny GPT (nn/gpt.h), its config, and the character-level data pipeline
// (train/data.h): what the model must do (learn, start at chance, sample within
// its context window, reproduce bit for bit) and what the data must be
// (consecutive windows, y = x shifted, the right split).
//
// Legend: B batch, T sequence length, L context length, D model dim,
// V vocabulary size.
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "ember.h"
#include "nn/gpt.h"
#include "test_util.h"
#include "train/data.h"
#include "train/optim.h"
#include "train/trainer.h"

using namespace ember;
using ember::test::expect_error;

namespace {

nn::GPTConfig tiny_config(int64_t V = 11, int64_t L = 8) {
  nn::GPTConfig c;
  c.vocab_size = V;
  c.context_length = L;
  c.dim = 16;
  c.heads = 2;
  c.layers = 2;
  c.seed = 3;
  return c;
}

// ids (1, n) from a vector
Tensor row(const std::vector<int64_t>& ids) { return tensor(ids, {1, static_cast<int64_t>(ids.size())}); }

// Bitwise equality of two float tensors' contents.
bool same_bits(const Tensor& a, const Tensor& b) {
  Tensor ca = a.contiguous(), cb = b.contiguous();
  return a.shape() == b.shape() && a.dtype() == b.dtype() &&
         std::memcmp(ca.raw_data(), cb.raw_data(), static_cast<size_t>(a.numel()) * dtype_size(a.dtype())) == 0;
}

}  // namespace

// ---- GPTConfig ----

TEST(NnGptConfig, ToStringFromStringRoundtrip) {
  nn::GPTConfig c;
  c.vocab_size = 97;
  c.context_length = 128;
  c.dim = 96;
  c.heads = 6;
  c.layers = 5;
  c.dropout = 0.125;
  c.positional = nn::Positional::Sinusoidal;
  c.tie_weights = false;
  c.seed = 18446744073709551615ull;  // the full uint64 range survives
  c.dtype = kFloat64;
  nn::GPTConfig r = nn::GPTConfig::from_string(c.to_string());
  EXPECT_EQ(r.vocab_size, 97);
  EXPECT_EQ(r.context_length, 128);
  EXPECT_EQ(r.dim, 96);
  EXPECT_EQ(r.heads, 6);
  EXPECT_EQ(r.layers, 5);
  EXPECT_EQ(r.dropout, 0.125);
  EXPECT_EQ(r.positional, nn::Positional::Sinusoidal);
  EXPECT_FALSE(r.tie_weights);
  EXPECT_EQ(r.seed, 18446744073709551615ull);
  EXPECT_EQ(r.dtype, kFloat64);
  EXPECT_EQ(r.to_string(), c.to_string());
  // the defaults round-trip too, and missing keys keep their defaults
  EXPECT_EQ(nn::GPTConfig::from_string(nn::GPTConfig{}.to_string()).to_string(), nn::GPTConfig{}.to_string());
  EXPECT_EQ(nn::GPTConfig::from_string("dim=32").dim, 32);
  EXPECT_EQ(nn::GPTConfig::from_string("dim=32").heads, nn::GPTConfig{}.heads);
}

TEST(NnGptConfig, FromStringErrors) {
  expect_error([] { nn::GPTConfig::from_string("dim=64 layers"); }, {"GPTConfig", "malformed entry \"layers\""});
  expect_error([] { nn::GPTConfig::from_string("depth=3"); }, {"GPTConfig", "unknown key \"depth\""});
  expect_error([] { nn::GPTConfig::from_string("dim=sixty"); }, {"GPTConfig", "bad value \"sixty\"", "dim"});
  expect_error([] { nn::GPTConfig::from_string("dim=64x"); }, {"GPTConfig", "bad value \"64x\"", "dim"});
  expect_error([] { nn::GPTConfig::from_string("dropout=0.1.2"); }, {"GPTConfig", "bad value \"0.1.2\"", "dropout"});
  expect_error([] { nn::GPTConfig::from_string("positional=rotary"); }, {"GPTConfig", "positional", "rotary"});
  expect_error([] { nn::GPTConfig::from_string("dtype=int64"); }, {"GPTConfig", "dtype", "int64"});
  expect_error([] { nn::GPTConfig::from_string("tie_weights=yes"); }, {"GPTConfig", "tie_weights", "yes"});
  expect_error([] { nn::GPTConfig::from_string("seed=-1"); }, {"GPTConfig", "bad value \"-1\"", "seed"});
}

// One error per kind of field, with the whole message: integers, the
// unsigned seed, the dropout rate, and the three choices.
TEST(NnGptConfig, FromStringErrorsOnePerKindOfField) {
  using nn::GPTConfig;
  expect_error([] { GPTConfig::from_string("layers=two"); }, "GPTConfig",
               {"bad value \"two\" for layers (expected an integer)"});
  expect_error([] { GPTConfig::from_string("seed=0x10"); }, "GPTConfig",
               {"bad value \"0x10\" for seed (expected a non-negative integer)"});
  expect_error([] { GPTConfig::from_string("dropout=1e999"); }, "GPTConfig", {"bad value \"1e999\" for dropout"});
  expect_error([] { GPTConfig::from_string("positional=rotary"); }, "GPTConfig",
               {"positional must be learned or sinusoidal, got rotary"});
  expect_error([] { GPTConfig::from_string("tie_weights=yes"); }, "GPTConfig", {"tie_weights must be 0 or 1, got yes"});
  expect_error([] { GPTConfig::from_string("dtype=int64"); }, "GPTConfig", {"dtype must be float32 or float64, got int64"});
  // A value that parses but is not a valid config: validate() names it.
  expect_error([] { GPTConfig::from_string("dim=64 heads=5"); }, "GPTConfig", {"heads 5", "divide dim 64"});
  // A dtype set in code that the text cannot hold is refused as the text's is,
  // before any weight is made.
  for (DType d : {kInt64, kBool}) {
    GPTConfig c;
    c.dtype = d;
    expect_error([&] { nn::GPT m(c); }, "GPTConfig", {"dtype must be float32 or float64, got", dtype_name(d)});
  }
}

// parameter_count is the closed form that GPTConfig::validate checks against
// the machine's memory before a single weight is allocated; it must count
// what the built model has, over every option that changes the count.
TEST(NnGptConfig, ParameterCountEqualsTheBuiltModelsOverManyConfigs) {
  int built = 0;
  for (int64_t V : {1, 7, 65})
    for (int64_t L : {1, 9})
      for (auto [D, h] : {std::pair<int64_t, int64_t>{2, 1}, {12, 3}, {16, 4}})
        for (int64_t layers : {0, 1, 3})
          for (bool tied : {true, false})
            for (auto pos : {nn::Positional::Learned, nn::Positional::Sinusoidal}) {
              nn::GPTConfig c;
              c.vocab_size = V;
              c.context_length = L;
              c.dim = D;
              c.heads = h;
              c.layers = layers;
              c.tie_weights = tied;
              c.positional = pos;
              nn::GPT model(c);
              ASSERT_EQ(c.parameter_count(), model.num_parameters()) << c.to_string();
              ++built;
            }
  EXPECT_EQ(built, 3 * 2 * 3 * 3 * 2 * 2);
  // And by hand for one: V 11, L 8, D 16, 2 layers, tied, learned:
  // 11*16 + 8*16 + 2 * (12 * 16^2 + 13 * 16) + 2 * 16.
  EXPECT_EQ(tiny_config().parameter_count(), 176 + 128 + 2 * 3280 + 32);
}

// ---- the model ----

TEST(NnGpt, LossAtInitIsLnV) {
  // GPT-2 init (std 0.02) gives near-zero logits: a uniform guess over V.
  for (int64_t V : {11, 65}) {
    nn::GPTConfig c = tiny_config(V, 16);
    nn::GPT model(c);
    Generator g(1);
    Tensor x = randint(0, V, {4, 16}, g), y = randint(0, V, {4, 16}, g);
    double loss = model.loss(x, y).item<double>();
    EXPECT_NEAR(loss, std::log(static_cast<double>(V)), 0.1) << "V = " << V;
    EXPECT_EQ(model.forward(x).shape(), (Shape{4, 16, V}));
  }
}

TEST(NnGpt, TyingSavesExactlyVTimesD) {
  nn::GPTConfig c = tiny_config(13, 8);
  nn::GPT tied(c);
  c.tie_weights = false;
  nn::GPT untied(c);
  EXPECT_EQ(untied.num_parameters() - tied.num_parameters(), 13 * 16);
  EXPECT_TRUE(tied.head->weight.is_same(tied.embed->token->weight));
  EXPECT_FALSE(untied.head->weight.is_same(untied.embed->token->weight));
}

TEST(NnGpt, SequenceLongerThanContextIsAnError) {
  nn::GPT model(tiny_config(11, 8));
  expect_error([&] { model.forward(zeros({1, 9}, kInt64)); }, {"GPT", "T = 9", "context length 8"});
  expect_error([&] { model.forward(zeros({9}, kInt64)); }, {"GPT", "(B, T)", "(9)"});
}

TEST(NnGpt, GenerateErrors) {
  nn::GPT model(tiny_config(11, 8));
  expect_error([&] { model.generate({1, 11}, 3); }, {"generate", "prompt token 11 at [1]", "[0, 11)"});
  expect_error([&] { model.generate({-1}, 3); }, {"generate", "prompt token -1 at [0]"});
  expect_error([&] { model.generate({}, 3); }, {"generate", "at least one token"});
  expect_error([&] { model.generate({1}, 3, -0.5); }, {"generate", "temperature", "-0.5"});
  expect_error([&] { model.generate({1}, 3, NAN); }, {"generate", "temperature", "nan"});
  expect_error([&] { model.generate({1}, 3, INFINITY); }, {"generate", "temperature", "inf"});
  expect_error([&] { model.generate({1}, 3, 1.0, -2); }, {"generate", "top_k", "-2"});
}

// Temperature 0 is greedy: each new token is the argmax of the logits. A
// temperature so small that logits / T overflow (1e-320) must not make
// inf - inf: it samples the same greedy tokens.
TEST(NnGpt, GenerateGreedyAndTinyTemperature) {
  nn::GPT model(tiny_config(11, 8));
  const std::vector<int64_t> greedy = model.generate({1, 2}, 6, 0.0);
  ASSERT_EQ(greedy.size(), 8u);
  std::vector<int64_t> ctx = {1, 2};
  for (size_t i = 2; i < greedy.size(); ++i) {
    NoGradGuard g;
    model.eval();
    Tensor logits = model.forward(tensor(ctx, {1, static_cast<int64_t>(ctx.size())})).select(1, -1).select(0, 0);
    EXPECT_EQ(greedy[i], argmax(logits).item<int64_t>()) << "token " << i;
    ctx.push_back(greedy[i]);
  }
  for (uint64_t seed : {0u, 1u, 2u}) EXPECT_EQ(model.generate({1, 2}, 6, 1e-320, 0, seed), greedy);
}

TEST(NnGpt, GenerateIsDeterministicPerSeed) {
  nn::GPT model(tiny_config(11, 8));
  std::vector<int64_t> a = model.generate({1, 2, 3}, 40, 1.0, 0, /*seed=*/7);
  std::vector<int64_t> b = model.generate({1, 2, 3}, 40, 1.0, 0, /*seed=*/7);
  std::vector<int64_t> c = model.generate({1, 2, 3}, 40, 1.0, 0, /*seed=*/8);
  ASSERT_EQ(a.size(), 43u);
  EXPECT_EQ(std::vector<int64_t>(a.begin(), a.begin() + 3), (std::vector<int64_t>{1, 2, 3}));  // prompt kept
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);  // 40 near-uniform draws over 11 tokens: equal only with probability ~1e-42
  for (int64_t t : a) EXPECT_TRUE(t >= 0 && t < 11);
  EXPECT_TRUE(model.is_training());  // generate restores the mode
}

TEST(NnGpt, GenerateTopKOneIsGreedy) {
  nn::GPT model(tiny_config(11, 8));
  std::vector<int64_t> out = model.generate({4, 5}, 1, 1.0, /*top_k=*/1, 123);
  NoGradGuard no_grad;
  model.eval();
  std::vector<double> logits = model.forward(row({4, 5})).select(1, -1).select(0, 0).to_vector<double>();
  model.train();
  int64_t argmax = std::max_element(logits.begin(), logits.end()) - logits.begin();
  EXPECT_EQ(out.back(), argmax);
}

// A prompt longer than L works, and only its last L tokens matter: changing
// the tokens before the window changes nothing (same seed, same samples),
// while changing one inside the window changes the distribution.
TEST(NnGpt, GenerateConditionsOnTheLastContextLengthTokensOnly) {
  const int64_t L = 8;
  nn::GPT model(tiny_config(11, L));
  std::vector<int64_t> prompt(20), other(20);
  for (int64_t i = 0; i < 20; ++i) {
    prompt[i] = i % 11;
    other[i] = i < 20 - L ? (i * 7 + 3) % 11 : prompt[i];  // differs only before the window
  }
  ASSERT_NE(prompt, other);
  std::vector<int64_t> a = model.generate(prompt, 30, 1.0, 0, 5), b = model.generate(other, 30, 1.0, 0, 5);
  ASSERT_EQ(a.size(), 50u);
  EXPECT_EQ(std::vector<int64_t>(a.begin() + 20, a.end()), std::vector<int64_t>(b.begin() + 20, b.end()));

  // The next-token distribution is the one of the last L tokens alone ...
  NoGradGuard no_grad;
  model.eval();
  std::vector<int64_t> window(prompt.end() - L, prompt.end());
  Tensor last = model.forward(row(window)).select(1, -1);
  // ... and a change inside the window does change it.
  std::vector<int64_t> changed = window;
  changed[0] = (changed[0] + 1) % 11;
  Tensor moved = model.forward(row(changed)).select(1, -1);
  model.train();
  EXPECT_FALSE(same_bits(last, moved));
}

// The full model's loss against every parameter, float64 central
// differences. The parameters themselves are gradcheck's inputs: they are
// float64 leaves, gradcheck perturbs them in place, and fn reads them
// through the model. Random (not GPT-2-small) weights so that attention and
// LayerNorm are far from their linear regime; the tied matrix gets its
// gradient from both the embedding and the head.
TEST(NnGpt, GradcheckFullModelFloat64) {
  for (bool tie : {true, false}) {
    SCOPED_TRACE(tie ? "tied" : "untied");
    nn::GPTConfig c;
    c.vocab_size = 5;
    c.context_length = 4;
    c.dim = 4;
    c.heads = 2;
    c.layers = 2;
    c.tie_weights = tie;
    c.dtype = kFloat64;
    nn::GPT model(c);
    Generator g(11);
    {
      NoGradGuard no_grad;
      for (Tensor& p : model.parameters()) p.add_(randn(p.shape(), g, kFloat64) * 0.5);
    }
    Tensor x = tensor(std::vector<int64_t>{0, 3, 1, 4, 2, 2, 0, 1}, {2, 4});
    Tensor y = tensor(std::vector<int64_t>{3, 1, 4, 2, 2, 0, 1, 3}, {2, 4});
    std::vector<Tensor> params = model.parameters();
    auto fn = [&](const std::vector<Tensor>&) { return model.loss(x, y); };
    GradcheckResult r = gradcheck(fn, params);
    EXPECT_TRUE(r.ok) << r.report;
    int64_t n = 0;
    for (const Tensor& p : params) n += p.numel();
    EXPECT_EQ(r.checked, n);  // every scalar parameter (scalar loss: one Jacobian row)
  }
}

// A two-layer GPT memorizes one 64-character string.
TEST(NnGpt, OverfitsA64CharacterString) {
  const std::string text = "To be, or not to be, that is the question: whether 'tis nobler..";
  ASSERT_EQ(text.size(), 64u);
  train::CharTokenizer tok = train::CharTokenizer::from_text(text);
  std::vector<int64_t> ids = tok.encode(text);
  nn::GPTConfig c;
  c.vocab_size = tok.vocab_size();
  c.context_length = 63;
  c.dim = 32;
  c.heads = 2;
  c.layers = 2;
  c.seed = 1;
  nn::GPT model(c);
  // x = text[0, 63), y = text[1, 64): every position predicts the next character
  Tensor x = row({ids.begin(), ids.end() - 1}), y = row({ids.begin() + 1, ids.end()});
  optim::AdamW opt(model.parameters(), /*lr=*/1e-2, 0.9, 0.99, 1e-8, /*weight_decay=*/0.0);
  const double initial = model.loss(x, y).item<double>();
  EXPECT_NEAR(initial, std::log(static_cast<double>(c.vocab_size)), 0.1);
  double loss = initial;
  const int kSteps = 150;
  for (int step = 0; step < kSteps; ++step) {
    Tensor l = model.loss(x, y);
    opt.zero_grad();
    l.backward();
    opt.step();
    loss = l.item<double>();
  }
  loss = model.loss(x, y).item<double>();
  EXPECT_LT(loss, 0.05) << "after " << kSteps << " steps";
  // and greedy decoding from the first character recites the text
  std::vector<int64_t> out = model.generate({ids[0]}, 63, 1.0, /*top_k=*/1, 0);
  EXPECT_EQ(tok.decode(out), text);
}

// Same seeds, same thread count: 20 training steps twice give bit-identical
// losses and parameters.
TEST(NnGpt, TrainingIsBitwiseReproducible) {
  std::string text;
  for (int i = 0; i < 40; ++i) text += "the quick brown fox jumps over the lazy dog " + std::to_string(i) + "\n";
  train::CharTokenizer tok = train::CharTokenizer::from_text(text);
  train::TrainOptions o;
  o.steps = 20;
  o.batch = 4;
  o.warmup = 5;
  o.eval_every = 10;
  o.eval_batches = 2;
  o.seed = 9;
  auto run = [&](std::vector<double>& losses) {
    nn::GPTConfig c = tiny_config(tok.vocab_size(), 16);
    c.dropout = 0.1;  // the dropout masks must replay too
    auto model = std::make_unique<nn::GPT>(c);
    train::Trainer trainer(*model, tok.encode(text), o);
    while (!trainer.done()) {
      train::StepLog s = trainer.step();
      losses.push_back(s.loss);
      losses.push_back(s.grad_norm);
      if (s.val_loss) losses.push_back(*s.val_loss);
    }
    return model;
  };
  std::vector<double> la, lb;
  auto a = run(la), b = run(lb);
  ASSERT_EQ(la.size(), lb.size());
  for (size_t i = 0; i < la.size(); ++i) EXPECT_EQ(std::memcmp(&la[i], &lb[i], sizeof(double)), 0) << "at " << i;
  auto pa = a->named_parameters(), pb = b->named_parameters();
  ASSERT_EQ(pa.size(), pb.size());
  for (size_t i = 0; i < pa.size(); ++i) EXPECT_TRUE(same_bits(pa[i].second, pb[i].second)) << pa[i].first;
  EXPECT_LT(la[la.size() - 3], la[0]);  // and it did learn something
}

// ---- CharTokenizer ----

TEST(NnCharTokenizer, VocabularyIsSortedDistinctCodePoints) {
  train::CharTokenizer t = train::CharTokenizer::from_text("hello world");
  EXPECT_EQ(t.vocab(), " dehlorw");
  EXPECT_EQ(t.vocab_size(), 8);
  EXPECT_EQ(t.encode("hello"), (std::vector<int64_t>{3, 2, 4, 4, 5}));
}

TEST(NnCharTokenizer, MultiByteUtf8Roundtrip) {
  const std::string text = "h\xC3\xA9llo \xE2\x9C\x93 \xF0\x9F\x94\xA5";  // "héllo ✓ 🔥": 2-, 3- and 4-byte characters
  train::CharTokenizer t = train::CharTokenizer::from_text(text);
  EXPECT_EQ(t.vocab_size(), 7);  // ' ' h l o é ✓ 🔥 (code-point order)
  EXPECT_EQ(t.vocab(), " hlo\xC3\xA9\xE2\x9C\x93\xF0\x9F\x94\xA5");
  std::vector<int64_t> ids = t.encode(text);
  EXPECT_EQ(ids.size(), 9u);  // characters, not bytes
  EXPECT_EQ(ids[1], 4);       // é
  EXPECT_EQ(t.decode(ids), text);
  // from_vocab rebuilds the same tokenizer (what a checkpoint stores)
  train::CharTokenizer r = train::CharTokenizer::from_vocab(t.vocab());
  EXPECT_EQ(r.vocab(), t.vocab());
  EXPECT_EQ(r.encode(text), ids);
}

TEST(NnCharTokenizer, Errors) {
  train::CharTokenizer t = train::CharTokenizer::from_text("abc");
  expect_error([&] { t.encode("abzc"); }, {"encode", "'z'", "U+7a", "at character 2", "3 characters"});
  expect_error([&] { t.encode("a\xC3\xA9"); }, {"encode", "'\xC3\xA9'", "U+e9", "at character 1"});
  expect_error([&] { t.decode({0, 3}); }, {"decode", "id 3 at [1]", "[0, 3)"});
  expect_error([] { train::CharTokenizer::from_text(""); }, {"CharTokenizer", "empty"});
  // invalid UTF-8 names the byte offset: a stray continuation byte, a
  // truncated sequence, an overlong encoding
  expect_error([] { train::CharTokenizer::from_text("ab\x80"); }, {"CharTokenizer", "invalid UTF-8", "0x80", "offset 2"});
  expect_error([] { train::CharTokenizer::from_text("abc\xE2\x9C"); }, {"CharTokenizer", "invalid UTF-8", "offset 3"});
  expect_error([] { train::CharTokenizer::from_text("a\xE2(x"); }, {"CharTokenizer", "invalid UTF-8", "offset 2"});
  expect_error([] { train::CharTokenizer::from_text("\xC0\xAF"); }, {"CharTokenizer", "overlong", "offset 0"});
  expect_error([&] { t.encode("a\xFF"); }, {"encode", "0xff", "offset 1"});
  expect_error([] { train::CharTokenizer::from_vocab(""); }, {"CharTokenizer", "empty"});
  expect_error([] { train::CharTokenizer::from_vocab("ba"); }, {"CharTokenizer", "increasing order"});
  expect_error([] { train::CharTokenizer::from_vocab("abb"); }, {"CharTokenizer", "distinct"});
}

// ---- BatchSampler ----

TEST(NnBatchSampler, WindowsAreConsecutiveTextAndYIsXShifted) {
  std::vector<int64_t> tokens(1000);
  for (int64_t i = 0; i < 1000; ++i) tokens[i] = i;  // a token's value is its position
  train::BatchSampler s(tokens, /*batch=*/6, /*context=*/10, /*val_fraction=*/0.1, /*seed=*/1);
  for (bool val : {false, true}) {
    SCOPED_TRACE(val ? "validation" : "train");
    for (int rep = 0; rep < 20; ++rep) {
      auto [x, y] = s.sample(val);
      ASSERT_EQ(x.shape(), (Shape{6, 10}));
      ASSERT_EQ(y.shape(), (Shape{6, 10}));
      ASSERT_EQ(x.dtype(), kInt64);
      std::vector<int64_t> xv = x.to_vector<int64_t>(), yv = y.to_vector<int64_t>();
      for (int64_t b = 0; b < 6; ++b)
        for (int64_t t = 0; t < 10; ++t) {
          int64_t xi = xv[b * 10 + t], yi = yv[b * 10 + t];
          EXPECT_EQ(yi, xi + 1);  // the next token
          if (t > 0) {
            EXPECT_EQ(xi, xv[b * 10 + t - 1] + 1);  // consecutive
          }
          if (val) {
            EXPECT_TRUE(xi >= 900 && yi < 1000) << xi;  // inside the val part
          } else {
            EXPECT_TRUE(xi >= 0 && yi < 900) << yi;  // targets never leak into it
          }
        }
    }
  }
}

TEST(NnBatchSampler, SplitSizes) {
  train::BatchSampler s(std::vector<int64_t>(1000, 0), 2, 8, 0.1, 0);
  EXPECT_EQ(s.train_size(), 900);
  EXPECT_EQ(s.val_size(), 100);
  train::BatchSampler all(std::vector<int64_t>(50, 0), 2, 8, 0.0, 0);
  EXPECT_EQ(all.train_size(), 50);
  EXPECT_EQ(all.val_size(), 0);
  expect_error([&] { all.sample(true); }, {"BatchSampler", "no validation split"});
}

TEST(NnBatchSampler, SeededDeterminism) {
  std::vector<int64_t> tokens(500);
  for (int64_t i = 0; i < 500; ++i) tokens[i] = i;
  train::BatchSampler a(tokens, 4, 8, 0.1, 42), b(tokens, 4, 8, 0.1, 42), c(tokens, 4, 8, 0.1, 43);
  for (int i = 0; i < 5; ++i) {
    auto [xa, ya] = a.sample();
    auto [xb, yb] = b.sample();
    auto [xc, yc] = c.sample();
    EXPECT_EQ(xa.to_vector<int64_t>(), xb.to_vector<int64_t>());
    EXPECT_EQ(ya.to_vector<int64_t>(), yb.to_vector<int64_t>());
    EXPECT_NE(xa.to_vector<int64_t>(), xc.to_vector<int64_t>());
  }
  // an explicit generator leaves the sampler's own stream alone
  train::BatchSampler d(tokens, 4, 8, 0.1, 42);
  Generator other(5);
  d.sample(true, other);
  train::BatchSampler e(tokens, 4, 8, 0.1, 42);
  EXPECT_EQ(d.sample().first.to_vector<int64_t>(), e.sample().first.to_vector<int64_t>());
}

TEST(NnBatchSampler, Errors) {
  std::vector<int64_t> tokens(100, 0);
  expect_error([&] { train::BatchSampler(tokens, 0, 8, 0.1, 0); }, {"BatchSampler", "batch 0"});
  expect_error([&] { train::BatchSampler(tokens, 2, 8, 1.0, 0); }, {"BatchSampler", "val_fraction", "1"});
  expect_error([&] { train::BatchSampler(tokens, 2, 100, 0.0, 0); }, {"BatchSampler", "training part has 100 tokens", "101"});
  expect_error([&] { train::BatchSampler(tokens, 2, 10, 0.1, 0); }, {"BatchSampler", "validation part has 10 tokens", "11"});
  // The window of the largest context, counted without overflow (it printed a negative size).
  expect_error([&] { train::BatchSampler(tokens, 2, INT64_MAX, 0.0, 0); }, {"BatchSampler", "context + 1 = 9223372036854775808"});
}

// ---- read_text_file ----

TEST(NnReadTextFile, PlainAndGzip) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("ember_read_text_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::string text = "First Citizen:\nBefore we proceed any further, h\xC3\xA9\xE2\x9C\x93.\n";
  // ~100 KB: more than read_text_file's 64 KiB buffer, so several reads
  for (int i = 0; i < 10000; ++i) text += "line " + std::to_string(i) + "\n";
  {
    std::ofstream f(dir / "plain.txt", std::ios::binary);
    f << text;
  }
  {
    gzFile gz = gzopen((dir / "packed.txt.gz").c_str(), "wb");
    ASSERT_NE(gz, nullptr);
    ASSERT_EQ(gzwrite(gz, text.data(), static_cast<unsigned>(text.size())), static_cast<int>(text.size()));
    gzclose(gz);
  }
  EXPECT_EQ(train::read_text_file((dir / "plain.txt").string()), text);
  EXPECT_EQ(train::read_text_file((dir / "packed.txt.gz").string()), text);
  EXPECT_LT(std::filesystem::file_size(dir / "packed.txt.gz"), text.size());  // it really is compressed
  const std::string missing = (dir / "missing.txt").string();
  expect_error([&] { train::read_text_file(missing); }, {"read_text_file", missing});
  std::filesystem::remove_all(dir);
}
