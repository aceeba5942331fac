#include "autograd/observer.h"

namespace ember {

std::atomic<AutogradObserver*> detail::autograd_observer_ptr{nullptr};

const char* memory_kind_name(MemoryKind k) {
  switch (k) {
    case MemoryKind::Parameters: return "parameters";
    case MemoryKind::Gradients: return "gradients";
    case MemoryKind::OptimizerState: return "optimizer state";
    case MemoryKind::SavedForBackward: return "saved for backward";
    case MemoryKind::Temporaries: return "temporaries";
    case MemoryKind::Instruments: return "kept by instruments";
  }
  return "?";
}

}  // namespace ember
