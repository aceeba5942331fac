// Exercise 12.2: All or nothing, an in-place op that fails cleanly (chapter 12, docs/book/12_bad_input_and_faults.md)
//
// Write normalize_rows_(x): divide every row of the float32 matrix x, in
// place, by its L2 norm, so that each row has length 1. A row of zeros has
// no direction: that is an ember::Error naming the row ("normalize_rows_:
// row 2 of a (4, 3) matrix is all zeros"). Refuse a tensor that is not 2-D
// as well.
//
// The rule of chapter 12: a refused op leaves everything as it was.
//
// Think about:
//   * if row 3 is the zero one, what have you already done to rows 0..2
//     when you find out? what order of work keeps "all or nothing"?
//   * norm(x, 2.0, dims) gives the norms along the dims you name: which dim
//     runs along a row?
//   * a (R) tensor of norms and an (R, C) matrix: how does broadcasting line
//     them up, and how must the norms be shaped to divide row r by norm r?
//   * in place means x's own storage gets the new numbers: x.copy_(...)
//     and x.mul_(...) write into it, x = ... makes x another tensor.
//
// Check it:  bash scripts/exercise.sh 12.2
#include "exercises/exercise.h"

using namespace ember;

namespace ex12_2 {

Tensor& normalize_rows_(Tensor& x) {
  TODO("refuse what is not a matrix or has a zero row, before writing anything; then divide each row by its norm");
  return x;
}

}  // namespace ex12_2
