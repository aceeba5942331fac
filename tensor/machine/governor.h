/// @file
/// The thread governor: how many of ember's threads actually run, following
/// the machine's load. (The work split never changes: see tensor/parallel.h.)
///
/// On a laptop another program often holds a core; a parallel region then
/// waits, at every op, for a thread the OS has not scheduled (one scheduler
/// time slice, about 10 ms, for an op that takes 50 µs), and a training step
/// runs 10-50x slower. So about every 50 ms, ember looks at how many threads
/// are runnable on the machine that are not its own (/proc/loadavg minus its
/// own running threads); when a core is taken, fewer threads run the same
/// pieces (one thread runs them one after another), and when it is free again
/// they come back. Quick to yield (two samples in a row), slower to take back
/// (three). set_adaptive_threads(false) turns this off (EMBER_ADAPTIVE_THREADS=0
/// in the environment does too; =1 keeps it on; any other value is an error).
#pragma once

namespace ember {

/// Whether the number of running threads follows the machine's load (on by
/// default; results are the same bits either way).
void set_adaptive_threads(bool on);
bool adaptive_threads();
/// How many threads a parallel op would run right now: get_num_threads(), or
/// fewer while other programs hold cores.
int threads_in_use();

namespace detail {

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

}  // namespace detail
}  // namespace ember
