// Checks exercise 5.2: one_hot x E equals the lookup of "The cat sleeps", and
// sends the same gradient to the table: the used rows only.
#include "exercises/checks/check.h"

namespace ex5_2 {
ember::Tensor lookup_by_one_hot(const ember::Tensor& E, const ember::Tensor& ids);
}

namespace {
using namespace ember;

Tensor table() { return tensor({-0.4, 0.8, 0.1, 0.5, 0.2, -0.1, -0.2, 0.6, 0.7, 0.3}, {5, 2}, kFloat64); }
Tensor sentence() { return tensor(std::vector<int64_t>{2, 4, 0}, {1, 3}); }  // The cat sleeps
}  // namespace

check::Exercise check::exercise() {
  return {"5.2", "The lookup as one_hot x E", "docs/book/05_the_cat_sleeps.md", {
    {"\"The cat sleeps\": the lesson's [1, 3, 2] tensor", [] {
       expect_close(ex5_2::lookup_by_one_hot(table(), sentence()),
                    tensor({0.2, -0.1, 0.7, 0.3, -0.4, 0.8}, {1, 3, 2}, kFloat64), "lookup_by_one_hot(E, [[2, 4, 0]])",
                    1e-12);
     }},
    {"equal to embedding(E, ids) on a batch of two sentences", [] {
       Tensor ids = tensor(std::vector<int64_t>{2, 4, 0, 2, 1, 3}, {2, 3});
       expect_close(ex5_2::lookup_by_one_hot(table(), ids), embedding(table(), ids), "lookup_by_one_hot(E, ids)", 1e-12);
     }},
    {"the same gradient reaches E: rows 2, 4 and 0, nothing else", [] {
       Tensor E1 = table().requires_grad_(), E2 = table().requires_grad_();
       Tensor R = tensor({1.0, 2.0, 3.0, 4.0, 5.0, 6.0}, {1, 3, 2}, kFloat64);  // d loss / d output
       sum(ex5_2::lookup_by_one_hot(E1, sentence()) * R).backward();
       sum(embedding(E2, sentence()) * R).backward();
       expect_close(E1.grad(), E2.grad(), "E.grad through your lookup", 1e-12,
                    "the product's gradient with respect to E is one_hot^T times the output's gradient");
       note("E.grad = " + show(E1.grad()) + ": rows 1 (dog) and 3 (runs) were not looked up and get zero");
     }},
  }};
}
