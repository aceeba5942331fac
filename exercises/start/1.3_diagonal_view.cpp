// Exercise 1.3: The diagonal as a view (chapter 1, docs/book/01_tensors.md)
//
// Write diagonal(x): the diagonal of a square matrix x, (n, n) -> (n), as a
// view of x's own storage, no copy. Writing into x then changes the view.
//
// Every view in ember is made by kernel::as_strided(x, shape, strides,
// offset) (tensor/kernels.h, tensor/views.cpp): a new shape, strides and
// offset over x's storage. One step along the diagonal is one step down AND
// one step right: which stride is that? Mind that x itself may be a view
// (transposed, narrowed), with its own strides and offset.
//
// Anything that is not a square matrix is an ember::Error naming "diagonal"
// and the shape.
//
// Check it:  bash scripts/exercise.sh 1.3
#include "exercises/exercise.h"

using namespace ember;

namespace ex1_3 {

Tensor diagonal(const Tensor& x) {
  (void)x;
  TODO("check x is (n, n), then return kernel::as_strided(x, {n}, {the diagonal's stride}, x.storage_offset())");
}

}  // namespace ex1_3
