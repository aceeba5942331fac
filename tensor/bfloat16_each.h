/// @file
/// The rounding of tensor/bfloat16.h (nearest, ties to even, a NaN kept a
/// quiet NaN) for n floats at once, without a branch, so that the compiler
/// vectorizes the loop at the width of the file that includes this header.
/// A header of its own, and the function `static`: the files of
/// tensor/machine/simd/ are compiled with -mavx2 or -mavx512f and include
/// only this, so each keeps a copy compiled for its own instruction set (an
/// inline function shared by the linker could run AVX-512 code on a CPU
/// without it).
#pragma once

#include <cstdint>
#include <cstring>

namespace ember {

/// The bits u of one float32, rounded: its bfloat16's bits (in the low 16).
static inline uint32_t bf16_bits_of_one(uint32_t u) {
  const uint32_t rounded = (u + 0x7FFFu + ((u >> 16) & 1u)) >> 16;  // + 0x7FFF + the lowest kept bit, then cut
  const uint32_t quiet_nan = (u >> 16) | 0x0040u;
  return (u & 0x7FFFFFFFu) > 0x7F800000u ? quiet_nan : rounded;
}

static inline void bf16_bits_of_each(const float* src, uint16_t* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    uint32_t u;
    std::memcpy(&u, src + i, sizeof u);
    dst[i] = static_cast<uint16_t>(bf16_bits_of_one(u));
  }
}

}  // namespace ember
