#include "train/tokenizer.h"

#include "base/error.h"

namespace ember::train {

Tokenizer::Tokenizer(CharTokenizer chars) : chars_(std::make_shared<const CharTokenizer>(std::move(chars))) {}
Tokenizer::Tokenizer(BPETokenizer bpe) : bpe_(std::make_shared<const BPETokenizer>(std::move(bpe))) {}

std::vector<int64_t> Tokenizer::encode(const std::string& text) const {
  return bpe_ ? bpe_->encode(text) : chars_->encode(text);
}

std::string Tokenizer::decode(const std::vector<int64_t>& ids) const {
  return bpe_ ? bpe_->decode(ids) : chars_->decode(ids);
}

int64_t Tokenizer::vocab_size() const { return bpe_ ? bpe_->vocab_size() : chars_->vocab_size(); }

std::string Tokenizer::describe() const {
  if (!bpe_) return "a vocabulary of " + std::to_string(chars_->vocab_size()) + " characters";
  return "a byte-level BPE of " + std::to_string(bpe_->vocab_size()) + " tokens (" +
         std::to_string(bpe_->merge_count()) + " merges)";
}

Metadata Tokenizer::metadata() const {
  if (!bpe_) return {{kVocabKey, chars_->vocab()}};
  return {{kTokenizerKey, "bpe"}, {kBpeEncoderKey, bpe_->encoder_json()}, {kBpeMergesKey, bpe_->vocab_bpe()}};
}

Tokenizer Tokenizer::from_metadata(const Metadata& metadata, const std::string& path) {
  auto get = [&](const char* key) {
    auto it = metadata.find(key);
    EMBER_CHECK(it != metadata.end(), "load_gpt",
                path << " has no \"" << key << "\" in its metadata: was it written by train_gpt?");
    return it->second;
  };
  auto kind = metadata.find(kTokenizerKey);
  if (kind == metadata.end()) return CharTokenizer::from_vocab(get(kVocabKey));
  EMBER_CHECK(kind->second == "bpe", "load_gpt",
              path << ": \"" << kTokenizerKey << "\" is \"" << kind->second << "\"; this ember reads \"bpe\" (or no key: characters)");
  return BPETokenizer::from_strings(get(kBpeEncoderKey), get(kBpeMergesKey), path + ": " + kBpeEncoderKey,
                                    path + ": " + kBpeMergesKey);
}

}  // namespace ember::train
