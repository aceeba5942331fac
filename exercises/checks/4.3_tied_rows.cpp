// Checks exercise 4.3: the part of a tied table's gradient that reaches
// unused rows comes from the head; untied, no part does.
#include <algorithm>

#include "exercises/checks/check.h"
#include "exercises/tiny_lm.h"

namespace ex4_3 {
std::string sender_of_unused_rows(exercise::TinyLM& model, const ember::Tensor& ids);
}

namespace {

using namespace ember;

Tensor batch() { return tensor(std::vector<int64_t>{3, 7, 7, 7, 3, 3}, {2, 3}); }  // ids 3 and 7 of 10

}  // namespace

check::Exercise check::exercise() {
  return {"4.3", "Why a tied table's unused rows move", "docs/book/04_embeddings.md", {
    {"tied: the part that reaches unused rows comes from the head", [] {
       exercise::TinyLM model(10, 4, /*tied=*/true);
       const std::string label = ex4_3::sender_of_unused_rows(model, batch());
       expect(!label.empty(), "no part of the tied table's gradient reaches a row outside the batch, you say; "
                              "but rows other than 3 and 7 do get gradient",
              "look at the rows of every part, not only the first");
       expect(label.rfind("head", 0) == 0, "the part you found comes from \"" + label +
                                              "\", which is not the head: the lookup sends only to the batch's rows");
       note("the sender: " + label + " (the head reads all V rows of the shared matrix for every logit)");
     }},
    {"untied: no part reaches unused rows of the embedding's own table", [] {
       exercise::TinyLM model(10, 4, /*tied=*/false);
       const std::string label = ex4_3::sender_of_unused_rows(model, batch());
       expect(label.empty(), "for an untied model you named \"" + label +
                                 "\", but then only the lookup sends gradient to the table, and only to rows 3 and 7");
     }},
  }};
}
