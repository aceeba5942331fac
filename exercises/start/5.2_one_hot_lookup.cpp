// Exercise 5.2: The lookup as one_hot x E (chapter 5, docs/book/05_the_cat_sleeps.md)
//
// Write lookup_by_one_hot(E, ids): for a table E (V, D) and ids (B, T),
// the (B, T, D) tensor whose row (b, t) is row ids[b, t] of E, computed as
// a matrix product of one-hot rows with E (one_hot, autograd/ops.h). The
// checker compares it with ember's embedding(E, ids), in value, shape, and
// in the gradient that reaches E.
//
// Think it through:
//   * a one-hot row times E picks one row of E: how long must the one-hot
//     row be, and does one_hot know that when the batch does not use the
//     table's last rows?
//   * one_hot gives int64; E is floating. Does matmul multiply two dtypes?
//   * which rows of E get gradient, and how much?
//
// Check it:  bash scripts/exercise.sh 5.2
#include "exercises/exercise.h"

using namespace ember;

namespace ex5_2 {

Tensor lookup_by_one_hot(const Tensor& E, const Tensor& ids) {
  (void)E;
  (void)ids;
  TODO("which (B, T, V) tensor, times E, gives row ids[b, t] of E at (b, t)?");
}

}  // namespace ex5_2
