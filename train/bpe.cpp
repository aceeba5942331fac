#include "train/bpe.h"

#include <utf8proc.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <queue>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/error.h"
#include "base/io.h"

namespace ember::train {

namespace {

constexpr const char* kOp = "BPETokenizer";

// ---- characters: what GPT-2's pattern asks of each ----

enum class Kind : uint8_t { Letter, Number, Space, Other };

// Unicode's White_Space property (what \s means in GPT-2's regex module and
// in tiktoken's Rust regex); it is a property, not a general category.
bool is_white_space(int32_t c) {
  return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

Kind kind_of(int32_t c) {
  if (c < 0) return Kind::Other;  // a byte that does not begin a valid character
  if (is_white_space(c)) return Kind::Space;
  switch (utf8proc_category(c)) {
    case UTF8PROC_CATEGORY_LU:
    case UTF8PROC_CATEGORY_LL:
    case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_LO: return Kind::Letter;
    case UTF8PROC_CATEGORY_ND:
    case UTF8PROC_CATEGORY_NL:
    case UTF8PROC_CATEGORY_NO: return Kind::Number;
    default: return Kind::Other;
  }
}

// The kinds of the 128 ASCII characters, looked up without utf8proc.
struct AsciiKinds {
  Kind k[128];
  AsciiKinds() {
    for (int c = 0; c < 128; ++c) k[c] = kind_of(c);
  }
};
const AsciiKinds kAscii;

// The character at text[i]: its kind and its length in bytes (1 for a byte
// that does not begin valid UTF-8).
struct Char {
  Kind kind;
  int32_t bytes;
};
Char char_at(std::string_view text, size_t i) {
  const auto b = static_cast<unsigned char>(text[i]);
  if (b < 0x80) return {kAscii.k[b], 1};
  utf8proc_int32_t c = -1;
  const utf8proc_ssize_t n = utf8proc_iterate(reinterpret_cast<const utf8proc_uint8_t*>(text.data() + i),
                                              static_cast<utf8proc_ssize_t>(text.size() - i), &c);
  if (n <= 0) return {Kind::Other, 1};
  return {kind_of(c), static_cast<int32_t>(n)};
}

// The end of the run of characters of kind k that starts at i.
size_t run_end(std::string_view text, size_t i, Kind k) {
  while (i < text.size()) {
    Char c = char_at(text, i);
    if (c.kind != k) break;
    i += static_cast<size_t>(c.bytes);
  }
  return i;
}

// The length of a contraction at text[i] ('s 't 'm 'd 're 've 'll), or 0.
size_t contraction(std::string_view text, size_t i) {
  if (text[i] != '\'' || i + 1 >= text.size()) return 0;
  const char a = text[i + 1];
  if (a == 's' || a == 't' || a == 'm' || a == 'd') return 2;
  if (i + 2 < text.size()) {
    const char b = text[i + 2];
    if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return 3;
  }
  return 0;
}

// ---- GPT-2's byte <-> character map ----

// The bytes that stand for themselves: '!'..'~', '¡'..'¬', '®'..'ÿ'.
bool printable(int b) { return (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF); }

// byte -> code point, and code point -> byte (-1 for a code point no byte maps to)
struct ByteMap {
  int32_t to_cp[256];
  std::vector<int16_t> to_byte;
  ByteMap() : to_byte(512, -1) {
    int32_t next = 256;
    for (int b = 0; b < 256; ++b) {
      to_cp[b] = printable(b) ? b : next++;
      to_byte[static_cast<size_t>(to_cp[b])] = static_cast<int16_t>(b);
    }
  }
};
const ByteMap kBytes;

std::string utf8(int32_t cp) {
  utf8proc_uint8_t buf[4];
  const utf8proc_ssize_t n = utf8proc_encode_char(cp, buf);
  return std::string(reinterpret_cast<const char*>(buf), static_cast<size_t>(n));
}

// A token's text in GPT-2's files -> its bytes; an error naming it if a
// character stands for no byte.
std::string token_bytes_of(const std::string& text, const std::string& path) {
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    utf8proc_int32_t c = -1;
    const utf8proc_ssize_t n = utf8proc_iterate(reinterpret_cast<const utf8proc_uint8_t*>(text.data() + i),
                                                static_cast<utf8proc_ssize_t>(text.size() - i), &c);
    EMBER_CHECK(n > 0 && c >= 0 && c < 512 && kBytes.to_byte[static_cast<size_t>(c)] >= 0, kOp,
                path << ": token \"" << text << "\" has a character that stands for no byte (at byte " << i << ")");
    out.push_back(static_cast<char>(kBytes.to_byte[static_cast<size_t>(c)]));
    i += static_cast<size_t>(n);
  }
  return out;
}

std::string file_text(const std::string& path) {
  RegularFile f;
  open_regular_file(path, kOp, int64_t{1} << 30, f);
  std::string text;
  read_exactly(f, f.size, text, path, kOp);
  return text;
}

uint64_t pair_key(int64_t a, int64_t b) { return (static_cast<uint64_t>(a) << 32) | static_cast<uint64_t>(b); }

}  // namespace

std::string byte_to_unicode(uint8_t byte) { return utf8(kBytes.to_cp[byte]); }

// ---- pre-tokenization ----

std::vector<std::string_view> pretokenize(std::string_view text) {
  std::vector<std::string_view> pieces;
  const size_t n = text.size();
  size_t i = 0;
  while (i < n) {
    size_t end = contraction(text, i);
    if (end) {
      end += i;
    } else {
      // One space may lead a run of letters, numbers or other characters.
      const size_t j = (text[i] == ' ' && i + 1 < n) ? i + 1 : i;
      const Char c = char_at(text, j);
      if (c.kind != Kind::Space) {
        end = run_end(text, j, c.kind);
      } else {
        // Whitespace (i itself, as text[j] is whitespace): \s+(?!\S) takes the
        // run but its last character when a non-space follows, and \s+ takes a
        // run of one character then.
        size_t last = i;  // where the run's last character starts
        end = i;
        while (end < n) {
          const Char s = char_at(text, end);
          if (s.kind != Kind::Space) break;
          last = end;
          end += static_cast<size_t>(s.bytes);
        }
        if (end < n && last > i) end = last;
      }
    }
    pieces.push_back(text.substr(i, end - i));
    i = end;
  }
  return pieces;
}

// ---- the tokenizer ----

void BPETokenizer::add_merge(int64_t a, int64_t b, int64_t merged) {
  const auto rank = static_cast<int32_t>(merge_list_.size());
  EMBER_CHECK(merges_.emplace(pair_key(a, b), std::make_pair(rank, static_cast<int32_t>(merged))).second, kOp,
              "the merge of tokens " << a << " and " << b << " is listed twice");
  merge_list_.emplace_back(a, b);
}

BPETokenizer BPETokenizer::from_merges(const std::vector<std::string>& tokens,
                                       const std::vector<std::pair<int64_t, int64_t>>& merges) {
  BPETokenizer t;
  EMBER_CHECK(tokens.size() < (size_t{1} << 31), kOp, tokens.size() << " tokens are too many");
  t.tokens_ = tokens;
  std::unordered_map<std::string, int64_t> ids;
  for (size_t i = 0; i < tokens.size(); ++i) ids.emplace(tokens[i], static_cast<int64_t>(i));
  for (int b = 0; b < 256; ++b) {
    auto it = ids.find(std::string(1, static_cast<char>(b)));
    EMBER_CHECK(it != ids.end(), kOp, "byte " << b << " has no token: every byte needs one");
    t.byte_token_[b] = static_cast<int32_t>(it->second);
  }
  const auto V = static_cast<int64_t>(tokens.size());
  for (size_t r = 0; r < merges.size(); ++r) {
    const auto [a, b] = merges[r];
    EMBER_CHECK(a >= 0 && a < V && b >= 0 && b < V, kOp,
                "merge " << r << " joins tokens " << a << " and " << b << ", outside the vocabulary [0, " << V << ")");
    auto it = ids.find(tokens[static_cast<size_t>(a)] + tokens[static_cast<size_t>(b)]);
    EMBER_CHECK(it != ids.end(), kOp, "merge " << r << " joins tokens " << a << " and " << b
                                               << ", but the vocabulary has no token of their bytes joined");
    t.add_merge(a, b, it->second);
  }
  return t;
}

BPETokenizer BPETokenizer::from_files(const std::string& encoder_json, const std::string& vocab_bpe) {
  return from_strings(file_text(encoder_json), file_text(vocab_bpe), encoder_json, vocab_bpe);
}

BPETokenizer BPETokenizer::from_strings(const std::string& encoder_text, const std::string& merges_text,
                                        const std::string& encoder_json, const std::string& vocab_bpe) {
  nlohmann::json enc = nlohmann::json::parse(encoder_text, nullptr, /*allow_exceptions=*/false);
  EMBER_CHECK(enc.is_object() && !enc.empty(), kOp, encoder_json << ": not a JSON object of token -> id");
  std::vector<std::string> tokens(enc.size());
  std::vector<bool> seen(enc.size(), false);
  std::unordered_map<std::string, int64_t> by_text;
  for (auto it = enc.begin(); it != enc.end(); ++it) {
    EMBER_CHECK(it.value().is_number_integer(), kOp, encoder_json << ": the id of \"" << it.key() << "\" is not an integer");
    const auto id = it.value().get<int64_t>();
    EMBER_CHECK(id >= 0 && id < static_cast<int64_t>(tokens.size()) && !seen[static_cast<size_t>(id)], kOp,
                encoder_json << ": id " << id << " of \"" << it.key() << "\" is used twice or outside [0, "
                             << tokens.size() << ")");
    seen[static_cast<size_t>(id)] = true;
    tokens[static_cast<size_t>(id)] = token_bytes_of(it.key(), encoder_json);
    by_text.emplace(it.key(), id);
  }
  std::vector<std::pair<int64_t, int64_t>> merges;
  std::istringstream lines(merges_text);
  std::string line;
  for (int64_t no = 1; std::getline(lines, line); ++no) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || (no == 1 && line.rfind("#version", 0) == 0)) continue;
    const size_t sp = line.find(' ');
    EMBER_CHECK(sp != std::string::npos && line.find(' ', sp + 1) == std::string::npos, kOp,
                vocab_bpe << ":" << no << ": a merge is two tokens and one space, got \"" << line << "\"");
    auto a = by_text.find(line.substr(0, sp)), b = by_text.find(line.substr(sp + 1));
    EMBER_CHECK(a != by_text.end() && b != by_text.end(), kOp,
                vocab_bpe << ":" << no << ": \"" << line << "\" names a token " << encoder_json << " does not have");
    merges.emplace_back(a->second, b->second);
  }
  try {
    return from_merges(tokens, merges);
  } catch (const Error& e) {
    std::string why = e.what();
    if (why.rfind(std::string(kOp) + ": ", 0) == 0) why.erase(0, std::string(kOp).size() + 2);  // named once
    EMBER_FAIL(kOp, encoder_json << " and " << vocab_bpe << ": " << why);
  }
}

