#include "tensor/random.h"

#include <mutex>

#include <cmath>
#include <numbers>

namespace ember {

// PCG32 seeding as specified by its reference implementation: the stream
// selects the LCG increment (must be odd), the seed is mixed in with two steps.
void Generator::manual_seed(uint64_t seed, uint64_t stream) {
  state_ = 0;
  inc_ = (stream << 1u) | 1u;
  next_u32();
  state_ += seed;
  next_u32();
}

uint32_t Generator::next_u32() {
  uint64_t old = state_;
  state_ = old * 6364136223846793005ULL + inc_;
  uint32_t xorshifted = static_cast<uint32_t>(((old >> 18u) ^ old) >> 27u);
  uint32_t rot = static_cast<uint32_t>(old >> 59u);
  return (xorshifted >> rot) | (xorshifted << ((32 - rot) & 31));
}

float Generator::next_float() { return static_cast<float>(next_u32() >> 8) * 0x1.0p-24f; }

double Generator::next_double() {
  uint64_t a = next_u32() >> 5, b = next_u32() >> 6;  // 27 + 26 = 53 bits
  return static_cast<double>(a * 67108864ULL + b) * 0x1.0p-53;
}

uint64_t Generator::next_below(uint64_t n) {
  if (n <= 1) return 0;
  // Accept only values below the largest multiple of n, so every residue is equally likely.
  uint64_t limit = UINT64_MAX - UINT64_MAX % n;
  uint64_t r;
  do {
    r = next_u64();
  } while (r >= limit);
  return r % n;
}

void Generator::next_normal_pair(double& z0, double& z1) {
  // Box-Muller: u1 in (0, 1] so log(u1) is finite.
  double u1 = 1.0 - next_double();
  double u2 = next_double();
  double r = std::sqrt(-2.0 * std::log(u1));
  double theta = 2.0 * std::numbers::pi * u2;
  z0 = r * std::cos(theta);
  z1 = r * std::sin(theta);
}

namespace {
std::mutex& default_generator_mutex() {
  static std::mutex m;
  return m;
}
}  // namespace

Generator& default_generator() {
  static Generator g(0);
  return g;
}

void manual_seed(uint64_t seed) {
  GeneratorLock lock(default_generator());
  default_generator().manual_seed(seed);
}

namespace detail {
thread_local DrawWatcher* draw_watcher = nullptr;
}  // namespace detail

GeneratorLock::GeneratorLock(Generator& gen) {
  if (&gen == &default_generator()) {
    default_generator_mutex().lock();
    locked_ = true;
  }
  if (!detail::draw_watcher) return;
  try {
    detail::draw_watcher->drawing(gen);  // under the lock: it reads the state
  } catch (...) {                        // a watcher that refuses the draw (compile/'s tracer)
    if (locked_) default_generator_mutex().unlock();
    throw;
  }
}
GeneratorLock::~GeneratorLock() {
  if (locked_) default_generator_mutex().unlock();
}

}  // namespace ember
