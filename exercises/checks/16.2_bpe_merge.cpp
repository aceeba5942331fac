// Checks exercise 16.2: the merge of a pair in words (left to right, no
// overlap) and the most frequent pair (weighted by the words' counts,
// overlapping occurrences counted, the first seen on ties, none unless it
// occurs twice), on cases whose answers are worked out below, then three
// steps of the classic "aaabdaaabac". A wrong answer is compared with the
// usual mistakes', computed here, to name the one it is.
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "exercises/checks/check.h"

namespace ex16_2 {
using Word = std::vector<int64_t>;
std::pair<int64_t, int64_t> most_frequent_pair(const std::vector<Word>& words, const std::vector<int64_t>& counts);
Word merge(const Word& word, std::pair<int64_t, int64_t> pair, int64_t new_id);
}  // namespace ex16_2

namespace {

using ex16_2::Word;
using Pair = std::pair<int64_t, int64_t>;

std::string show(const Word& w) {
  std::string s = "(";
  for (size_t i = 0; i < w.size(); ++i) s += (i ? ", " : "") + std::to_string(w[i]);
  return s + ")";
}
std::string show(const Pair& p) {
  std::string s = "(";  // (appended: GCC 12 warns falsely on "literal" + std::string)
  return s.append(std::to_string(p.first)).append(", ").append(std::to_string(p.second)).append(")");
}

// ---- merge, right and with the usual mistakes ----
enum class MergeWay { Right, RightToLeft, NoSkip, DropsLast };

Word merged(const Word& w, Pair p, int64_t z, MergeWay way) {
  Word out;
  if (way == MergeWay::RightToLeft) {
    for (size_t i = w.size(); i-- > 0;) {
      if (i > 0 && w[i - 1] == p.first && w[i] == p.second) {
        out.insert(out.begin(), z);
        --i;
      } else {
        out.insert(out.begin(), w[i]);
      }
    }
    return out;
  }
  const size_t end = way == MergeWay::DropsLast && !w.empty() ? w.size() - 1 : w.size();
  for (size_t i = 0; i < end; ++i) {
    if (i + 1 < w.size() && w[i] == p.first && w[i + 1] == p.second) {
      out.push_back(z);
      if (way != MergeWay::NoSkip) ++i;
    } else {
      out.push_back(w[i]);
    }
  }
  return out;
}

void check_merge(const Word& w, Pair p, int64_t z) {
  const Word got = ex16_2::merge(w, p, z), want = merged(w, p, z, MergeWay::Right);
  if (got == want) return;
  std::string hint = "read left to right: where a pair is merged, its second token is used up";
  if (got == merged(w, p, z, MergeWay::RightToLeft) && got != want)
    hint = "the word was merged from the right: BPE merges the leftmost occurrence first";
  else if (got == merged(w, p, z, MergeWay::NoSkip))
    hint = "after a merge the pair's second token was read again: skip past it";
  else if (got == merged(w, p, z, MergeWay::DropsLast))
    hint = "the last token of the word went missing (it has no right neighbour, but it stays)";
  check::fail("merge(" + show(w) + ", " + show(p) + ", " + std::to_string(z) + ") is " + show(got) + ", but should be " +
                  show(want),
              hint);
}

// ---- the most frequent pair, right and with the usual mistakes ----
struct PairWay {
  bool weighted = true, overlapping = true, first_seen = true, at_least_twice = true;
};

Pair frequent(const std::vector<Word>& words, const std::vector<int64_t>& counts, const PairWay& way) {
  std::map<Pair, std::pair<int64_t, int64_t>> seen;  // pair -> (count, first seen)
  int64_t order = 0;
  for (size_t w = 0; w < words.size(); ++w) {
    Pair last = {-1, -1};
    size_t last_at = 0;
    for (size_t i = 0; i + 1 < words[w].size(); ++i) {
      const Pair p = {words[w][i], words[w][i + 1]};
      if (!way.overlapping && p == last && last_at + 1 == i) continue;  // "a a a" counted once
      auto [it, fresh] = seen.try_emplace(p, 0, order);
      if (fresh) ++order;
      it->second.first += way.weighted ? counts[w] : 1;
      last = p;
      last_at = i;
    }
  }
  Pair best = {-1, -1};
  int64_t best_count = way.at_least_twice ? 1 : 0, best_order = 0;
  for (const auto& [p, co] : seen) {
    const bool better = co.first > best_count ||
                        (co.first == best_count && best.first >= 0 && way.first_seen && co.second < best_order);
    if (better) best = p, best_count = co.first, best_order = co.second;
  }
  return best;
}

void check_pair(const std::vector<Word>& words, const std::vector<int64_t>& counts, const std::string& what) {
  const Pair got = ex16_2::most_frequent_pair(words, counts), want = frequent(words, counts, {});
  if (got == want) return;
  std::string hint = "count every adjacent pair of every word, times the word's count";
  if (got == frequent(words, counts, {.weighted = false}))
    hint = "each word counted once: a word that occurs 5 times in the text holds its pairs 5 times";
  else if (got == frequent(words, counts, {.overlapping = false}))
    hint = "overlapping occurrences count: \"a a a\" holds (a, a) twice";
  else if (got == frequent(words, counts, {.first_seen = false}))
    hint = "on a tie the pair seen first wins; a std::map goes through pairs in their order, not the text's";
  else if (got == frequent(words, counts, {.at_least_twice = false}))
    hint = "a pair that occurs once is not worth a token: return {-1, -1} unless some pair occurs twice";
  check::fail(what + ": most_frequent_pair is " + show(got) + ", but should be " + show(want), hint);
}

}  // namespace

