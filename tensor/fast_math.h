/// @file
/// Vectorizable float32 exp and erf.
///
/// std::exp and std::erf are scalar library calls: a loop over a million floats
/// calling them cannot use SIMD, and GELU/softmax become the slowest ops of a
/// Transformer step. These are short polynomial approximations written as
/// plain arithmetic, so the compiler vectorizes the loops that call them.
///   fast_exp: range reduction x = k ln2 + r, |r| <= ln2/2, exp(r) by a
///             degree-6 polynomial (Cephes' coefficients), times 2^k built
///             from the exponent bits. Relative error ~1e-7 (float precision).
///             exp(-inf) = 0 exactly, exp(+inf) = inf, NaN stays NaN.
///   fast_erf: Abramowitz & Stegun 7.1.26, |error| <= 1.5e-7.
/// Only float32 uses them; float64 keeps the exact library functions (and so
/// gradcheck, which runs in float64, checks the exact formulas).
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

namespace ember::detail {

[[gnu::always_inline]] inline float fast_exp(float x) {
  const float hi = 88.3762626647949f, lo = -87.3365447504019f;
  float xc = x > hi ? hi : (x < lo ? lo : x);
  // k = round(xc / ln2), computed without floor() so it vectorizes on SSE2
  float fx = xc * 1.44269504088896341f + 0.5f;
  int32_t k = static_cast<int32_t>(fx);
  k -= fx < static_cast<float>(k);  // truncation rounds toward zero; fix negatives
  float kf = static_cast<float>(k);
  // r = xc - k ln2, with ln2 split in two parts for accuracy
  float r = xc - kf * 0.693359375f + kf * 2.12194440e-4f;
  float r2 = r * r;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r2 + r + 1.0f;
  float scale = std::bit_cast<float>(static_cast<int32_t>((k + 127) << 23));
  float y = p * scale;
  y = x < lo ? 0.0f : y;
  y = x > hi ? std::numeric_limits<float>::infinity() : y;
  return x != x ? x : y;
}

[[gnu::always_inline]] inline float fast_erf(float x) {
  const float ax = x < 0 ? -x : x;
  const float t = 1.0f / (1.0f + 0.3275911f * ax);
  float poly = 1.061405429f;
  poly = poly * t - 1.453152027f;
  poly = poly * t + 1.421413741f;
  poly = poly * t - 0.284496736f;
  poly = poly * t + 0.254829592f;
  const float y = 1.0f - poly * t * fast_exp(-ax * ax);
  return x < 0 ? -y : y;
}

/// The dispatch point: float32 gets the fast versions, float64 the exact ones.
template <typename T>
[[gnu::always_inline]] inline T exp_t(T x) {
  if constexpr (sizeof(T) == 4) return fast_exp(x);
  else return std::exp(x);
}
template <typename T>
[[gnu::always_inline]] inline T erf_t(T x) {
  if constexpr (sizeof(T) == 4) return fast_erf(x);
  else return std::erf(x);
}

}  // namespace ember::detail
