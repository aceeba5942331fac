// Exercise 12.2: All or nothing, an in-place op that fails cleanly (chapter 12, docs/book/12_bad_input_and_faults.md)
//
// Write normalize_rows_(x): divide every row of the float32 matrix x, in
// place, by its L2 norm, so that each row has length 1. A row of zeros has
// no direction: that is an ember::Error naming the row ("normalize_rows_:
// row 2 of a (4, 3) matrix is all zeros").
//
// The rule of chapter 12: a refused op leaves everything as it was. So
// check every row before you write any: compute all the norms first (norm(x,
// 2.0, {1}) gives one per row), refuse if one is 0, and only then divide.
// Refuse a tensor that is not 2-D as well. x.mul_ and x.copy_ write in place;
// x.div_ does not exist, but x.copy_(x / norms.unsqueeze(1)) does it.
//
// Check it:  bash scripts/exercise.sh 12.2
#include "exercises/exercise.h"

using namespace ember;

namespace ex12_2 {

Tensor& normalize_rows_(Tensor& x) {
  TODO("check x is 2-D, compute every row's norm, refuse a zero row, then write");
  return x;
}

}  // namespace ex12_2
