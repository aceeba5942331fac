/// @file
/// Threads: OpenMP above a size threshold, with a work split that does not
/// depend on how many threads actually run it.
///
/// parallel_for cuts [0, n) into one contiguous piece per configured thread
/// (set_num_threads), and every reduction combines partial results in a
/// fixed order, so results depend only on the data and the configured count:
/// the same seed and thread count give bitwise-identical results.
///
/// How many OS threads run those pieces adapts to the machine. On a laptop
/// another program often holds a core; a parallel region then waits, at every
/// op, for a thread the OS has not scheduled (one scheduler time slice, about
/// 10 ms, for an op that takes 50 µs), and a training step runs 10-50x
/// slower. So about every 50 ms, ember looks at how many threads are runnable
/// on the machine that are not its own (/proc/loadavg minus its own running
/// threads); when a core is taken, fewer threads run the same pieces (one
/// thread runs them one after another), and when it is free again they come
/// back. Quick to yield (two samples in a row), slower to take back (three).
/// set_adaptive_threads(false) turns this off (EMBER_ADAPTIVE_THREADS=0 in
/// the environment does too).
#pragma once

#include <cstdint>

#include <omp.h>

namespace ember {

/// Sets the threads used by ember's kernels (matmul included: ember splits
/// each product itself and runs OpenBLAS single-threaded, see tensor/blas.h).
/// Safe to call while other threads run ops: each op reads the count once
/// when it starts (the new count applies to ops that start after the call).
void set_num_threads(int n);
/// The most set_num_threads accepts (OpenMP aborts when it cannot create a thread).
inline constexpr int kMaxThreads = 1024;
int get_num_threads();

/// Whether the number of running threads follows the machine's load (on by
/// default; results are the same bits either way).
void set_adaptive_threads(bool on);
bool adaptive_threads();
/// How many threads a parallel op would run right now: get_num_threads(), or
/// fewer while other programs hold cores.
int threads_in_use();

namespace detail {

/// Below this many elements an op runs on one thread: waking threads costs
/// more than it saves.
inline constexpr int64_t kGrain = 32768;

/// The decision, apart from its inputs so that it can be tested: fed one
/// sample at a time (the cores ember may use, and how many runnable threads
/// on the machine are not ember's), it answers how many threads to run.
class ThreadGovernor {
 public:
  /// Yields after `down` samples in a row that say so, takes back after `up`.
  explicit ThreadGovernor(int down = 2, int up = 3) : down_(down), up_(up) {}
  int update(int wanted, int cores, int others);
  int running(int wanted) const { return running_ < 1 || running_ > wanted ? wanted : running_; }

 private:
  int down_, up_;
  int running_ = 0;  // 0: not decided yet (run them all)
  int pending_ = 0, streak_ = 0;
};

/// What the governor is fed; replaceable for tests (nullptr: the real one,
/// which reads sched_getaffinity, /proc/loadavg and /proc/self/task).
struct LoadSample {
  int cores;
  int others;
};
using LoadSensor = LoadSample (*)();
void set_load_sensor(LoadSensor sensor);

/// How many threads should run `pieces` pieces now (1..pieces). Samples the
/// machine at most every 50 ms.
int threads_to_run(int pieces);

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
#pragma omp parallel num_threads(run)
  {
    const int t = omp_get_thread_num(), T = omp_get_num_threads();
    for (int p = t; p < pieces; p += T) piece(p);
  }
}

}  // namespace detail
}  // namespace ember
