// Checks exercise 5.1: the lesson's ids, the (1, T) shape, cat at position 7,
// and the errors for unknown words and empty sentences. Wrong ids, shapes and
// missing refusals are named by the mistake they mean (ids from 1, (T) for
// (1, T), a check on the string instead of its words).
#include <algorithm>

#include "exercises/checks/check.h"

namespace ex5_1 {
ember::Tensor encode(const std::string& sentence);
}

namespace {
using namespace ember;

// The hint for wrong ids, from the way they are wrong.
std::string ids_mistake(const std::vector<int64_t>& got, std::vector<int64_t> want) {
  std::vector<int64_t> plus_one = want;
  for (int64_t& id : plus_one) ++id;
  if (got == plus_one) return "ids count from 0: the first word of kVocabulary, \"sleeps\", is id 0";
  std::reverse(want.begin(), want.end());
  if (got == want) return "the ids keep the order of the words";
  return "a word's id is its place in kVocabulary (0 sleeps, 1 dog, 2 The, 3 runs, 4 cat)";
}

void expect_ids(const std::string& sentence, const std::vector<int64_t>& want) {
  Tensor got = ex5_1::encode(sentence);
  const int64_t T = static_cast<int64_t>(want.size());
  const std::string call = "encode(\"" + sentence + "\")";
  check::expect(got.defined() && got.dtype() == kInt64, call + " is not an int64 tensor",
                "ids are whole numbers that pick rows of a table: an int64 tensor, not a floating one");
  check::expect(got.shape() == Shape{1, T}, call + " has shape " + check::show(got.shape()) +
                                                ", but should have shape " + check::show(Shape{1, T}) + " = (B, T)",
                got.shape() == Shape{T} ? "one sentence is a batch of one: the model reads (B, T), here (1, T)"
                                        : "B = 1 sentence of T words: the words run along the last dim");
  const std::vector<int64_t> ids = got.to_vector<int64_t>();
  check::expect(ids == want, call + " is " + check::show(got) + ", but should be " + check::show(tensor(want, {1, T})),
                ids_mistake(ids, want));
}

// Every word of these steps is in the vocabulary: a refusal means the lookup is wrong.
const std::vector<std::pair<std::string, std::string>> kKnownWords = {
    {"encode", "every word of this sentence is in kVocabulary, written exactly as there: is each word looked up "
               "whole, without the spaces around it?"}};

const std::string kNameIt = "the message names the word as written and its position, counted from 0 like the ids";
}  // namespace

check::Exercise check::exercise() {
  return {"5.1", "From words to ids", "docs/book/05_the_cat_sleeps.md", {
    {"\"The cat sleeps\" is [[2, 4, 0]], shape (1, 3)", [] { expect_ids("The cat sleeps", {2, 4, 0}); }, kKnownWords},
    {"\"cat\" is id 4 at any position", [] {
       expect_ids("The dog runs The dog runs The cat", {2, 1, 3, 2, 1, 3, 2, 4});
       expect_ids("cat", {4});
     }, kKnownWords},
    {"a word outside the vocabulary is an ember::Error naming it and its position", [] {
       expect_error([] { (void)ex5_1::encode("The bird sleeps"); }, {"bird", "1"}, "encode(\"The bird sleeps\")",
                    "\"bird\" has no id: a word that is not in kVocabulary must be refused, not given a number",
                    kNameIt);
       expect_error([] { (void)ex5_1::encode("the cat"); }, {"the", "0"},
                    "encode(\"the cat\") (the vocabulary has \"The\", not \"the\")",
                    "\"the\" is not \"The\": the vocabulary knows words exactly as they are written", kNameIt);
     }},
    {"a sentence without words is an ember::Error", [] {
       expect_error([] { (void)ex5_1::encode(""); }, {"encode"}, "encode(\"\")",
                    "no words, no ids: a (1, 0) tensor is no sentence; the caller made a mistake");
       expect_error([] { (void)ex5_1::encode("   "); }, {"encode"}, "encode(\"   \")",
                    "\"   \" is not empty as a string, but it splits into no words: which of the two does your check "
                    "look at?");
     }},
  }};
}
