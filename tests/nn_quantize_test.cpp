// Weights in fewer bits (nn/quantize.h): a quantized Linear against the
// float32 product of the values it stands for, in both modes; what it
// registers and refuses; a quantized GPT's logits and greedy tokens against
// its reference path; the checkpoint (format 3, int8 tensors, at most 0.3 of
// float32's bytes) saved, refused by a float model and loaded back bit for
// bit.
#include <gtest/gtest.h>

#include <filesystem>

#include "ember.h"
#include "nn/quantize_model.h"
#include "test_util.h"
#include "train/checkpoint.h"
#include "train/data.h"

namespace {

using namespace ember;
using test::expect_error;

double max_abs_diff(const Tensor& a, const Tensor& b) {
  return max(abs(sub(a.to(kFloat64), b.to(kFloat64)))).item<double>();
}

TEST(NnQuantize, ALinearKeepsItsNamesAsInt8BuffersAndMatchesItsDequantizedProduct) {
  Generator gen(3);
  nn::Linear fc(100, 40, {.generator = &gen});
  fc.quantize();
  EXPECT_EQ(fc.named_parameters().size(), 1u);  // the bias
  const auto buffers = fc.named_buffers();
  ASSERT_EQ(buffers.size(), 2u);
  EXPECT_EQ(buffers[0].first, "weight");
  EXPECT_EQ(buffers[0].second.dtype(), kInt8);
  EXPECT_EQ(buffers[0].second.shape(), (Shape{40, 100}));
  EXPECT_EQ(buffers[1].first, "weight_scale");
  EXPECT_EQ(buffers[1].second.shape(), (Shape{40, 4}));  // ceil(100 / 32) groups
  EXPECT_EQ(fc.to_string(), "Linear(in_features=100, out_features=40, bias=true, int8 group=32)");

  NoGradGuard no_grad;
  Tensor x = randn({3, 5, 100}, gen);
  fc.quantized->reference = true;
  const Tensor ref = fc.forward(x);
  fc.quantized->reference = false;
  // float32 activations: the same weights, only the order of the float32 sums differs
  fc.quantized->set_mode(gemm::Int8Mode::FloatActivations);
  const Tensor yf = fc.forward(x);
  EXPECT_EQ(yf.shape(), (Shape{3, 5, 40}));
  EXPECT_LT(max_abs_diff(yf, ref), 1e-5);
  // int8 activations: the activations' rounding too, a few thousandths of the outputs' size
  fc.quantized->set_mode(gemm::Int8Mode::Int8Activations);
  const Tensor y8 = fc.forward(x);
  const double size = max(abs(ref)).item<double>();
  EXPECT_LT(max_abs_diff(y8, ref), 0.01 * size);
  EXPECT_GT(max_abs_diff(y8, ref), 0.0);
}

TEST(NnQuantize, BadInputIsRefusedByNameAndChangesNothing) {
  Generator gen(4);
  nn::Linear fc(64, 8, {.generator = &gen});
  expect_error([&] { fc.quantize({.group = 48}); }, "Linear", {"group size must be 32, 64, 128 or 256, got 48"});
  EXPECT_EQ(fc.named_parameters().size(), 2u);  // nothing changed
  fc.quantize({.group = 64});
  expect_error([&] { fc.quantize(); }, "Linear", {"quantized already", "int8 group=64"});
  Tensor x = randn({2, 64}, gen).requires_grad_(true);
  expect_error([&] { (void)fc.forward(x); }, "Linear", {"int8 group=64", "no gradient flows", "NoGradGuard"});
  NoGradGuard no_grad;
  expect_error([&] { (void)fc.forward(randn({2, 63}, gen)); }, "Linear", {"(2, 63)", "last dim of 64"});
  expect_error([&] { (void)fc.forward(randn({2, 64}, gen, kFloat64)); }, "Linear", {"float32 inputs", "float64"});
  nn::Linear bad(4, 2, {.generator = &gen});
  {
    NoGradGuard ng;
    bad.weight.data_ptr<float>()[3] = NAN;
  }
  expect_error([&] { bad.quantize(); }, "Linear", {"nan", "element 3", "no quantized form"});
  EXPECT_EQ(nn::QuantizeOptions::from_string("int8 group=128").group, 128);
  expect_error([] { (void)nn::QuantizeOptions::from_string("int4 group=32"); }, "quantize", {"\"int4 group=32\""});
  expect_error([] { (void)nn::QuantizeOptions::from_string("int8 group=100"); }, "quantize", {"\"int8 group=100\""});
}

nn::GPTConfig gpt_config() {
  nn::GPTConfig c;
  c.vocab_size = 256;
  c.context_length = 64;
  c.dim = 256;
  c.heads = 4;
  c.layers = 2;
  c.seed = 11;
  return c;
}

TEST(NnQuantize, AQuantizedGptDecodesWithTheCacheAsWithoutAndNearItsReference) {
  nn::GPTConfig c = gpt_config();
  c.dim = 64, c.vocab_size = 65;
  nn::GPT model(c);
  model.eval();
  nn::quantize(model);
  EXPECT_EQ(nn::quantization_of(model), "int8 group=32");
  EXPECT_EQ(nn::quantized_weights(model).size(), 2u * 6 + 2);  // the head shares the token table
  EXPECT_EQ(model.head->quantized, model.embed->token->quantized);
  NoGradGuard no_grad;
  const std::vector<int64_t> prompt = {1, 5, 9, 2};
  Tensor ids = tensor(std::vector<int64_t>{1, 5, 9, 2, 7, 3}, {1, 6});
  nn::set_reference(model, true);
  const Tensor ref = model.forward(ids);
  nn::set_reference(model, false);
  const Tensor q = model.forward(ids);
  EXPECT_LT(max_abs_diff(q, ref), 0.02 * max(abs(ref)).item<double>());
  // the cache gives the rows of the whole forward
  nn::KVCache cache = model.make_cache();
  const Tensor first = model.forward(ids.narrow(1, 0, 4), cache);
  const Tensor rest = model.forward(ids.narrow(1, 4, 2), cache);
  EXPECT_LT(max_abs_diff(cat({first, rest}, 1), q), 1e-4);
  const auto cached = model.generate(prompt, 20, {.temperature = 0});
  const auto uncached = model.generate(prompt, 20, {.temperature = 0, .cache = false});
  EXPECT_EQ(cached, uncached);
}

TEST(NnQuantize, TheCheckpointIsFormat3AtMostAThirdOfFloat32sBytesAndLoadsBackBitForBit) {
  test::TempDir dir;
  std::string text;
  for (int i = 32; i < 127; ++i) text += static_cast<char>(i);
  const train::Tokenizer tok(train::CharTokenizer::from_text(text));
  nn::GPTConfig c = gpt_config();
  c.vocab_size = 95;
  nn::GPT model(c);
  model.eval();
  const std::string f32 = dir.file("f32.safetensors"), i8 = dir.file("int8.safetensors");
  train::save(model, f32, train::gpt_metadata(c, tok));
  nn::quantize(model);
  train::save(model, i8, train::gpt_metadata(c, tok));
  const double ratio = double(std::filesystem::file_size(i8)) / double(std::filesystem::file_size(f32));
  EXPECT_LT(ratio, 0.30);
  EXPECT_GT(ratio, 0.25);
  const train::Metadata meta = train::read_safetensors_metadata(i8);
  EXPECT_EQ(meta.at("ember.format"), "3");
  EXPECT_EQ(meta.at("ember.quantization"), "int8 group=32");
  EXPECT_EQ(train::read_safetensors_metadata(f32).at("ember.format"), "2");

  NoGradGuard no_grad;
  Tensor ids = tensor(std::vector<int64_t>{3, 1, 4, 1, 5, 9, 2, 6}, {1, 8});
  const Tensor before = model.forward(ids);
  const train::LoadedGPT back = train::load_gpt(i8);
  EXPECT_EQ(nn::quantization_of(*back.model), "int8 group=32");
  back.model->eval();
  const Tensor after = back.model->forward(ids);
  EXPECT_EQ(before.to_vector<float>(), after.to_vector<float>());
  // a float model refuses the int8 tensors by name, and is left as it was
  nn::GPT plain(c);
  const Tensor plain_before = plain.forward(ids);
  expect_error([&] { (void)train::load(plain, i8); }, "load",
               {"int8.safetensors holds weights quantized as int8 group=32 but the model's are float", "nn::quantize"});
  // and a quantized model refuses a float checkpoint
  expect_error([&] { (void)train::load(*back.model, f32); }, "load",
               {"f32.safetensors holds float weights but the model's are quantized as int8 group=32"});
  EXPECT_EQ(plain.forward(ids).to_vector<float>(), plain_before.to_vector<float>());
}

TEST(NnQuantize, AWeightRefusedLeavesTheWholeModelAsItWas) {
  nn::GPTConfig c = gpt_config();
  c.dim = 64, c.vocab_size = 65;
  nn::GPT model(c);
  {
    NoGradGuard no_grad;
    (*model.blocks)[1].fc2->weight.data_ptr<float>()[7] = NAN;  // the last layer quantize reaches
  }
  const size_t params = model.named_parameters().size();
  expect_error([&] { nn::quantize(model); }, "Linear", {"nan", "element 7", "no quantized form"});
  EXPECT_EQ(model.named_parameters().size(), params);
  EXPECT_EQ(nn::quantization_of(model), "");
  EXPECT_TRUE(nn::quantized_weights(model).empty());
}

TEST(NnQuantize, UntiedAndBFloat16ModelsSaveAndLoadBackBitForBit) {
  test::TempDir dir;
  std::string text;
  for (int i = 32; i < 127; ++i) text += static_cast<char>(i);
  const train::Tokenizer tok(train::CharTokenizer::from_text(text));
  for (const char* form : {"untied int8 group=64", "bfloat16"}) {
    SCOPED_TRACE(form);
    nn::GPTConfig c = gpt_config();
    c.vocab_size = 95, c.dim = 64, c.layers = 1;
    const bool bf16 = std::string(form) == "bfloat16";
    c.tie_weights = bf16;
    nn::GPT model(c);
    model.eval();
    nn::QuantizeOptions o = bf16 ? nn::QuantizeOptions::from_string("bfloat16") : nn::QuantizeOptions::from_string("int8 group=64");
    nn::quantize(model, o);
    EXPECT_EQ(nn::quantized_weights(model).size(), 6u + 2);
    const std::string path = dir.file(bf16 ? "bf16.safetensors" : "untied.safetensors");
    train::save(model, path, train::gpt_metadata(c, tok));
    EXPECT_EQ(train::read_safetensors_metadata(path).at("ember.quantization"), o.to_string());
    NoGradGuard no_grad;
    Tensor ids = tensor(std::vector<int64_t>{3, 1, 4, 1, 5}, {1, 5});
    const Tensor before = model.forward(ids);
    const train::LoadedGPT back = train::load_gpt(path);
    back.model->eval();
    EXPECT_EQ(before.to_vector<float>(), back.model->forward(ids).to_vector<float>());
  }
}

TEST(NnQuantize, LoadingRefusesMinus128AndFollowsTheBuffersAfterwards) {
  test::TempDir dir;
  Generator gen(8);
  nn::Linear a(64, 16, {.generator = &gen}), b(64, 16, {.generator = &gen});
  a.quantize();
  b.quantize();
  train::save(a, dir.file("a.safetensors"));
  // b takes a's values: its float32 weight follows at once
  train::load(b, dir.file("a.safetensors"));
  EXPECT_EQ(b.weight.to_vector<float>(), a.weight.to_vector<float>());
  // a file holding -128 is refused by name and changes nothing
  train::SafetensorsContents f = train::read_safetensors(dir.file("a.safetensors"));
  for (auto& [name, t] : f.tensors)
    if (name == "weight") t.data_ptr<int8_t>()[5] = -128;
  f.metadata.erase("ember.crc32");
  train::write_safetensors(dir.file("bad.safetensors"), f.tensors, f.metadata);
  const std::vector<float> kept = b.weight.to_vector<float>();
  expect_error([&] { (void)train::load(b, dir.file("bad.safetensors")); }, "load",
               {"bad.safetensors: tensor \"weight\" holds -128 at element 5"});
  EXPECT_EQ(b.weight.to_vector<float>(), kept);
  // a quantized model refuses a float checkpoint and is left as it was
  nn::Linear plain(64, 16, {.generator = &gen});
  train::save(plain, dir.file("plain.safetensors"));
  expect_error([&] { (void)train::load(b, dir.file("plain.safetensors")); }, "load", {"holds float weights"});
  EXPECT_EQ(b.weight.to_vector<float>(), kept);
}

}  // namespace
