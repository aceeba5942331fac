// Exercise 4.4: A sparse table's gradient as rows (chapter 4, docs/book/04_embeddings.md)
//
// The lookup table(ids) of an embedding reads one row per id; its backward
// adds grad_out's row i into row ids[i] of a (V, D) gradient that is zero
// everywhere else. A sparse table keeps only the rows it touched.
//
// 1. rows_of(ids, grad_out, padding_idx): ids is int64 (N), grad_out is
//    float64 (N, D), the gradient of each looked-up row. Return a RowGrad
//    (tensor/tensor.h) with
//      .ids   int64 (K): each id that received gradient, once (any order),
//      .rows  float64 (K, D): row k the sum of grad_out's rows whose id is ids[k],
//    and nothing for padding_idx when there is one (the padding row never
//    gets gradient). Add each id's rows in the batch's order, starting from
//    zero, as index_add_ does: then your sums have the dense gradient's bits.
// 2. sgd_rows(table, rows, lr): one step of plain SGD (no momentum, no weight
//    decay), w -= lr * g, reading and writing only the rows named in rows.ids
//    of the float64 (V, D) table, in place. Why may every other row be left
//    alone here, when AdamW could not leave it?
//
// The checker compares your rows with the row_grad() of an
// nn::Embedding{.sparse = true} after a backward, and your step with
// optim::SGD's on the dense gradient.
//
// Check it:  bash scripts/exercise.sh 4.4
#include "exercises/exercise.h"

using namespace ember;

namespace ex4_4 {

RowGrad rows_of(const Tensor& ids, const Tensor& grad_out, std::optional<int64_t> padding_idx) {
  (void)ids;
  (void)grad_out;
  (void)padding_idx;
  TODO("one entry per distinct id (skip the padding id), its row the sum of grad_out's rows for that id");
}

void sgd_rows(Tensor& table, const RowGrad& rows, double lr) {
  (void)table;
  (void)rows;
  (void)lr;
  TODO("w -= lr * g for the rows named in rows.ids only");
}

}  // namespace ex4_4
