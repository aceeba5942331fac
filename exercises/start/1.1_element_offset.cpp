// Exercise 1.1: Where an element lives (chapter 1, docs/book/01_tensors.md)
//
// A tensor is a view of a flat storage. Write element_offset(t, index): the
// position in t's storage (counted in elements, not bytes) of the element
// t[index[0], index[1], ...], for any tensor: contiguous, transposed,
// narrowed, sliced with a step, expanded (a stride of 0).
//
// Think it through before you write it:
//   * where in the storage does t[0, 0, ...] live? (A narrow or a select
//     need not start at the storage's first element.)
//   * how far in the storage does one step along dim d move? Is that the
//     same for a transposed view as for a contiguous tensor of that shape?
// t.storage_offset(), t.stride() and t.shape() (tensor/tensor.h) tell you
// everything the view knows about itself.
//
// An index that does not fit the tensor is a mistake of the caller: refuse it
// with an ember::Error (EMBER_CHECK, base/error.h) whose message names the
// index and the shape (shape_str(t.shape()) writes it as "(2, 3, 4)"). Which
// indices fit a dim of size n, and how many indices does t need?
//
// Check it:  bash scripts/exercise.sh 1.1
#include "exercises/exercise.h"

using namespace ember;

namespace ex1_1 {

int64_t element_offset(const Tensor& t, const std::vector<int64_t>& index) {
  (void)t;
  (void)index;
  TODO("which indices does t accept, where does t's first element live, "
       "and how far does each index move from there?");
}

}  // namespace ex1_1
