/// @file
/// The tokenizer a GPT of train_gpt was trained with: characters (data.h's
/// CharTokenizer, the attention lesson's) or a byte-level BPE learned on the
/// corpus (bpe.h). One type for both, so a checkpoint records which one and
/// loading rebuilds it, and sampling, resuming and the replicas of a
/// distributed run use the same ids.
///
/// In a checkpoint's metadata: characters are "ember.vocab" (the characters
/// in id order); a BPE is "ember.tokenizer" = "bpe" with "ember.bpe.encoder"
/// and "ember.bpe.merges", the contents of GPT-2's encoder.json and vocab.bpe.
/// A file without "ember.tokenizer" holds characters (as every checkpoint
/// before BPE did).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "train/bpe.h"
#include "train/data.h"
#include "train/safetensors.h"

namespace ember::train {

inline constexpr const char* kVocabKey = "ember.vocab";  // the characters in id order
inline constexpr const char* kTokenizerKey = "ember.tokenizer";
inline constexpr const char* kBpeEncoderKey = "ember.bpe.encoder";
inline constexpr const char* kBpeMergesKey = "ember.bpe.merges";

class Tokenizer {
 public:
  Tokenizer(CharTokenizer chars);  // NOLINT(google-explicit-constructor): a CharTokenizer is one
  Tokenizer(BPETokenizer bpe);     // NOLINT(google-explicit-constructor)

  /// Characters: an error naming a character outside the vocabulary. BPE:
  /// any bytes.
  std::vector<int64_t> encode(const std::string& text) const;
  /// The text of ids (a BPE's may end inside a UTF-8 character); an error
  /// naming an id outside the vocabulary.
  std::string decode(const std::vector<int64_t>& ids) const;
  int64_t vocab_size() const;
  bool is_bpe() const { return bpe_ != nullptr; }
  /// "characters" or "tokens": what one id stands for, in messages.
  const char* unit() const { return is_bpe() ? "tokens" : "characters"; }
  /// One line: "a vocabulary of 65 characters" or "a byte-level BPE of 512
  /// tokens (256 merges)".
  std::string describe() const;

  /// The metadata that rebuilds it (the keys above).
  Metadata metadata() const;
  /// The tokenizer a checkpoint's metadata records; errors name `path` and the key.
  static Tokenizer from_metadata(const Metadata& metadata, const std::string& path);

  const CharTokenizer* chars() const { return chars_.get(); }
  const BPETokenizer* bpe() const { return bpe_.get(); }

 private:
  std::shared_ptr<const CharTokenizer> chars_;  // exactly one of the two is set
  std::shared_ptr<const BPETokenizer> bpe_;
};

}  // namespace ember::train
