/// @file
/// GPT-2's byte-level byte-pair encoding (BPE): text -> token ids -> text.
///
/// Encoding runs in two steps:
///
///   1. pre-tokenization cuts the text into pieces by GPT-2's regular expression
///      @verbatim
///      's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
///      @endverbatim
///      written out as a scanner (pretokenize() below): a contraction, or
///      a run of letters, of numbers or of other characters (each may take
///      one space in front), or whitespace. Letters and numbers (\\p{L},
///      \\p{N}) are Unicode's
///      general categories, which std::regex does not know: utf8proc (a
///      small C library Debian packages, with Unicode's tables and nothing
///      else) gives each code point's category.
///   2. each piece, as bytes, starts as one token per byte and is merged:
///      while some adjacent pair is in the merge list, the pair of lowest
///      rank (the earliest learned) becomes one token.
///
/// Every byte is a token, so any bytes encode, and decode(encode(x)) == x
/// for every x, invalid UTF-8 included (a byte that does not begin a valid
/// character is a piece of "other" on its own).
///
/// The files are GPT-2's own: encoder.json maps each token's text to its id,
/// the text being the token's bytes written one character per byte
/// (printable Latin-1 bytes as themselves, the others as U+0100 onwards, so
/// "Ġ" is a space); vocab.bpe lists the merges "a b", one per line, in rank
/// order (Hugging Face names them vocab.json and merges.txt).
/// "<|endoftext|>" (50256) is a token like any other in decode(), but
/// encode() reads text as text: the characters "<|endoftext|>" are encoded,
/// not turned into the special token (tiktoken's encode_ordinary).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace ember::train {

class BPETokenizer {
 public:
  /// GPT-2's encoder.json and vocab.bpe. Errors name the file and the line
  /// or token: a merge of tokens the vocabulary lacks, a byte without a
  /// token, an id used twice.
  static BPETokenizer from_files(const std::string& encoder_json, const std::string& vocab_bpe);
  /// dir/encoder.json + dir/vocab.bpe, or dir/vocab.json + dir/merges.txt.
  static BPETokenizer from_dir(const std::string& dir);
  /// The two files' contents (what encoder_json() and vocab_bpe() give);
  /// errors name `encoder_name` and `merges_name` as they would the files.
  static BPETokenizer from_strings(const std::string& encoder_json, const std::string& vocab_bpe,
                                   const std::string& encoder_name, const std::string& merges_name);
  /// From tokens' bytes (tokens[id]) and merges (pairs of ids, in rank
  /// order; each pair's bytes joined must be a token): what train_bpe gives.
  static BPETokenizer from_merges(const std::vector<std::string>& tokens,
                                  const std::vector<std::pair<int64_t, int64_t>>& merges);

  std::vector<int64_t> encode(std::string_view text) const;
  /// The bytes of the tokens, joined; an error naming an id outside the vocabulary.
  std::string decode(const std::vector<int64_t>& ids) const;
  /// One token's bytes.
  const std::string& token(int64_t id) const;
  int64_t vocab_size() const { return static_cast<int64_t>(tokens_.size()); }
  int64_t merge_count() const { return static_cast<int64_t>(merge_list_.size()); }
  /// The merges in rank order, as pairs of ids.
  const std::vector<std::pair<int64_t, int64_t>>& merges() const { return merge_list_; }

  /// Writes GPT-2's two files (dir/encoder.json, dir/vocab.bpe) for this
  /// vocabulary: from_dir(dir) reads back the same tokenizer.
  void save(const std::string& dir) const;
  /// The contents save() writes: encoder.json (token text -> id) and
  /// vocab.bpe (the merges in rank order).
  std::string encoder_json() const;
  std::string vocab_bpe() const;

 private:
  void add_merge(int64_t a, int64_t b, int64_t merged);
  void encode_piece(std::string_view piece, std::vector<int64_t>& out) const;

  std::vector<std::string> tokens_;               // id -> bytes
  std::vector<std::pair<int64_t, int64_t>> merge_list_;
  std::unordered_map<uint64_t, std::pair<int32_t, int32_t>> merges_;  // (a << 32 | b) -> (rank, merged id)
  int32_t byte_token_[256] = {};
};

/// GPT-2's pre-tokenization: the pieces of text (views into it), in order;
/// joined they are text.
std::vector<std::string_view> pretokenize(std::string_view text);

/// GPT-2's map from a byte to the character that stands for it in
/// encoder.json and vocab.bpe, as UTF-8 (byte 0x20, a space, is "Ġ").
std::string byte_to_unicode(uint8_t byte);

/// Learns a byte-level BPE of vocab_size tokens (256 bytes + merges) from
/// text: pre-tokenize it as GPT-2 does, count each distinct piece once with
/// its number of occurrences, then repeatedly merge the most frequent
/// adjacent pair (the pair first seen in the text on ties) into a new
/// token, until vocab_size tokens or no pair occurs twice. Deterministic.
/// Error if vocab_size < 256.
BPETokenizer train_bpe(std::string_view text, int64_t vocab_size);

}  // namespace ember::train
