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
// ember::tensor(std::vector<int64_t>{...}, {1, T}) makes the tensor
// (tensor/factory.h); std::istringstream splits at spaces.
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
  TODO("split the sentence into words and look each one up in kVocabulary");
}

}  // namespace ex5_1
