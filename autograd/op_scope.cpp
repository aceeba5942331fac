#include "autograd/op_scope.h"

namespace ember {

void OpScope::undefined(int position, int64_t element) const {
  if (element >= 0)
    EMBER_FAIL(op_, "tensor " << element << " of argument " << position
                              << " is undefined (a default-constructed Tensor, e.g. grad() before any backward)");
  EMBER_FAIL(op_, "argument " << position
                              << " is an undefined tensor (a default-constructed Tensor, e.g. grad() before any backward)");
}

}  // namespace ember
