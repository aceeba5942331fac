// Exercise 16.2: One step of byte-pair encoding, a reference solution.
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "exercises/exercise.h"

namespace ex16_2 {

using Word = std::vector<int64_t>;

std::pair<int64_t, int64_t> most_frequent_pair(const std::vector<Word>& words, const std::vector<int64_t>& counts) {
  std::map<std::pair<int64_t, int64_t>, std::pair<int64_t, int64_t>> seen;  // pair -> (count, first seen)
  int64_t order = 0;
  for (size_t w = 0; w < words.size(); ++w)
    for (size_t i = 0; i + 1 < words[w].size(); ++i) {
      auto [it, fresh] = seen.try_emplace({words[w][i], words[w][i + 1]}, 0, order);
      if (fresh) ++order;
      it->second.first += counts[w];
    }
  std::pair<int64_t, int64_t> best = {-1, -1};
  int64_t best_count = 1, best_order = 0;  // a pair must occur at least twice
  for (const auto& [pair, co] : seen)
    if (co.first > best_count || (co.first == best_count && best.first >= 0 && co.second < best_order)) {
      best = pair;
      best_count = co.first;
      best_order = co.second;
    }
  return best;
}

Word merge(const Word& word, std::pair<int64_t, int64_t> pair, int64_t new_id) {
  Word out;
  for (size_t i = 0; i < word.size(); ++i) {
    if (i + 1 < word.size() && word[i] == pair.first && word[i + 1] == pair.second) {
      out.push_back(new_id);
      ++i;  // the pair's second token is used up
    } else {
      out.push_back(word[i]);
    }
  }
  return out;
}

}  // namespace ex16_2
