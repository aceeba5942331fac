// Random numbers for your framework's initial weights (given: not a lesson).
// The same seed gives the same numbers on every machine and compiler, which
// std::normal_distribution does not promise.
//
//   mini::Generator gen(42);
//   double u = gen.uniform();  // in [0, 1)
//   double z = gen.normal();   // mean 0, standard deviation 1
#pragma once

#include <cmath>
#include <cstdint>
#include <numbers>

namespace mini {

class Generator {
 public:
  explicit Generator(uint64_t seed) : state_(seed) {}
  /// 64 random bits (splitmix64).
  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  /// Uniform in [0, 1), from the top 53 bits.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  /// Uniform in [lo, hi).
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  /// Normal, mean 0 and standard deviation 1 (Box-Muller, one of the pair).
  double normal() {
    const double u1 = 1.0 - uniform();  // in (0, 1]: its log is finite
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * uniform());
  }

 private:
  uint64_t state_;
};

}  // namespace mini
