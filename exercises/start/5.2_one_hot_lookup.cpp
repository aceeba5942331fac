// Exercise 5.2: The lookup as one_hot x E (chapter 5, docs/book/05_the_cat_sleeps.md)
//
// Write lookup_by_one_hot(E, ids): for a table E (V, D) and ids (B, T),
// the (B, T, D) tensor whose row (b, t) is row ids[b, t] of E, computed as
// one_hot(ids, V) x E. one_hot gives int64 (B, T, V): convert it to E's dtype
// (.to(E.dtype())) before matmul. The checker compares it with ember's
// embedding(E, ids), in value, shape, and in the gradient that reaches E.
//
// Check it:  bash scripts/exercise.sh 5.2
#include "exercises/exercise.h"

using namespace ember;

namespace ex5_2 {

Tensor lookup_by_one_hot(const Tensor& E, const Tensor& ids) {
  (void)E;
  (void)ids;
  TODO("matmul of the one-hot rows (as E's dtype) and E");
}

}  // namespace ex5_2