BPETokenizer BPETokenizer::from_dir(const std::string& dir) {
  namespace fs = std::filesystem;
  if (fs::exists(fs::path(dir) / "encoder.json"))
    return from_files((fs::path(dir) / "encoder.json").string(), (fs::path(dir) / "vocab.bpe").string());
  EMBER_CHECK(fs::exists(fs::path(dir) / "vocab.json"), kOp,
              dir << " has neither encoder.json + vocab.bpe (GPT-2's names) nor vocab.json + merges.txt (Hugging Face's)");
  return from_files((fs::path(dir) / "vocab.json").string(), (fs::path(dir) / "merges.txt").string());
}

namespace {
std::string text_of(const std::string& bytes) {
  std::string s;
  for (char c : bytes) s += byte_to_unicode(static_cast<uint8_t>(c));
  return s;
}
}  // namespace

std::string BPETokenizer::encoder_json() const {
  nlohmann::ordered_json enc = nlohmann::ordered_json::object();
  for (size_t id = 0; id < tokens_.size(); ++id) enc[text_of(tokens_[id])] = id;
  return enc.dump();
}

std::string BPETokenizer::vocab_bpe() const {
  std::string bpe = "#version: 0.2\n";
  for (const auto& [a, b] : merge_list_)
    bpe += text_of(tokens_[static_cast<size_t>(a)]) + " " + text_of(tokens_[static_cast<size_t>(b)]) + "\n";
  return bpe;
}