check::Exercise check::exercise() {
  return {"16.2", "One step of byte-pair encoding", "docs/book/16_generation.md", {
    {"merge replaces each pair, left to right", [] {
       check_merge({1, 2, 3, 1, 2}, {1, 2}, 9);   // (9, 3, 9)
       check_merge({4, 1, 2}, {1, 2}, 9);         // the pair at the end
       check_merge({1, 3, 2}, {1, 2}, 9);         // not adjacent: unchanged
       check_merge({7}, {7, 7}, 9);
       check_merge({}, {1, 2}, 9);
     }},
    {"merge does not overlap: (a, a, a) becomes (z, a)", [] {
       check_merge({5, 5, 5}, {5, 5}, 9);
       check_merge({5, 5, 5, 5}, {5, 5}, 9);      // (9, 9)
       check_merge({5, 5, 5, 5, 5}, {5, 5}, 9);   // (9, 9, 5)
     }},
    {"the most frequent pair, weighted by the words' counts", [] {
       check_pair({{1, 2}, {3, 4}}, {2, 5}, "(1, 2) twice and (3, 4) five times");
       check_pair({{1, 2, 3}, {2, 3}}, {1, 1}, "(2, 3) in both words");
     }},
    {"overlapping pairs count, and a pair must occur twice", [] {
       check_pair({{7, 7, 7}}, {1}, "(7, 7, 7) holds (7, 7) twice");
       check_pair({{1, 2}, {3, 4}}, {1, 1}, "every pair once");
       check_pair({{1}, {}}, {3, 4}, "no pairs at all");
     }},
    {"on a tie, the pair seen first", [] {
       check_pair({{5, 6}, {1, 2}, {5, 6}, {1, 2}}, {1, 1, 1, 1}, "(5, 6) and (1, 2) twice each");
       check_pair({{3, 4, 1, 2, 3, 4, 1, 2}}, {1}, "(3, 4), (4, 1) and (1, 2) twice each");
     }},
    {"three steps of \"aaabdaaabac\"", [] {
       Word w = {'a', 'a', 'a', 'b', 'd', 'a', 'a', 'a', 'b', 'a', 'c'};
       for (int64_t z = 256; z < 259; ++z) {
         const Pair want = frequent({w}, {1}, {});
         check_pair({w}, {1}, "step " + std::to_string(z - 255) + ", the word " + show(w));
         check_merge(w, want, z);
         w = merged(w, want, z, MergeWay::Right);
       }
       check::expect(w == Word{258, 'd', 258, 'a', 'c'}, "after three steps the word is " + show(w));
       check_pair({w}, {1}, "step 4: no pair occurs twice");
       check::note("aaabdaaabac -> (aa)abdaaabac -> (aaa)bd(aaa)bac -> (aaab)d(aaab)ac: 11 tokens became 5");
     }},
  }};
}
