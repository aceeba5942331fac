// Exercise 5.1: From words to ids (chapter 5, docs/book/05_the_cat_sleeps.md)
//
// The lesson's tokenizer: one token per word (split at spaces), and the
// vocabulary 0 sleeps, 1 dog, 2 The, 3 runs, 4 cat. Write encode(sentence):
// the ids as an int64 tensor of shape (1, T), one sentence of T words. So
// "The cat sleeps" is [[2, 4, 0]].
//
// A word that is not in the vocabulary is the caller's mistake: an
// ember::Error naming the word and its position ("encode: \"bird\" at
// position 1 is not in the vocabulary"). So is a sentence without words.
//
// Think it through: where does a word's id come from, and from which number
// do ids and positions count? Why (1, T) and not (T): what is the 1? What
// does a sentence of spaces only split into?
//
// tensor/factory.h makes a tensor from a std::vector<int64_t> and a shape;
// std::istringstream splits at spaces.
//
// Check it:  bash scripts/exercise.sh 5.1
#include <sstream>
#include <string>
#include <vector>

#include "exercises/exercise.h"

using namespace ember;

namespace ex5_1 {

const std::vector<std::string> kVocabulary = {"sleeps", "dog", "The", "runs", "cat"};  // id -> word

Tensor encode(const std::string& sentence) {
  (void)sentence;
  TODO("which id does each word have, what do you do with a word that has none, and which shape holds the ids?");
}

}  // namespace ex5_1