void BPETokenizer::save(const std::string& dir) const {
  const std::string json = encoder_json(), bpe = vocab_bpe();
  std::filesystem::create_directories(dir);
  write_file_atomically(dir + "/encoder.json", {json}, kOp);
  write_file_atomically(dir + "/vocab.bpe", {bpe}, kOp);
}

void BPETokenizer::encode_piece(std::string_view piece, std::vector<int64_t>& out) const {
  // The piece's bytes as a doubly linked list of tokens; a min-heap holds
  // each adjacent pair that is in the merge list, by (rank, position), so the
  // merge of lowest rank, the leftmost on ties, comes first. A merge ends the
  // pairs its two tokens were in: their heap entries stay until popped and
  // are then skipped, as the tokens no longer match. O(n log n) in the
  // piece's length n.
  EMBER_CHECK(piece.size() <= static_cast<size_t>(INT32_MAX), kOp,
              "a piece of " << piece.size() << " bytes (one run of letters, digits, other characters or spaces) is more "
                            << "than the " << INT32_MAX << " one piece may have");
  const auto n = static_cast<int32_t>(piece.size());
  if (n == 0) return;
  std::vector<int32_t> id(piece.size()), prev(piece.size()), next(piece.size());
  for (int32_t i = 0; i < n; ++i) {
    id[static_cast<size_t>(i)] = byte_token_[static_cast<unsigned char>(piece[static_cast<size_t>(i)])];
    prev[static_cast<size_t>(i)] = i - 1;
    next[static_cast<size_t>(i)] = i + 1 < n ? i + 1 : -1;
  }
  struct Candidate {
    int32_t rank, left, left_id, right_id;
    bool operator>(const Candidate& o) const { return rank != o.rank ? rank > o.rank : left > o.left; }
  };
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<Candidate>> heap;
  auto offer = [&](int32_t left) {  // the pair starting at node `left`, if it merges
    const int32_t right = left < 0 ? -1 : next[static_cast<size_t>(left)];
    if (right < 0) return;
    const int32_t a = id[static_cast<size_t>(left)], b = id[static_cast<size_t>(right)];
    auto it = merges_.find(pair_key(a, b));
    if (it != merges_.end()) heap.push({it->second.first, left, a, b});
  };
  for (int32_t i = 0; i + 1 < n; ++i) offer(i);
  while (!heap.empty()) {
    const Candidate c = heap.top();
    heap.pop();
    const int32_t right = next[static_cast<size_t>(c.left)];
    // Stale: the left token was merged into its neighbour, or either changed.
    if (id[static_cast<size_t>(c.left)] != c.left_id || right < 0 || id[static_cast<size_t>(right)] != c.right_id) continue;
    id[static_cast<size_t>(c.left)] = merges_.at(pair_key(c.left_id, c.right_id)).second;
    id[static_cast<size_t>(right)] = -1;  // removed from the list
    next[static_cast<size_t>(c.left)] = next[static_cast<size_t>(right)];
    if (next[static_cast<size_t>(right)] >= 0) prev[static_cast<size_t>(next[static_cast<size_t>(right)])] = c.left;
    offer(prev[static_cast<size_t>(c.left)]);
    offer(c.left);
  }
  for (int32_t i = 0; i >= 0; i = next[static_cast<size_t>(i)]) out.push_back(id[static_cast<size_t>(i)]);
}

