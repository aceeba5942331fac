/// @file
/// Data for character-level language modelling: a tokenizer whose vocabulary
/// is the set of characters (Unicode code points) of a text, and a sampler of
/// random (input, target) windows, target = input shifted by one.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tensor/random.h"
#include "tensor/tensor.h"

namespace ember::train {

class CharTokenizer {
 public:
  /// Vocabulary: the distinct code points of text, sorted. Errors for empty or
  /// invalid UTF-8 text (naming the byte offset).
  static CharTokenizer from_text(const std::string& text);
  /// From a saved vocabulary (the UTF-8 string of all characters in id order).
  static CharTokenizer from_vocab(const std::string& vocab_utf8);

  std::vector<int64_t> encode(const std::string& text) const;  // error naming an unknown character and its offset
  std::string decode(const std::vector<int64_t>& ids) const;
  int64_t vocab_size() const { return static_cast<int64_t>(chars_.size()); }
  std::string vocab() const;  // all characters in id order, UTF-8

 private:
  std::vector<char32_t> chars_;
};

/// Which rows of a batch a process takes when several share it (data
/// parallelism): rows [index * batch / count, (index + 1) * batch / count).
struct Shard {
  int64_t index = 0, count = 1;
};

/// Splits a token stream into train (first 1 - val_fraction) and validation
/// parts and draws batches of random windows from either, with its own seeded
/// generator (whose state can be saved and restored to resume exactly).
class BatchSampler {
 public:
  BatchSampler(std::vector<int64_t> tokens, int64_t batch, int64_t context, double val_fraction, uint64_t seed);
  /// x, y: (batch, context) int64, y[b, t] = the token after x[b, t].
  std::pair<Tensor, Tensor> sample(bool validation = false);
  /// The same with another generator (e.g. a fixed one for validation batches
  /// that are identical at every evaluation).
  std::pair<Tensor, Tensor> sample(bool validation, Generator& gen);
  /// Only the shard's rows of the batch, (batch / shard.count, context): the
  /// windows of the whole batch are drawn (the generator advances as for the
  /// whole batch), so the shards of all processes together are the batch one
  /// process would draw. batch must be a multiple of shard.count.
  std::pair<Tensor, Tensor> sample(bool validation, Generator& gen, Shard shard);
  Generator& generator() { return gen_; }
  int64_t train_size() const { return split_; }
  int64_t val_size() const { return static_cast<int64_t>(tokens_.size()) - split_; }

 private:
  std::vector<int64_t> tokens_;
  int64_t batch_, context_, split_;
  Generator gen_;
};

/// The largest text read_text_file returns (decompressed): 1 GiB.
inline constexpr size_t kMaxTextBytes = size_t{1} << 30;
/// The whole file as bytes; gzip-compressed files (.gz) are decompressed.
/// Only a regular file is read (a directory, FIFO or device is an error).
/// Errors name the path.
std::string read_text_file(const std::string& path);

/// The UTF-8 encoding of one code point; decoding with validation.
std::string utf8_encode(char32_t c);
std::vector<char32_t> utf8_decode(const std::string& s, const char* op);

}  // namespace ember::train
