// Exercise 16.2: One step of byte-pair encoding (chapter 16, docs/book/16_generation.md)
//
// Learning a BPE repeats one step: count every adjacent pair of tokens over
// the text, and merge the most frequent pair into a new token. The text is
// kept as its distinct words (the pieces GPT-2's pre-tokenization cuts), each
// with how often it occurs, so a word of count 5 counts its pairs 5 times.
//
// Write the two halves of the step:
//   most_frequent_pair  the adjacent pair (a, b) with the largest count over
//                       all words, each occurrence counted with its word's
//                       count; overlapping occurrences both count ("a a a"
//                       holds (a, a) twice). On a tie, the pair that occurs
//                       first, reading the words in order and each word left
//                       to right. {-1, -1} when no pair occurs at least twice.
//   merge               the word with every (a, b) replaced by new_id, left to
//                       right: (a, a, a) with (a, a) -> z becomes (z, a).
//
// Think about:
//   * "aaabdaaabac" (one word, count 1): which pair wins, and what does the
//     word become? (The checker runs three steps of it.)
//   * after merging the first (a, a) of "a a a", may the second a pair again
//     with the first?
//   * a tie between a pair seen early and one seen late: which does a map
//     from pairs to counts remember?
//
// Compare with, after you try: train_bpe in train/bpe.cpp.
//
// Check it:  bash scripts/exercise.sh 16.2
#include <cstdint>
#include <utility>
#include <vector>

#include "exercises/exercise.h"

namespace ex16_2 {

using Word = std::vector<int64_t>;

std::pair<int64_t, int64_t> most_frequent_pair(const std::vector<Word>& words, const std::vector<int64_t>& counts) {
  (void)words;
  (void)counts;
  TODO("count each adjacent pair, weighted by its word's count; which pair is the most frequent?");
}

Word merge(const Word& word, std::pair<int64_t, int64_t> pair, int64_t new_id) {
  (void)word;
  (void)pair;
  (void)new_id;
  TODO("replace each (a, b) by new_id, reading left to right");
}

}  // namespace ex16_2