std::vector<int64_t> BPETokenizer::encode(std::string_view text) const {
  std::vector<int64_t> out;
  out.reserve(text.size() / 3);
  // A text repeats its pieces (words, spaces): each distinct piece is merged
  // once per call, then copied. Held by the call, so encode is thread-safe.
  std::unordered_map<std::string_view, std::pair<size_t, size_t>> seen;  // piece -> [begin, end) in out
  for (std::string_view piece : pretokenize(text)) {
    auto it = seen.find(piece);
    if (it != seen.end()) {
      const auto [b, e] = it->second;
      for (size_t k = b; k < e; ++k) out.push_back(out[k]);
      continue;
    }
    const size_t b = out.size();
    encode_piece(piece, out);
    seen.emplace(piece, std::make_pair(b, out.size()));
  }
  return out;
}

const std::string& BPETokenizer::token(int64_t id) const {
  EMBER_CHECK(id >= 0 && id < vocab_size(), kOp, "token id " << id << " is outside the vocabulary [0, " << vocab_size() << ")");
  return tokens_[static_cast<size_t>(id)];
}

std::string BPETokenizer::decode(const std::vector<int64_t>& ids) const {
  std::string out;
  for (size_t i = 0; i < ids.size(); ++i) {
    EMBER_CHECK(ids[i] >= 0 && ids[i] < vocab_size(), kOp,
                "token id " << ids[i] << " at [" << i << "] is outside the vocabulary [0, " << vocab_size() << ")");
    out += tokens_[static_cast<size_t>(ids[i])];
  }
  return out;
}

