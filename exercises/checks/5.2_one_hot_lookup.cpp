// Checks exercise 5.2: one_hot x E equals the lookup of "The cat sleeps", and
// of ids that leave E's last rows unused, and sends the same gradient to the
// table: the used rows only. A refusal names the mistake it means (int64
// times float64, the factors swapped, one_hot's width taken from the ids).
#include "exercises/checks/check.h"

namespace ex5_2 {
ember::Tensor lookup_by_one_hot(const ember::Tensor& E, const ember::Tensor& ids);
}

namespace {
using namespace ember;

Tensor table() { return tensor({-0.4, 0.8, 0.1, 0.5, 0.2, -0.1, -0.2, 0.6, 0.7, 0.3}, {5, 2}, kFloat64); }
Tensor sentence() { return tensor(std::vector<int64_t>{2, 4, 0}, {1, 3}); }  // The cat sleeps

const std::pair<std::string, std::string> kDtypes = {
    "dtype mismatch", "one_hot gives int64 and E is float64: matmul multiplies two tensors of one dtype"};

const std::vector<std::pair<std::string, std::string>> kRefusals = {
    kDtypes,
    {"must equal", "the one-hot rows (B, T, V) times E (V, D): the V columns of the first meet the V rows of the "
                   "second, so which factor comes first?"},
};

const std::vector<std::pair<std::string, std::string>> kRefusalsUnusedRows = {
    kDtypes,
    {"must equal", "left to itself, one_hot counts the classes it sees in ids: the largest id + 1, here 2; E has V "
                   "= 5 rows however many of them the batch uses"},
};
}  // namespace

check::Exercise check::exercise() {
  return {"5.2", "The lookup as one_hot x E", "docs/book/05_the_cat_sleeps.md", {
    {"\"The cat sleeps\": the lesson's [1, 3, 2] tensor", [] {
       expect_close(ex5_2::lookup_by_one_hot(table(), sentence()),
                    tensor({0.2, -0.1, 0.7, 0.3, -0.4, 0.8}, {1, 3, 2}, kFloat64), "lookup_by_one_hot(E, [[2, 4, 0]])",
                    1e-12, "row (b, t) of the result is row ids[b, t] of E");
     }, kRefusals},
    {"equal to embedding(E, ids) on a batch of two sentences", [] {
       Tensor ids = tensor(std::vector<int64_t>{2, 4, 0, 2, 1, 3}, {2, 3});
       expect_close(ex5_2::lookup_by_one_hot(table(), ids), embedding(table(), ids), "lookup_by_one_hot(E, ids)", 1e-12,
                    "each sentence of the batch is looked up on its own: (B, T) ids give (B, T, D)");
     }, kRefusals},
    {"ids that leave E's last rows unused: [[0, 1]] with V = 5", [] {
       Tensor ids = tensor(std::vector<int64_t>{0, 1}, {1, 2});
       expect_close(ex5_2::lookup_by_one_hot(table(), ids), embedding(table(), ids), "lookup_by_one_hot(E, [[0, 1]])",
                    1e-12);
     }, kRefusalsUnusedRows},
    {"the same gradient reaches E: rows 2, 4 and 0, nothing else", [] {
       Tensor E1 = table().requires_grad_(), E2 = table().requires_grad_();
       Tensor R = tensor({1.0, 2.0, 3.0, 4.0, 5.0, 6.0}, {1, 3, 2}, kFloat64);  // d loss / d output
       const Tensor out = ex5_2::lookup_by_one_hot(E1, sentence());
       expect(out.requires_grad(), "your lookup's output does not require grad, so no gradient reaches E",
              "autograd follows only ember ops on E itself: was E detached, or the product made where nothing "
              "records?");
       sum(out * R).backward();
       sum(embedding(E2, sentence()) * R).backward();
       expect_close(E1.grad(), E2.grad(), "E.grad through your lookup", 1e-12,
                    "the product's gradient with respect to E is one_hot^T times the output's gradient");
       note("E.grad = " + show(E1.grad()) + ": rows 1 (dog) and 3 (runs) were not looked up and get zero");
     }, kRefusals},
  }};
}
