// The loop each tensor/machine/simd/*.cpp instantiates for its vector type: whole
// vectors through SLEEF, the tail through a zero-padded vector.
#pragma once

#include <cstdint>
#include <cstring>

namespace ember::detail::simd {

template <int W, typename V, V (*Load)(const float*), void (*Store)(float*, V), V (*F)(V)>
void apply(const float* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + W <= n; i += W) Store(y + i, F(Load(x + i)));
  if (i < n) {
    alignas(64) float tail[W] = {};
    std::memcpy(tail, x + i, static_cast<size_t>(n - i) * sizeof(float));
    Store(tail, F(Load(tail)));
    std::memcpy(y + i, tail, static_cast<size_t>(n - i) * sizeof(float));
  }
}

// erf from exp: Abramowitz & Stegun 7.1.26, erf(x) = 1 - t P(t) exp(-x^2)
// with t = 1 / (1 + p |x|), |error| <= 1.5e-7 before float32 rounding, and
// a short series near 0 (below).
// SLEEF's 1-ULP erff costs about 2 ns per float on a recent Xeon; this form
// on SLEEF's exp about a sixth of that. The loops vectorize at the width the
// including file is compiled for.
template <void (*Exp)(const float*, float*, int64_t)>
void erf_from_exp(const float* x, float* y, int64_t n) {
  constexpr int64_t kChunk = 256;
  alignas(64) float t[kChunk], e[kChunk];
  for (int64_t i = 0; i < n; i += kChunk) {
    const int64_t m = n - i < kChunk ? n - i : kChunk;
    const float* xi = x + i;
    for (int64_t k = 0; k < m; ++k) {
      const float ax = xi[k] < 0 ? -xi[k] : xi[k];
      t[k] = 1.0f / (1.0f + 0.3275911f * ax);
      e[k] = -ax * ax;
    }
    Exp(e, e, m);
    for (int64_t k = 0; k < m; ++k) {
      float p = 1.061405429f;
      p = p * t[k] - 1.453152027f;
      p = p * t[k] + 1.421413741f;
      p = p * t[k] - 0.284496736f;
      p = p * t[k] + 0.254829592f;
      const float r = 1.0f - p * t[k] * e[k];
      // Near 0 that difference cancels (erf(1e-4) would keep 3 digits):
      // there the series 2/sqrt(pi) (x - x^3/3 + x^5/10 - x^7/42 + x^9/216
      // - x^11/1320), whose next term is below 1.3e-8 for |x| < 0.5.
      const float x2 = xi[k] * xi[k];
      float q = -1.0f / 1320;
      q = q * x2 + 1.0f / 216;
      q = q * x2 - 1.0f / 42;
      q = q * x2 + 1.0f / 10;
      q = q * x2 - 1.0f / 3;
      q = q * x2 + 1.0f;
      const float series = 1.1283791670955126f * xi[k] * q;
      y[i + k] = x2 < 0.25f ? series : (xi[k] < 0 ? -r : r);
    }
  }
}

}  // namespace ember::detail::simd
