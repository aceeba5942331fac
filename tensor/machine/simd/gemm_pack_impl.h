// What packing needs at each width, written once: the bfloat16 rounding
// loop (tensor/bfloat16_each.h, which the compiler vectorizes
// at the width of the file that includes this) and a 32-bit block transpose
// with the tile transpose of that width.
// Included by tensor/machine/simd/gemm_avx2.cpp and gemm_avx512.cpp.
#pragma once

#include <cstdint>
#include <cstring>

#include "tensor/bfloat16_each.h"

namespace ember::gemm::simd {

// dst[c * ds + r] = src[r * ss + c]: tiles of up to T rows and exactly T
// columns through `tile` (registers; a tile of n < T rows reads and writes
// only its n rows, as a micro-panel of MR = 12 rows needs), the columns
// past the last whole tile one value at a time.
template <int T, void (*tile)(const uint32_t*, int64_t, int, uint32_t*, int64_t)>
void transpose_loop(const uint32_t* src, int64_t ss, int64_t rows, int64_t cols, uint32_t* dst, int64_t ds) {
  const int64_t full_c = cols / T * T;
  for (int64_t r = 0; r < rows; r += T) {
    const int n = static_cast<int>(rows - r < T ? rows - r : T);
    for (int64_t c = 0; c < full_c; c += T) tile(src + r * ss + c, ss, n, dst + c * ds + r, ds);
  }
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = full_c; c < cols; ++c) dst[c * ds + r] = src[r * ss + c];
}

}  // namespace ember::gemm::simd
