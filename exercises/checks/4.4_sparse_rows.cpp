// Checks exercise 4.4: a lookup's gradient as rows (the row_grad() of a
// sparse nn::Embedding, bit for bit), and plain SGD on those rows only
// (optim::SGD's step on the dense gradient).
#include <map>

#include "exercises/checks/check.h"

namespace ex4_4 {
ember::RowGrad rows_of(const ember::Tensor& ids, const ember::Tensor& grad_out, std::optional<int64_t> padding_idx);
void sgd_rows(ember::Tensor& table, const ember::RowGrad& rows, double lr);
}  // namespace ex4_4

namespace {

using namespace ember;
using namespace check;
constexpr int64_t V = 10, D = 4;

// What ember's sparse table keeps after one backward of sum(table(ids) * g).
struct Reference {
  Tensor weight;  // the table (V, D), float64
  RowGrad rows;   // its row_grad(), one chunk
  Tensor dense;   // its .grad(), made from the rows
};

Reference reference(const Tensor& ids, const Tensor& g, std::optional<int64_t> padding_idx) {
  Generator gen(4);
  nn::Embedding table(V, D, {.padding_idx = padding_idx, .dtype = kFloat64, .generator = &gen, .sparse = true});
  (table.forward(ids) * g).sum().backward();
  Reference r{table.weight.detach().clone(), table.weight.row_grad().front(), Tensor()};
  r.dense = table.weight.grad();
  return r;
}

Tensor grad_out(int64_t n) {
  Generator gen(44);
  return randn({n, D}, gen, kFloat64);
}

// Every id of `got` once, each row equal to the reference's row for it, bit for bit.
void expect_same_rows(const RowGrad& got, const RowGrad& want, std::optional<int64_t> padding_idx) {
  expect(got.ids.defined() && got.rows.defined(), "your RowGrad has an undefined ids or rows tensor");
  expect(got.ids.dtype() == kInt64 && got.ids.dim() == 1, "ids should be an int64 tensor of one dimension, not " +
                                                              std::string(dtype_name(got.ids.dtype())) + " " +
                                                              show(got.ids.shape()));
  expect(got.rows.dim() == 2 && got.rows.size(0) == got.ids.numel() && got.rows.size(1) == D,
         "rows should be (K, " + std::to_string(D) + ") for your " + std::to_string(got.ids.numel()) +
             " ids, not " + show(got.rows.shape()));
  std::map<int64_t, int64_t> mine, theirs;  // id -> row
  const std::vector<int64_t> gi = got.ids.to_vector<int64_t>(), wi = want.ids.to_vector<int64_t>();
  for (size_t k = 0; k < gi.size(); ++k) {
    expect(!mine.count(gi[k]), "id " + std::to_string(gi[k]) + " appears more than once in your ids",
           "each id that received gradient appears once, with the sum of all its rows: a batch may name an id "
           "several times (keep a map from id to its place in the result)");
    mine[gi[k]] = static_cast<int64_t>(k);
  }
  for (size_t k = 0; k < wi.size(); ++k) theirs[wi[k]] = static_cast<int64_t>(k);
  for (const auto& [id, k] : mine) {
    (void)k;
    expect(!(padding_idx && id == *padding_idx),
           "your ids include " + std::to_string(id) + ", the padding id: the padding row never gets gradient",
           "skip every position whose id is padding_idx");
    expect(theirs.count(id), "your ids include " + std::to_string(id) + ", which the batch never looks up");
  }
  for (const auto& [id, k] : theirs) {
    expect(mine.count(id), "id " + std::to_string(id) + " received gradient, but is not among your ids");
    const Tensor a = got.rows.select(0, mine[id]), b = want.rows.select(0, k);
    if (equal_bits(a, b)) continue;
    expect(!matches(a, b, 1e-12),
           "the row of id " + std::to_string(id) + " has the right values but not the same bits as the dense "
           "gradient's (largest difference " + num(max_diff(a, b, "row")) + ")",
           "start each sum from zero and add the rows in the batch's order, one position after the other");
    fail("the row of id " + std::to_string(id) + " is " + show(a) + ", but should be " + show(b),
         "the row of an id is the sum of grad_out's rows at every position where that id was looked up");
  }
}

}  // namespace

check::Exercise check::exercise() {
  return {"4.4", "A sparse table's gradient as rows", "docs/book/04_embeddings.md", {
    {"rows_of: each id of the batch once, its rows summed (a sparse Embedding's row_grad())", [] {
       const Tensor ids = tensor(std::vector<int64_t>{3, 7, 7, 7, 3, 3, 9});
       const Tensor g = grad_out(ids.numel());
       const Reference ref = reference(ids, g, std::nullopt);
       expect_same_rows(ex4_4::rows_of(ids, g, std::nullopt), ref.rows, std::nullopt);
       note("3 rows of 10 instead of the whole (10, 4) table; with GPT-2's 50257 rows and 2048 ids per batch, "
            "at most 2048 of 50257");
     }},
    {"rows_of with a padding id: the padding row gets none", [] {
       const Tensor ids = tensor(std::vector<int64_t>{0, 2, 0, 5, 2, 0});
       const Tensor g = grad_out(ids.numel());
       const Reference ref = reference(ids, g, 0);
       expect_same_rows(ex4_4::rows_of(ids, g, 0), ref.rows, 0);
     }},
    {"sgd_rows: optim::SGD's step on the dense gradient, touching only the rows", [] {
       const Tensor ids = tensor(std::vector<int64_t>{3, 7, 7, 7, 3, 3, 9});
       const Reference ref = reference(ids, grad_out(ids.numel()), std::nullopt);
       Tensor mine = ref.weight.clone();
       ex4_4::sgd_rows(mine, ref.rows, 0.1);
       Tensor dense = ref.weight.clone().requires_grad_();
       dense.set_grad(ref.dense);
       optim::SGD sgd({dense}, 0.1);
       sgd.step();
       const Tensor want = dense.detach();
       const std::vector<int64_t> used = {3, 7, 9};
       for (int64_t r = 0; r < V; ++r) {
         const Tensor a = mine.select(0, r), b = want.select(0, r);
         if (std::find(used.begin(), used.end(), r) == used.end()) {
           expect(equal_bits(a, ref.weight.select(0, r)),
                  "row " + std::to_string(r) + " received no gradient, yet your step changed it",
                  "write only the rows named in rows.ids");
           continue;
         }
         if (matches(a, b, 1e-12)) continue;
         expect(!matches(a, ref.weight.select(0, r), 0.0),
                "row " + std::to_string(r) + " received gradient, but your step left it as it was",
                "every row named in rows.ids moves by -lr times its gradient row (rows.rows[k] belongs to rows.ids[k])");
         const Tensor step = b - ref.weight.select(0, r);
         expect(!matches(a, ref.weight.select(0, r) - step, 1e-12),
                "row " + std::to_string(r) + " moved along its gradient, not against it",
                "SGD descends: w -= lr * g");
         fail("row " + std::to_string(r) + " is " + show(a) + " after your step, but should be " + show(b),
              "w -= lr * g, with g the row of rows.rows at the same position k as the id in rows.ids");
       }
       note("a zero gradient leaves a row of plain SGD where it was; AdamW's decaying moments and weight decay "
            "change every row at every step, so it reads the dense gradient");
     }},
  }};
}
