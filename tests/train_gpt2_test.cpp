// GPT-2 checkpoints (train/gpt2.h) against PyTorch: a checkpoint of GPT-2's
// layout with random weights and what a PyTorch GPT-2 computes with it
// (tests/fixtures/gpt2_tiny, written by tests/fixtures/make_gpt2_fixture.py),
// and every way a file or config.json can fail to be a GPT-2 ember runs.
//
// The bound on the logits: both sides compute in float32 with the same
// operations in other orders (BLAS kernels, PyTorch's fused layer norm and
// softmax); over two layers of width 32..128 that moves a logit of size ~10
// by a few 1e-6. 1e-4 is tight enough to catch any transposed, swapped or
// misplaced tensor (those move logits by 0.1 and more).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include "ember.h"
#include "test_util.h"
#include "train/gpt2.h"
#include "train/safetensors.h"

using namespace ember;
using ember::test::expect_error;

namespace {

const std::string kDir = std::string(EMBER_FIXTURE_DIR) + "/gpt2_tiny";

Tensor expected(const std::string& name) {
  for (const auto& [n, t] : train::read_safetensors(kDir + "/expected.safetensors").tensors)
    if (n == name) return t;
  ADD_FAILURE() << "no " << name;
  return Tensor();
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void write_text(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

// A copy of the fixture in dir, with config.json's text edited by `edit` and
// the tensors by `tensors`.
void copy_fixture(const std::string& dir, const std::function<std::string(std::string)>& edit,
                  const std::function<void(train::NamedTensors&)>& tensors) {
  write_text(dir + "/config.json", edit(read_text(kDir + "/config.json")));
  train::SafetensorsContents c = train::read_safetensors(kDir + "/model.safetensors");
  tensors(c.tensors);
  train::write_safetensors(dir + "/model.safetensors", c.tensors, c.metadata);
}

std::string replace(std::string s, const std::string& from, const std::string& to) {
  const size_t at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) s.replace(at, from.size(), to);
  return s;
}

double max_gap(const Tensor& a, const Tensor& b) {
  std::vector<double> x = a.to_vector<double>(), y = b.to_vector<double>();
  double gap = 0;
  for (size_t i = 0; i < x.size(); ++i) gap = std::max(gap, std::abs(x[i] - y[i]));
  return gap;
}

}  // namespace

TEST(TrainGpt2, ConfigJsonGivesTheGPT) {
  nn::GPTConfig c = train::gpt2_config(kDir + "/config.json");
  EXPECT_EQ(c.vocab_size, 61);
  EXPECT_EQ(c.context_length, 32);
  EXPECT_EQ(c.dim, 32);
  EXPECT_EQ(c.heads, 4);
  EXPECT_EQ(c.layers, 2);
  EXPECT_TRUE(c.tie_weights);
  EXPECT_EQ(c.gelu, GeluApprox::Tanh);
  EXPECT_EQ(c.positional, nn::Positional::Learned);
  // the text form names the tanh GELU, and reads back
  EXPECT_NE(c.to_string().find(" gelu=tanh"), std::string::npos) << c.to_string();
  EXPECT_EQ(nn::GPTConfig::from_string(c.to_string()).gelu, GeluApprox::Tanh);
  EXPECT_EQ(nn::GPTConfig{}.to_string().find("gelu"), std::string::npos);  // the exact GELU: as before the option
}

// The logits of the PyTorch model, for a whole context of 32 tokens.
TEST(TrainGpt2, LogitsEqualPyTorchs) {
  std::unique_ptr<nn::GPT> model = train::load_gpt2(kDir);
  model->eval();
  NoGradGuard no_grad;
  Tensor want = expected("logits");
  Tensor got = model->forward(expected("ids"));
  ASSERT_EQ(got.shape(), want.shape());
  EXPECT_LE(max_gap(got, want), 1e-4);
  // and what the weights' layout alone would change: GPT-2's exact-GELU twin is off by far more
  nn::GPTConfig erf = model->config();
  erf.gelu = GeluApprox::None;
  nn::GPT twin(erf);
  twin.load_state_dict(model->state_dict());
  twin.eval();
  EXPECT_GT(max_gap(twin.forward(expected("ids")), want), 1e-3);
}

// The c_attn weight (D, 3D) splits into w_q, w_k, w_v, each the transpose of its columns.
TEST(TrainGpt2, ConvOneDWeightsAreTransposed) {
  std::unique_ptr<nn::GPT> model = train::load_gpt2(kDir);
  Tensor c_attn;
  for (const auto& [n, t] : train::read_safetensors(kDir + "/model.safetensors").tensors)
    if (n == "h.1.attn.c_attn.weight") c_attn = t;
  ASSERT_TRUE(c_attn.defined());
  EXPECT_EQ((*model->blocks)[1].attn->w_k->weight.to_vector<float>(),
            contiguous(transpose(narrow(c_attn, 1, 32, 32), 0, 1)).to_vector<float>());
  EXPECT_TRUE(model->head->is_tied());
}

// Greedy tokens after a 5-token prompt, with the cache and without it.
TEST(TrainGpt2, GreedyTokensEqualPyTorchs) {
  std::unique_ptr<nn::GPT> model = train::load_gpt2(kDir);
  std::vector<int64_t> want = expected("greedy").to_vector<int64_t>();
  ASSERT_EQ(want.size(), 25u);
  EXPECT_GT(expected("margin").item<float>(), 1e-3f);  // no near-tie for rounding to break
  std::vector<int64_t> prompt(want.begin(), want.begin() + 5);
  EXPECT_EQ(model->generate(prompt, 20, nn::SampleOptions{.temperature = 0}), want);
  EXPECT_EQ(model->generate(prompt, 20, nn::SampleOptions{.temperature = 0, .cache = false}), want);
}

// A state dict saved from GPT2LMHeadModel prefixes "transformer." and may
// hold the (tied) lm_head; an untied config takes the head from lm_head.
TEST(TrainGpt2, PrefixedAndUntiedFilesLoad) {
  test::TempDir dir("gpt2");
  copy_fixture(dir.path(), [](std::string s) { return s; },
               [](train::NamedTensors& ts) {
                 Tensor wte;
                 for (auto& [n, t] : ts) {
                   if (n == "wte.weight") wte = t;
                   n = "transformer." + n;
                 }
                 ts.emplace_back("lm_head.weight", wte);
               });
  NoGradGuard no_grad;
  std::unique_ptr<nn::GPT> prefixed = train::load_gpt2(dir.path());
  prefixed->eval();
  EXPECT_LE(max_gap(prefixed->forward(expected("ids")), expected("logits")), 1e-4);

  test::TempDir untied("gpt2");
  copy_fixture(untied.path(), [](std::string s) { return replace(s, "\"n_ctx\"", "\"tie_word_embeddings\": false, \"n_ctx\""); },
               [](train::NamedTensors& ts) {
                 Tensor wte;
                 for (auto& [n, t] : ts)
                   if (n == "wte.weight") wte = t;
                 ts.emplace_back("lm_head.weight", mul(wte, full({}, 2.0)));
               });
  std::unique_ptr<nn::GPT> model = train::load_gpt2(untied.path());
  EXPECT_FALSE(model->head->is_tied());
  EXPECT_EQ(model->head->weight.to_vector<float>(), mul(model->embed->token->weight, full({}, 2.0)).to_vector<float>());
}

TEST(TrainGpt2, ConfigsEmberCannotRunAreNamedErrors) {
  const std::vector<std::pair<std::pair<std::string, std::string>, std::vector<std::string>>> cases = {
      {{"\"layer_norm_epsilon\": 1e-05", "\"layer_norm_epsilon\": 1e-06"}, {"layer_norm_epsilon", "1e-06", "1e-5"}},
      {{"\"gelu_new\"", "\"relu\""}, {"activation_function", "relu"}},
      {{"\"n_inner\": null", "\"n_inner\": 100"}, {"n_inner 100", "128"}},
      {{"\"n_embd\": 32", "\"n_embd\": -32"}, {"n_embd", "positive integer", "-32"}},
      {{"\"n_embd\": 32", "\"dim\": 32"}, {"no \"n_embd\""}},
      {{"\"n_head\": 4", "\"n_head\": 5"}, {"n_head 5", "n_embd 32"}},
      {{"\"n_layer\"", "\"scale_attn_by_inverse_layer_idx\": true, \"n_layer\""}, {"scale_attn_by_inverse_layer_idx"}},
      {{"{", "["}, {"not a JSON object"}},
  };
  for (const auto& [edit, parts] : cases) {
    SCOPED_TRACE(edit.second);
    test::TempDir dir("gpt2");
    write_text(dir.file("config.json"), replace(read_text(kDir + "/config.json"), edit.first, edit.second));
    std::string msg = expect_error([&] { train::gpt2_config(dir.file("config.json")); }, {"load_gpt2"});
    for (const std::string& p : parts) EXPECT_NE(msg.find(p), std::string::npos) << msg << "\nlacks " << p;
  }
  expect_error([] { train::gpt2_config("/nonexistent/config.json"); }, {"load_gpt2", "cannot open", "/nonexistent"});
}

TEST(TrainGpt2, TensorsThatDoNotFitAreNamedErrors) {
  auto fails = [](const std::function<std::string(std::string)>& edit,
                  const std::function<void(train::NamedTensors&)>& tensors, std::initializer_list<std::string> parts) {
    test::TempDir dir("gpt2");
    copy_fixture(dir.path(), edit, tensors);
    expect_error([&] { train::load_gpt2(dir.path()); }, parts);
  };
  auto same = [](std::string s) { return s; };
  fails(same, [](train::NamedTensors& ts) { ts.emplace_back("h.2.ln_1.weight", zeros({32})); },
        {"load_gpt2", "\"h.2.ln_1.weight\" is not part of a GPT-2 of 2 layers"});
  fails(same, [](train::NamedTensors& ts) { std::erase_if(ts, [](auto& p) { return p.first == "h.1.mlp.c_fc.bias"; }); },
        {"load_gpt2", "no tensor \"h.1.mlp.c_fc.bias\""});
  fails(same,
        [](train::NamedTensors& ts) {
          for (auto& [n, t] : ts)
            if (n == "h.0.attn.c_attn.weight") t = contiguous(transpose(t, 0, 1));  // stored as a Linear's
        },
        {"load_gpt2", "\"h.0.attn.c_attn.weight\" has shape (96, 32)", "(32, 96)"});
  fails([](std::string s) { return replace(s, "\"vocab_size\": 61", "\"vocab_size\": 60"); }, [](train::NamedTensors&) {},
        {"load_gpt2", "\"wte.weight\" has shape (61, 32)", "(60, 32)"});
  fails([](std::string s) { return replace(s, "\"n_ctx\"", "\"tie_word_embeddings\": false, \"n_ctx\""); },
        [](train::NamedTensors&) {}, {"load_gpt2", "no tensor \"lm_head.weight\""});
  fails(same,
        [](train::NamedTensors& ts) {
          for (auto& [n, t] : ts)
            if (n == "ln_f.bias") t = zeros({32}, kInt64);
        },
        {"ln_f.bias", "int64"});
}
