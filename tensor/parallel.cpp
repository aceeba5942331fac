#include "tensor/parallel.h"

#include <cblas.h>

#include <atomic>
#include <mutex>

#include "tensor/error.h"

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
std::mutex& blas_mutex() {
  static std::mutex m;
  return m;
}
}  // namespace

void set_num_threads(int n) {
  EMBER_CHECK(n >= 1 && n <= kMaxThreads, "set_num_threads",
              "thread count must be in [1, " << kMaxThreads << "], got " << n);
  std::lock_guard<std::mutex> lock(blas_mutex());  // one caller at a time changes both counts
  thread_count().store(n, std::memory_order_relaxed);
  openblas_set_num_threads(n);
}

int get_num_threads() { return thread_count().load(std::memory_order_relaxed); }

}  // namespace ember
