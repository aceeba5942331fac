// Exercise 5.1: From words to ids, a reference solution.
#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "exercises/exercise.h"

using namespace ember;

namespace ex5_1 {

const std::vector<std::string> kVocabulary = {"sleeps", "dog", "The", "runs", "cat"};  // id -> word

Tensor encode(const std::string& sentence) {
  std::vector<int64_t> ids;
  std::istringstream words(sentence);
  for (std::string w; words >> w;) {
    auto it = std::find(kVocabulary.begin(), kVocabulary.end(), w);
    EMBER_CHECK(it != kVocabulary.end(), "encode",
                "\"" << w << "\" at position " << ids.size() << " is not in the vocabulary");
    ids.push_back(it - kVocabulary.begin());
  }
  EMBER_CHECK(!ids.empty(), "encode", "the sentence \"" << sentence << "\" has no words");
  return tensor(ids, {1, static_cast<int64_t>(ids.size())});
}

}  // namespace ex5_1
