// Exercise 1.1: Where an element lives, a reference solution.
#include "exercises/exercise.h"

using namespace ember;

namespace ex1_1 {

int64_t element_offset(const Tensor& t, const std::vector<int64_t>& index) {
  EMBER_CHECK(static_cast<int64_t>(index.size()) == t.dim(), "element_offset",
              index.size() << " indices for a tensor of shape " << shape_str(t.shape()));
  int64_t offset = t.storage_offset();
  for (int64_t d = 0; d < t.dim(); ++d) {
    const int64_t i = index[static_cast<size_t>(d)];
    EMBER_CHECK(i >= 0 && i < t.size(d), "element_offset",
                "index " << i << " at dim " << d << " is outside a tensor of shape " << shape_str(t.shape()));
    offset += i * t.stride()[static_cast<size_t>(d)];
  }
  return offset;
}

}  // namespace ex1_1
