// The tokenizer a GPT checkpoint records (train/tokenizer.h): characters or a
// BPE learned on the corpus, saved in the metadata and rebuilt by load_gpt to
// the same ids; a checkpoint without the key holds characters; a metadata
// entry that is missing, unknown or contradicts the model is a named error.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ember.h"
#include "test_util.h"

using namespace ember;
using ember::test::expect_error;
using ember::test::TempDir;

namespace {

const std::string& corpus() {
  static const std::string text = train::read_text_file(std::string(EMBER_SOURCE_DIR) + "/data/tinyshakespeare.txt.gz");
  return text;
}

nn::GPTConfig small_gpt(int64_t vocab) {
  nn::GPTConfig c;
  c.vocab_size = vocab;
  c.context_length = 16;
  c.dim = 16;
  c.heads = 2;
  c.layers = 1;
  c.seed = 5;
  return c;
}

}  // namespace

TEST(TrainTokenizer, ABpeCheckpointLoadsWithItsTokenizer) {
  const train::BPETokenizer bpe = train::train_bpe(corpus().substr(0, 60000), 300);
  ASSERT_EQ(bpe.vocab_size(), 300);
  const train::Tokenizer tok(bpe);
  EXPECT_TRUE(tok.is_bpe());
  EXPECT_EQ(tok.describe(), "a byte-level BPE of 300 tokens (44 merges)");
  nn::GPT model(small_gpt(300));
  model.eval();
  TempDir dir;
  train::save(model, dir.file("model.safetensors"), train::gpt_metadata(model.config(), tok));

  const train::LoadedGPT back = train::load_gpt(dir.file("model.safetensors"));
  ASSERT_TRUE(back.tokenizer.is_bpe());
  EXPECT_EQ(back.tokenizer.bpe()->merges(), bpe.merges());
  for (int64_t id = 0; id < 300; ++id) ASSERT_EQ(back.tokenizer.bpe()->token(id), bpe.token(id)) << id;
  const std::string text = corpus().substr(100000, 3000);  // text it was not learned on
  const std::vector<int64_t> ids = back.tokenizer.encode(text);
  EXPECT_EQ(ids, bpe.encode(text));
  EXPECT_LT(ids.size(), text.size() * 3 / 4);
  EXPECT_EQ(back.tokenizer.decode(ids), text);
  // the same model: the same logits, bit for bit
  NoGradGuard no_grad;
  const std::vector<int64_t> window(ids.begin(), ids.begin() + 16);
  Tensor x = tensor(window, {1, 16});
  back.model->eval();
  EXPECT_TRUE(equal_bits(model.forward(x), back.model->forward(x)));
}

TEST(TrainTokenizer, ACharacterCheckpointStaysCharacters) {
  const train::Tokenizer tok(train::CharTokenizer::from_text("to be or not"));
  EXPECT_EQ(tok.describe(), "a vocabulary of 7 characters");
  const train::Metadata m = train::gpt_metadata(small_gpt(7), tok);
  EXPECT_EQ(m.count(train::kTokenizerKey), 0u);  // as every checkpoint before BPE
  EXPECT_EQ(m.at(train::kVocabKey), " benort");
  const train::GPTInfo info = train::gpt_info(m, "m.safetensors");
  EXPECT_FALSE(info.tokenizer.is_bpe());
  EXPECT_EQ(info.tokenizer.encode("not to be"), tok.encode("not to be"));
  EXPECT_EQ(info.tokenizer.decode({6, 4, 0}), "to ");
}

TEST(TrainTokenizer, BadTokenizerMetadataIsANamedError) {
  const train::BPETokenizer bpe = train::train_bpe("aaabdaaabac", 300);  // 259 tokens
  const train::Metadata good = train::gpt_metadata(small_gpt(259), bpe);
  EXPECT_EQ(train::gpt_info(good, "m.safetensors").tokenizer.vocab_size(), 259);
  auto with = [&](const std::string& key, const std::string& value) {
    train::Metadata m = good;
    m[key] = value;
    return m;
  };
  expect_error([&] { train::gpt_info(with(train::kTokenizerKey, "wordpiece"), "m.safetensors"); }, "load_gpt",
               {"m.safetensors", "\"ember.tokenizer\" is \"wordpiece\"", "\"bpe\""});
  train::Metadata no_merges = good;
  no_merges.erase(train::kBpeMergesKey);
  expect_error([&] { train::gpt_info(no_merges, "m.safetensors"); }, "load_gpt",
               {"m.safetensors has no \"ember.bpe.merges\""});
  expect_error([&] { train::gpt_info(with(train::kBpeMergesKey, "#version: 0.2\na a\na zz\n"), "m.safetensors"); },
               "BPETokenizer", {"m.safetensors: ember.bpe.merges:3", "\"a zz\"", "does not have"});
  expect_error([&] { train::gpt_info(with(train::kBpeMergesKey, "#version: 0.2\na a\nx y\n"), "m.safetensors"); },
               "BPETokenizer", {"ember.bpe.merges: merge 1 joins tokens 120 and 121", "no token of their bytes joined"});
  expect_error([&] { train::gpt_info(with(train::kBpeEncoderKey, "{}"), "m.safetensors"); }, "BPETokenizer",
               {"m.safetensors: ember.bpe.encoder", "not a JSON object"});
  expect_error([&] { train::gpt_info(train::gpt_metadata(small_gpt(260), bpe), "m.safetensors"); }, "load_gpt",
               {"m.safetensors", "the tokenizer has 259 tokens but the model 260"});
  expect_error([&] { train::gpt_info(train::gpt_metadata(small_gpt(9), train::CharTokenizer::from_text("to be or not")),
                                     "m.safetensors"); },
               "load_gpt", {"the tokenizer has 7 characters but the model 9"});
}
