#include "train/data.h"

#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <set>

#include "base/io.h"
#include "tensor/factory.h"

namespace ember::train {

std::string read_text_file(const std::string& path) {
  // A regular file only: a directory, a FIFO or /dev/zero is an error, not
  // a hang or a read until memory runs out.
  RegularFile file;
  open_regular_file(path, "read_text_file", INT64_MAX, file);
  // zlib reads plain files unchanged and decompresses gzip ones (bounded:
  // a small .gz can expand to anything).
  gzFile f = gzdopen(::dup(file.fd), "rb");
  EMBER_CHECK(f != nullptr, "read_text_file", "cannot open " << path);
  std::string out;
  char buf[1 << 16];
  int n;
  while ((n = gzread(f, buf, sizeof buf)) > 0) {
    if (out.size() + static_cast<size_t>(n) > kMaxTextBytes) {
      gzclose(f);
      EMBER_FAIL("read_text_file", path << ": the text is larger than the limit of " << kMaxTextBytes << " bytes");
    }
    out.append(buf, static_cast<size_t>(n));
  }
  int err = 0;
  std::string msg = n < 0 ? gzerror(f, &err) : "";
  gzclose(f);
  EMBER_CHECK(n == 0, "read_text_file", "error reading " << path << ": " << msg);
  return out;
}

std::string utf8_encode(char32_t c) {
  std::string out;
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += static_cast<char>(0xC0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    out += static_cast<char>(0xE0 | (c >> 12));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (c >> 18));
    out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  }
  return out;
}

std::vector<char32_t> utf8_decode(const std::string& s, const char* op) {
  std::vector<char32_t> out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    unsigned char b = static_cast<unsigned char>(s[i]);
    int len = b < 0x80 ? 1 : (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xE ? 3 : (b >> 3) == 0x1E ? 4 : 0;
    EMBER_CHECK(len > 0 && i + len <= s.size(), op, "invalid UTF-8 byte 0x" << std::hex << static_cast<int>(b) << std::dec
                                                                           << " at offset " << i);
    char32_t c = len == 1 ? b : (b & (0x7F >> len));
    for (int k = 1; k < len; ++k) {
      unsigned char cb = static_cast<unsigned char>(s[i + k]);
      EMBER_CHECK((cb & 0xC0) == 0x80, op, "invalid UTF-8 continuation byte at offset " << (i + k));
      c = (c << 6) | (cb & 0x3F);
    }
    const char32_t min_for_len[] = {0, 0, 0x80, 0x800, 0x10000};
    EMBER_CHECK(c >= min_for_len[len] && c <= 0x10FFFF && !(c >= 0xD800 && c <= 0xDFFF), op,
                "invalid UTF-8 sequence (overlong or out of range) at offset " << i);
    out.push_back(c);
    i += len;
  }
  return out;
}

CharTokenizer CharTokenizer::from_text(const std::string& text) {
  EMBER_CHECK(!text.empty(), "CharTokenizer", "the text is empty: there is nothing to build a vocabulary from");
  std::vector<char32_t> cps = utf8_decode(text, "CharTokenizer");
  std::set<char32_t> uniq(cps.begin(), cps.end());
  CharTokenizer t;
  t.chars_.assign(uniq.begin(), uniq.end());
  return t;
}

CharTokenizer CharTokenizer::from_vocab(const std::string& vocab_utf8) {
  CharTokenizer t;
  t.chars_ = utf8_decode(vocab_utf8, "CharTokenizer");
  EMBER_CHECK(!t.chars_.empty(), "CharTokenizer", "the vocabulary is empty");
  EMBER_CHECK(std::is_sorted(t.chars_.begin(), t.chars_.end()) &&
                  std::adjacent_find(t.chars_.begin(), t.chars_.end()) == t.chars_.end(),
              "CharTokenizer", "the vocabulary must list distinct characters in increasing order");
  return t;
}

