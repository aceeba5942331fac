/// @file
/// Threads: OpenMP above a size threshold. Work is split into contiguous
/// index ranges, and every reduction combines partial results in a fixed
/// order, so results depend only on the data (and, for a few reductions, on
/// nothing else at all): the same seed and thread count give bitwise-identical
/// results.
#pragma once

#include <cstdint>

#include <omp.h>

namespace ember {

/// Sets the threads used by ember's kernels and by OpenBLAS. Safe to call
/// while other threads run ops: each op reads the count once when it starts
/// (the new count applies to ops that start after the call). OpenBLAS reads
/// its own count inside a running gemm, so for exact reproducibility set the
/// count before starting threads that compute.
void set_num_threads(int n);
/// The most set_num_threads accepts (OpenMP aborts when it cannot create a thread).
inline constexpr int kMaxThreads = 1024;
int get_num_threads();

namespace detail {

/// Below this many elements an op runs on one thread: waking threads costs
/// more than it saves.
inline constexpr int64_t kGrain = 32768;

/// Calls body(begin, end) over [0, n), split into one contiguous range per
/// thread when n >= grain.
template <typename F>
void parallel_for(int64_t n, int64_t grain, const F& body) {
  int nt = get_num_threads();
  if (n < grain || nt <= 1 || omp_in_parallel()) {
    if (n > 0) body(int64_t{0}, n);
    return;
  }
  int64_t max_chunks = (n + grain - 1) / grain;
  if (nt > max_chunks) nt = static_cast<int>(max_chunks);
#pragma omp parallel num_threads(nt)
  {
    int64_t t = omp_get_thread_num(), T = omp_get_num_threads();
    int64_t begin = n * t / T, end = n * (t + 1) / T;
    if (begin < end) body(begin, end);
  }
}

}  // namespace detail
}  // namespace ember
