#include "base/hooks.h"

namespace ember {

std::atomic<TensorObserver*> detail::tensor_observer_ptr{nullptr};

}  // namespace ember
