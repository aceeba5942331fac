#include "tensor/machine/threads.h"

#include <omp.h>

#include <atomic>

#include "base/error.h"

namespace ember {

namespace {
// Atomic: set_num_threads may run while other threads compute; an op reads
// the count once, so it runs with the old count or the new one.
std::atomic<int>& thread_count() {
  static std::atomic<int> n{[] {
    int max = omp_get_max_threads();
    return max > 0 ? max : 1;
  }()};
  return n;
}
}  // namespace

void set_num_threads(int n) {
  EMBER_CHECK(n >= 1 && n <= kMaxThreads, "set_num_threads",
              "thread count must be in [1, " << kMaxThreads << "], got " << n);
  thread_count().store(n, std::memory_order_relaxed);
}

int get_num_threads() { return thread_count().load(std::memory_order_relaxed); }

}  // namespace ember
