/// @file
/// Threads: OpenMP above a size threshold, with a work split that does not
/// depend on how many threads actually run it.
///
/// parallel_for cuts [0, n) into one contiguous piece per configured thread
/// (set_num_threads, tensor/machine/threads.h), and every reduction combines partial results in a
/// fixed order, so results depend only on the data and the configured count:
/// the same seed and thread count give bitwise-identical results. How many
/// OS threads run those pieces follows the machine's load
/// (tensor/machine/governor.h); the pieces, and so the bits, stay the same.
#pragma once

#include <cstdint>
#include <exception>

#include <omp.h>

#include "tensor/machine/governor.h"
#include "tensor/machine/threads.h"

namespace ember {

namespace detail {

/// Below this many elements an op runs on one thread: waking threads costs
/// more than it saves.
inline constexpr int64_t kGrain = 32768;

/// Calls body(begin, end) over [0, n), split into one contiguous range per
/// configured thread when n >= grain (fewer ranges when n is small). The
/// ranges depend on n, grain and get_num_threads() only.
template <typename F>
void parallel_for(int64_t n, int64_t grain, const F& body) {
  int nt = get_num_threads();
  if (n < grain || nt <= 1 || omp_in_parallel()) {
    if (n > 0) body(int64_t{0}, n);
    return;
  }
  const int64_t max_pieces = (n + grain - 1) / grain;
  const int pieces = static_cast<int>(nt < max_pieces ? nt : max_pieces);
  const int run = threads_to_run(pieces);
  auto piece = [&](int64_t p) {
    const int64_t begin = n * p / pieces, end = n * (p + 1) / pieces;
    if (begin < end) body(begin, end);
  };
  if (run <= 1) {
    for (int p = 0; p < pieces; ++p) piece(p);
    return;
  }
  // An error thrown by one piece (an ember::Error from a kernel) must not end
  // the program, as an exception leaving an OpenMP region would: the first
  // one is kept, the other pieces finish, and it is rethrown here.
  std::exception_ptr error;
#pragma omp parallel num_threads(run)
  {
    const int t = omp_get_thread_num(), T = omp_get_num_threads();
    for (int p = t; p < pieces; p += T) {
      try {
        piece(p);
      } catch (...) {
#pragma omp critical(ember_parallel_for_error)
        if (!error) error = std::current_exception();
      }
    }
  }
  if (error) std::rethrow_exception(error);
}

}  // namespace detail
}  // namespace ember
