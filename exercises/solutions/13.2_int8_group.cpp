// Exercise 13.2: Quantizing a group to int8, a reference solution.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "exercises/exercise.h"

namespace ex13_2 {

float quantize_group(const float* x, int n, int8_t* q) {
  float amax = 0;
  for (int k = 0; k < n; ++k) amax = std::max(amax, std::fabs(x[k]));  // max |x|
  const float s = amax / 127.0f;  // one step: the largest magnitude is 127 of them
  for (int k = 0; k < n; ++k) {
    const float r = s > 0 ? x[k] / s : 0.0f;  // a group of zeros: s = 0, nothing to divide
    const float nearest = std::nearbyint(r);  // to nearest, ties to even (the default rounding mode)
    q[k] = static_cast<int8_t>(std::min(127.0f, std::max(-127.0f, nearest)));
  }
  return s;
}

void dequantize_group(const int8_t* q, int n, float s, float* out) {
  for (int k = 0; k < n; ++k) out[k] = static_cast<float>(q[k]) * s;
}

double error_bound(const float* x, int n) {
  float amax = 0;
  for (int k = 0; k < n; ++k) amax = std::max(amax, std::fabs(x[k]));
  const double s = amax / 127.0f;  // the step quantize_group will take
  // half a step, and the sliver the rounded division x / s can add (|x / s| <= 127)
  return (0.5 + std::ldexp(1.0, -17)) * s;
}

}  // namespace ex13_2