std::vector<int64_t> CharTokenizer::encode(const std::string& text) const {
  std::vector<char32_t> cps = utf8_decode(text, "CharTokenizer::encode");
  std::vector<int64_t> ids;
  ids.reserve(cps.size());
  for (size_t i = 0; i < cps.size(); ++i) {
    auto it = std::lower_bound(chars_.begin(), chars_.end(), cps[i]);
    EMBER_CHECK(it != chars_.end() && *it == cps[i], "CharTokenizer::encode",
                "character '" << utf8_encode(cps[i]) << "' (U+" << std::hex << static_cast<uint32_t>(cps[i]) << std::dec
                              << ") at character " << i << " is not in the vocabulary of " << chars_.size()
                              << " characters");
    ids.push_back(it - chars_.begin());
  }
  return ids;
}

std::string CharTokenizer::decode(const std::vector<int64_t>& ids) const {
  std::string out;
  for (size_t i = 0; i < ids.size(); ++i) {
    EMBER_CHECK(ids[i] >= 0 && ids[i] < vocab_size(), "CharTokenizer::decode",
                "id " << ids[i] << " at [" << i << "] is outside the vocabulary [0, " << vocab_size() << ")");
    out += utf8_encode(chars_[ids[i]]);
  }
  return out;
}

std::string CharTokenizer::vocab() const {
  std::string out;
  for (char32_t c : chars_) out += utf8_encode(c);
  return out;
}

BatchSampler::BatchSampler(std::vector<int64_t> tokens, int64_t batch, int64_t context, double val_fraction, uint64_t seed)
    : tokens_(std::move(tokens)), batch_(batch), context_(context), gen_(seed) {
  EMBER_CHECK(batch > 0 && context > 0, "BatchSampler", "batch " << batch << " and context " << context << " must be positive");
  EMBER_CHECK(val_fraction >= 0 && val_fraction < 1, "BatchSampler", "val_fraction must be in [0, 1), got " << val_fraction);
  const int64_t n = static_cast<int64_t>(tokens_.size());
  split_ = n - static_cast<int64_t>(static_cast<double>(n) * val_fraction);
  // A window is context + 1 tokens (counted unsigned: a context of
  // INT64_MAX would overflow int64).
  const uint64_t window = static_cast<uint64_t>(std::max<int64_t>(context, 0)) + 1;
  EMBER_CHECK(split_ > context, "BatchSampler",
              "the training part has " << split_ << " tokens; a window needs context + 1 = " << window);
  EMBER_CHECK(val_fraction == 0 || n - split_ > context, "BatchSampler",
              "the validation part has " << n - split_ << " tokens; a window needs context + 1 = " << window);
}

std::pair<Tensor, Tensor> BatchSampler::sample(bool validation) { return sample(validation, gen_); }

std::pair<Tensor, Tensor> BatchSampler::sample(bool validation, Generator& gen) { return sample(validation, gen, {}); }

std::pair<Tensor, Tensor> BatchSampler::sample(bool validation, Generator& gen, Shard shard) {
  EMBER_CHECK(!validation || val_size() > context_, "BatchSampler", "there is no validation split");
  EMBER_CHECK(shard.count > 0 && shard.index >= 0 && shard.index < shard.count && batch_ % shard.count == 0,
              "BatchSampler", "shard " << shard.index << " of " << shard.count << " of a batch of " << batch_
                                       << ": the batch must split into count equal shards, 0 <= index < count");
  const int64_t lo = validation ? split_ : 0, hi = validation ? static_cast<int64_t>(tokens_.size()) : split_;
  const int64_t rows = batch_ / shard.count, first = shard.index * rows;
  Tensor x = empty({rows, context_}, kInt64), y = empty({rows, context_}, kInt64);
  int64_t *px = x.data_ptr<int64_t>(), *py = y.data_ptr<int64_t>();
  for (int64_t b = 0; b < batch_; ++b) {
    int64_t start = lo + static_cast<int64_t>(gen.next_below(static_cast<uint64_t>(hi - lo - context_)));
    if (b < first || b >= first + rows) continue;  // another process's row
    const int64_t r = b - first;
    for (int64_t t = 0; t < context_; ++t) {
      px[r * context_ + t] = tokens_[start + t];
      py[r * context_ + t] = tokens_[start + t + 1];
    }
  }
  return {x, y};
}

}  // namespace ember::train
