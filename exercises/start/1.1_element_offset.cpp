// Exercise 1.1: Where an element lives (chapter 1, docs/book/01_tensors.md)
//
// A tensor is a view of a flat storage. Write element_offset(t, index): the
// position in t's storage (counted in elements, not bytes) of the element
// t[index[0], index[1], ...], for any tensor: contiguous, transposed,
// narrowed, sliced with a step, expanded (a stride of 0). Everything you need
// is in t.storage_offset(), t.stride() and t.shape() (tensor/tensor.h).
//
// An index that does not fit the tensor is a mistake of the caller: refuse it
// with an ember::Error whose message names the index and the shape, e.g.
//   EMBER_CHECK(ok, "element_offset", "index " << i << " ... shape " << shape_str(t.shape()));
//
// Check it:  bash scripts/exercise.sh 1.1
#include "exercises/exercise.h"

using namespace ember;

namespace ex1_1 {

int64_t element_offset(const Tensor& t, const std::vector<int64_t>& index) {
  (void)t;
  (void)index;
  TODO("check that index has one entry per dim, each in [0, size), then add up the offset and index * stride");
}

}  // namespace ex1_1
