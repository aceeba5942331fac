// Checks exercise 5.1: the lesson's ids, the (1, T) shape, cat at position 7,
// and the errors for unknown words and empty sentences.
#include "exercises/checks/check.h"

namespace ex5_1 {
ember::Tensor encode(const std::string& sentence);
}

namespace {
using namespace ember;

void expect_ids(const std::string& sentence, const std::vector<int64_t>& want) {
  Tensor got = ex5_1::encode(sentence);
  const Shape shape{1, static_cast<int64_t>(want.size())};
  check::expect(got.defined() && got.dtype() == kInt64, "encode(\"" + sentence + "\") is not an int64 tensor",
                "ids are integers: tensor(std::vector<int64_t>{...}, {1, T})");
  check::expect(got.shape() == shape, "encode(\"" + sentence + "\") has shape " + check::show(got.shape()) +
                                          ", but should have shape " + check::show(shape) + " = (B, T)");
  check::expect(got.to_vector<int64_t>() == want, "encode(\"" + sentence + "\") is " + check::show(got) +
                                                      ", but should be " + check::show(tensor(want)));
}
}  // namespace

check::Exercise check::exercise() {
  return {"5.1", "From words to ids", "docs/book/05_the_cat_sleeps.md", {
    {"\"The cat sleeps\" is [[2, 4, 0]], shape (1, 3)", [] { expect_ids("The cat sleeps", {2, 4, 0}); }},
    {"\"cat\" is id 4 at any position", [] {
       expect_ids("The dog runs The dog runs The cat", {2, 1, 3, 2, 1, 3, 2, 4});
       expect_ids("cat", {4});
     }},
    {"a word outside the vocabulary is an ember::Error naming it and its position", [] {
       expect_error([] { (void)ex5_1::encode("The bird sleeps"); }, {"bird", "1"}, "encode(\"The bird sleeps\")");
       expect_error([] { (void)ex5_1::encode("the cat"); }, {"the", "0"},
                    "encode(\"the cat\") (the vocabulary has \"The\", not \"the\")");
     }},
    {"a sentence without words is an ember::Error", [] {
       expect_error([] { (void)ex5_1::encode(""); }, {"encode"}, "encode(\"\")");
       expect_error([] { (void)ex5_1::encode("   "); }, {"encode"}, "encode(\"   \")");
     }},
  }};
}
