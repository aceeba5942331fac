// Exercise 1.3: The diagonal as a view (chapter 1, docs/book/01_tensors.md)
//
// Write diagonal(x): the diagonal of a square matrix x, (n, n) -> (n), as a
// view of x's own storage, no copy. Writing into x then changes the view.
//
// A view is a shape, strides and an offset over another tensor's storage;
// kernel::as_strided(x, shape, strides, offset, op) (tensor/kernels.h) makes
// one of your choosing. Think it through:
//   * one step along the diagonal is one step down AND one step right: how
//     far does that move in the storage?
//   * x itself may be a view (transposed, narrowed): where does its first
//     element live, and how far does one step down or right move for it?
//
// Anything that is not a square matrix is an ember::Error naming "diagonal"
// and the shape: which shapes have a diagonal in this sense?
//
// Compare with, after you try: the other views in tensor/views.cpp.
//
// Check it:  bash scripts/exercise.sh 1.3
#include "exercises/exercise.h"

using namespace ember;

namespace ex1_3 {

Tensor diagonal(const Tensor& x) {
  (void)x;
  TODO("which x has a diagonal, and which shape, stride and offset make it a view of x?");
}

}  // namespace ex1_3
