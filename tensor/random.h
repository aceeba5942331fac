/// @file
/// Generator: a specified pseudo-random number generator, so that the same
/// seed gives the same numbers on every machine and standard library.
///
/// The bit source is PCG32 (O'Neill's "XSH RR" permuted congruential generator:
/// 64-bit LCG state, 32-bit output). Floats are built from the top bits; normal
/// samples use our own Box-Muller transform (never std::normal_distribution,
/// whose output differs between standard libraries).
#pragma once

#include <cstdint>

namespace ember {

class Generator {
 public:
  explicit Generator(uint64_t seed = 0, uint64_t stream = 0) { manual_seed(seed, stream); }

  void manual_seed(uint64_t seed, uint64_t stream = 0);
  uint32_t next_u32();
  uint64_t next_u64() { return (uint64_t{next_u32()} << 32) | next_u32(); }
  float next_float();    // uniform in [0, 1), 24 random bits
  double next_double();  // uniform in [0, 1), 53 random bits
  /// Uniform integer in [0, n) without modulo bias (rejection sampling).
  uint64_t next_below(uint64_t n);
  /// A pair of independent standard normals (Box-Muller on two doubles).
  void next_normal_pair(double& z0, double& z1);

  /// The whole state, for checkpoints: restoring it replays the same numbers.
  struct State {
    uint64_t state, inc;
  };
  State get_state() const { return {state_, inc_}; }
  void set_state(State s) {
    state_ = s.state;
    inc_ = s.inc;
  }

 private:
  uint64_t state_ = 0, inc_ = 1;
};

/// The generator used when none is passed (rand(), randn(), module
/// initialization without a generator, Dropout without a seed). It is shared
/// by every thread: ember's functions hold its lock (GeneratorLock) while
/// they draw from it, so each call takes one unbroken run of its numbers.
/// Determinism: from one thread, the same seed gives the same numbers; from
/// several, the order in which calls take the lock decides who gets which
/// run. For reproducible multi-threaded work give each thread a Generator.
Generator& default_generator();
/// Re-seeds the default generator (under its lock).
void manual_seed(uint64_t seed);

namespace detail {
/// Told, on this thread, of each generator an ember function is about to
/// draw from (GeneratorLock tells it). Its one user is checkpoint
/// (autograd/checkpoint.cpp), which notes the state a generator had before
/// its first draw, to replay the same numbers when it recomputes. Null when
/// nothing watches.
struct DrawWatcher {
  virtual void drawing(Generator& gen) = 0;

 protected:
  ~DrawWatcher() = default;
};
extern thread_local DrawWatcher* draw_watcher;
}  // namespace detail

/// Holds the default generator's lock while drawing from `gen`, if gen is
/// the default generator (otherwise it does nothing: a Generator of your own
/// is yours alone). Code that calls default_generator().next_*() directly
/// from several threads should hold one too.
class GeneratorLock {
 public:
  explicit GeneratorLock(Generator& gen);
  ~GeneratorLock();
  GeneratorLock(const GeneratorLock&) = delete;
  GeneratorLock& operator=(const GeneratorLock&) = delete;

 private:
  bool locked_ = false;
};

}  // namespace ember
