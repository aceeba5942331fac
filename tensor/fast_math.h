/// @file
/// exp and erf for the kernels: whole rows through tensor/machine/vec_math.h's SIMD
/// versions for float32, the C library's for float64 (which gradcheck runs).
#pragma once

#include <cmath>
#include <cstdint>

#include "tensor/machine/vec_math.h"

namespace ember::detail {

/// o[k] = exp(x[k] - shift), k < n (o may be x).
template <typename T>
inline void exp_shifted(const T* x, T shift, T* o, int64_t n) {
  for (int64_t k = 0; k < n; ++k) o[k] = x[k] - shift;
  if constexpr (sizeof(T) == 4) {
    exp_f32(o, o, n);
  } else {
    for (int64_t k = 0; k < n; ++k) o[k] = std::exp(o[k]);
  }
}

/// o[k] = exp(x[k] * scale - shift), k < n (o may be x).
template <typename T>
inline void exp_affine(const T* x, T scale, T shift, T* o, int64_t n) {
  for (int64_t k = 0; k < n; ++k) o[k] = x[k] * scale - shift;
  if constexpr (sizeof(T) == 4) {
    exp_f32(o, o, n);
  } else {
    for (int64_t k = 0; k < n; ++k) o[k] = std::exp(o[k]);
  }
}

/// o[k] = erf(x[k] * scale), k < n (o may be x).
template <typename T>
inline void erf_scaled(const T* x, T scale, T* o, int64_t n) {
  for (int64_t k = 0; k < n; ++k) o[k] = x[k] * scale;
  if constexpr (sizeof(T) == 4) {
    erf_f32(o, o, n);
  } else {
    for (int64_t k = 0; k < n; ++k) o[k] = std::erf(o[k]);
  }
}

}  // namespace ember::detail