// ---- training ----

BPETokenizer train_bpe(std::string_view text, int64_t vocab_size) {
  EMBER_CHECK(vocab_size >= 256, "train_bpe", "vocab_size must be at least 256 (one token per byte), got " << vocab_size);
  // Each distinct piece once, with how often it occurs, in order of first appearance.
  std::vector<std::vector<int32_t>> words;
  std::vector<int64_t> counts;
  {
    std::unordered_map<std::string_view, size_t> index;
    for (std::string_view piece : pretokenize(text)) {
      auto [it, fresh] = index.emplace(piece, words.size());
      if (fresh) {
        words.emplace_back();
        for (char c : piece) words.back().push_back(static_cast<unsigned char>(c));
        counts.push_back(0);
      }
      ++counts[it->second];
    }
  }
  std::vector<std::string> tokens(256);
  for (int b = 0; b < 256; ++b) tokens[static_cast<size_t>(b)] = std::string(1, static_cast<char>(b));
  std::unordered_map<std::string, int64_t> ids;
  for (int b = 0; b < 256; ++b) ids.emplace(tokens[static_cast<size_t>(b)], b);
  std::vector<std::pair<int64_t, int64_t>> merges;
  while (static_cast<int64_t>(tokens.size()) < vocab_size) {
    // Count every adjacent pair, weighted by its piece's count; the most
    // frequent wins, the first seen on ties.
    std::unordered_map<uint64_t, std::pair<int64_t, int64_t>> pairs;  // key -> (count, first seen)
    int64_t order = 0;
    for (size_t w = 0; w < words.size(); ++w)
      for (size_t i = 0; i + 1 < words[w].size(); ++i) {
        auto [it, fresh] = pairs.emplace(pair_key(words[w][i], words[w][i + 1]), std::make_pair(int64_t{0}, order));
        order += fresh;
        it->second.first += counts[w];
      }
    uint64_t best = 0;
    std::pair<int64_t, int64_t> top{0, 0};
    for (const auto& [key, cf] : pairs)
      if (cf.first > top.first || (cf.first == top.first && cf.second < top.second)) {
        top = cf;
        best = key;
      }
    if (top.first < 2) break;  // no pair occurs twice: merging would only memorise
    const auto a = static_cast<int32_t>(best >> 32), b = static_cast<int32_t>(best & 0xffffffffu);
    std::string joined = tokens[static_cast<size_t>(a)] + tokens[static_cast<size_t>(b)];
    auto [it, fresh] = ids.emplace(joined, static_cast<int64_t>(tokens.size()));
    if (fresh) tokens.push_back(joined);
    const auto merged = static_cast<int32_t>(it->second);
    merges.emplace_back(a, b);
    for (auto& word : words) {  // replace each (a, b), left to right
      size_t out = 0;
      for (size_t i = 0; i < word.size(); ++i) {
        if (i + 1 < word.size() && word[i] == a && word[i + 1] == b) {
          word[out++] = merged;
          ++i;
        } else {
          word[out++] = word[i];
        }
      }
      word.resize(out);
    }
  }
  return BPETokenizer::from_merges(tokens, merges);
}

}  // namespace ember::train
