/// @file
/// The two places where tensor/ lets an instrument watch it (inspect/'s
/// memory timeline and profiler): every Storage allocation and free, and the
/// work a kernel does (floating-point operations and bytes moved). When no
/// instrument is installed each costs one load of a pointer and a branch.
#pragma once

#include <atomic>
#include <cstddef>

namespace ember {

/// What an instrument implements to watch tensor/. Calls arrive on the
/// thread that allocates or runs the kernel (ember's own threads never
/// allocate or call these from inside a parallel region).
struct TensorObserver {
  virtual ~TensorObserver() = default;
  /// A Storage of `nbytes` bytes was allocated at `data` / is being freed.
  virtual void allocated(const void* data, size_t nbytes) = 0;
  virtual void freed(const void* data, size_t nbytes) = 0;
  /// A kernel did `flops` floating-point operations, read `bytes_read` bytes
  /// and wrote `bytes_written` (the rules are listed in inspect/profiler.h).
  virtual void work(double flops, double bytes_read, double bytes_written) = 0;
};

namespace detail {
extern std::atomic<TensorObserver*> tensor_observer_ptr;  // constant-initialized to null
}
/// The instrument in effect, or null: `if (TensorObserver* o = tensor_observer()) o->...`.
inline TensorObserver* tensor_observer() { return detail::tensor_observer_ptr.load(std::memory_order_relaxed); }
/// Installs `o` (nullptr: none). Called by inspect/'s hub only.
inline void set_tensor_observer(TensorObserver* o) { detail::tensor_observer_ptr.store(o, std::memory_order_relaxed); }

/// Reports a kernel's work to the instrument, if any.
inline void note_work(double flops, double bytes_read, double bytes_written) {
  if (TensorObserver* o = tensor_observer()) o->work(flops, bytes_read, bytes_written);
}

}  // namespace ember
