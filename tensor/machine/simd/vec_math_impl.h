// The loop each tensor/machine/simd/*.cpp instantiates for its vector type: whole
// vectors through SLEEF, the tail through a zero-padded vector.
// The AVX2 and AVX-512 files are compiled with -mfma, and the compiler fuses
// the multiply-adds of the loops below (erf's polynomial, GELU's formulas):
// those two widths give the same bits, the SSE2 copy (no FMA) its own.
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
inline constexpr int64_t kChunk = 256;

// y[k] = erf(x[k]) for m <= kChunk values; e[k] = exp(-x[k]^2) on the way
// (GELU's backward reuses it: its density is that exp at x / sqrt 2).
template <void (*Exp)(const float*, float*, int64_t)>
[[gnu::always_inline]] inline void erf_chunk(const float* xi, float* y, float* e, int64_t m) {
  alignas(64) float t[kChunk];
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
    y[k] = x2 < 0.25f ? series : (xi[k] < 0 ? -r : r);
  }
}

template <void (*Exp)(const float*, float*, int64_t)>
void erf_from_exp(const float* x, float* y, int64_t n) {
  alignas(64) float e[kChunk];
  for (int64_t i = 0; i < n; i += kChunk) erf_chunk<Exp>(x + i, y + i, e, n - i < kChunk ? n - i : kChunk);
}

// ---- GELU, both forms, forward and backward, one pass over each chunk ----
// Written once for float and double. ErfChunk(s, r, e, m) gives r = erf(s)
// and e = exp(-s^2) for m <= kChunk values; Tanh(t, t, m) tanh in place.
// float32 passes this width's (SLEEF's exp and tanh, erf_chunk); float64
// (tensor/elementwise.cpp, which gradcheck runs) the C library's.
template <typename T>
inline constexpr T kSqrtHalf = T(0.70710678118654752440);    // 1 / sqrt 2
template <typename T>
inline constexpr T kInvSqrt2Pi = T(0.39894228040143267794);  // 1 / sqrt(2 pi)
template <typename T>
inline constexpr T kSqrt2OverPi = T(0.79788456080286535588);  // sqrt(2 / pi)
template <typename T>
inline constexpr T kCubic = T(0.044715);
template <typename T>
using ErfChunk = void (*)(const T*, T*, T*, int64_t);
template <typename T>
using ArrayFn = void (*)(const T*, T*, int64_t);

// gelu(x) = x/2 (1 + erf(x / sqrt 2))
template <typename T, ErfChunk<T> Erf>
void gelu_erf(const T* x, T* y, int64_t n) {
  alignas(64) T s[kChunk], e[kChunk], r[kChunk];
  for (int64_t i = 0; i < n; i += kChunk) {
    const int64_t m = n - i < kChunk ? n - i : kChunk;
    for (int64_t k = 0; k < m; ++k) s[k] = x[i + k] * kSqrtHalf<T>;
    Erf(s, r, e, m);
    for (int64_t k = 0; k < m; ++k) y[i + k] = T(0.5) * x[i + k] * (T(1) + r[k]);
  }
}
// g gelu'(x) = g (Phi(x) + x phi(x)), Phi(x) = (1 + erf(x / sqrt 2)) / 2,
// phi(x) = exp(-x^2 / 2) / sqrt(2 pi): the exp erf computed on the way.
template <typename T, ErfChunk<T> Erf>
void gelu_erf_backward(const T* x, const T* g, T* y, int64_t n) {
  alignas(64) T s[kChunk], e[kChunk], r[kChunk];
  for (int64_t i = 0; i < n; i += kChunk) {
    const int64_t m = n - i < kChunk ? n - i : kChunk;
    for (int64_t k = 0; k < m; ++k) s[k] = x[i + k] * kSqrtHalf<T>;
    Erf(s, r, e, m);
    for (int64_t k = 0; k < m; ++k)
      y[i + k] = g[i + k] * (T(0.5) * (T(1) + r[k]) + x[i + k] * e[k] * kInvSqrt2Pi<T>);
  }
}
// gelu(x) = x/2 (1 + tanh(u)), u = sqrt(2/pi) (x + 0.044715 x^3)
template <typename T, ArrayFn<T> Tanh>
void gelu_tanh(const T* x, T* y, int64_t n) {
  alignas(64) T t[kChunk];
  for (int64_t i = 0; i < n; i += kChunk) {
    const int64_t m = n - i < kChunk ? n - i : kChunk;
    for (int64_t k = 0; k < m; ++k) t[k] = kSqrt2OverPi<T> * (x[i + k] + kCubic<T> * x[i + k] * x[i + k] * x[i + k]);
    Tanh(t, t, m);
    for (int64_t k = 0; k < m; ++k) y[i + k] = T(0.5) * x[i + k] * (T(1) + t[k]);
  }
}
// g gelu'(x) = g ((1 + t)/2 + x/2 (1 - t^2) sqrt(2/pi) (1 + 3 0.044715 x^2))
template <typename T, ArrayFn<T> Tanh>
void gelu_tanh_backward(const T* x, const T* g, T* y, int64_t n) {
  alignas(64) T t[kChunk];
  for (int64_t i = 0; i < n; i += kChunk) {
    const int64_t m = n - i < kChunk ? n - i : kChunk;
    for (int64_t k = 0; k < m; ++k) t[k] = kSqrt2OverPi<T> * (x[i + k] + kCubic<T> * x[i + k] * x[i + k] * x[i + k]);
    Tanh(t, t, m);
    for (int64_t k = 0; k < m; ++k) {
      const T v = x[i + k];
      y[i + k] = g[i + k] * (T(0.5) * (T(1) + t[k]) +
                             T(0.5) * v * (T(1) - t[k] * t[k]) * kSqrt2OverPi<T> * (T(1) + T(3) * kCubic<T> * v * v));
    }
  }
}

/// Every function of one width (tensor/machine/vec_math.cpp picks a table).
struct Table {
  void (*exp)(const float*, float*, int64_t);
  void (*erf)(const float*, float*, int64_t);
  void (*tanh)(const float*, float*, int64_t);
  void (*gelu)(const float*, float*, int64_t);
  void (*gelu_backward)(const float*, const float*, float*, int64_t);
  void (*gelu_tanh)(const float*, float*, int64_t);
  void (*gelu_tanh_backward)(const float*, const float*, float*, int64_t);
};
// The table of the width whose exp and tanh these are; instantiated in that
// width's file, so that every loop above is compiled at it.
template <void (*Exp)(const float*, float*, int64_t), void (*Tanh)(const float*, float*, int64_t)>
constexpr Table table_of() {
  return {Exp,
          erf_from_exp<Exp>,
          Tanh,
          gelu_erf<float, erf_chunk<Exp>>,
          gelu_erf_backward<float, erf_chunk<Exp>>,
          gelu_tanh<float, Tanh>,
          gelu_tanh_backward<float, Tanh>};
}

}  // namespace ember::detail::simd
