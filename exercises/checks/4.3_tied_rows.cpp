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

const std::vector<std::pair<std::string, std::string>> kRefusals = {
    {"received no gradient", "the trace saw no gradient reach the table: did a backward run while the trace "
                             "watched, after a forward through the model?"}};

}  // namespace

check::Exercise check::exercise() {
  return {"4.3", "Why a tied table's unused rows move", "docs/book/04_embeddings.md", {
    {"tied: the part that reaches unused rows comes from the head", [] {
       exercise::TinyLM model(10, 4, /*tied=*/true);
       const std::string label = ex4_3::sender_of_unused_rows(model, batch());
       expect(!label.empty(), "no part of the tied table's gradient reaches a row outside the batch, you say; "
                              "but rows other than 3 and 7 do get gradient",
              "did a backward run while the trace watched (before stop_watching)? Then every row of every part "
              "is to be compared with the ids of the batch, 3 and 7");
       expect(label.rfind("head", 0) == 0, "the part you found comes from \"" + label +
                                              "\", which is not the head: the lookup sends only to the batch's rows",
              "a part touches an unused row when one of its rows is none of the batch's ids: is the test the right "
              "way round, and made on the ids themselves (not on positions in the batch)?");
       note("the sender: " + label + " (the head reads all V rows of the shared matrix for every logit)");
     }, kRefusals},
    {"untied: no part reaches unused rows of the embedding's own table", [] {
       exercise::TinyLM model(10, 4, /*tied=*/false);
       const std::string label = ex4_3::sender_of_unused_rows(model, batch());
       expect(label.empty(), "for an untied model you named \"" + label +
                                 "\", but then only the lookup sends gradient to the table, and only to rows 3 and 7",
              label.rfind("head", 0) == 0
                  ? "untied, the head has a matrix of its own: is the label you return found in this model's trace, "
                    "or fixed in advance?"
                  : "rows 3 and 7 are the batch's ids: a part whose rows are all among them touches no unused row; "
                    "are the rows compared with the ids, and the right way round?");
     }, kRefusals},
  }};
}
