/// @file
/// bfloat16: a float32 with the low 16 bits of its mantissa cut off.
///
///   float32   s eeeeeeee mmmmmmmmmmmmmmmmmmmmmmm   1 + 8 + 23 bits
///   bfloat16  s eeeeeeee mmmmmmm                   1 + 8 +  7 bits
///
/// The same 8-bit exponent, so the same range (1e-38 .. 3e38) and no
/// overflow where float32 has none; 8 significant bits instead of 24, so a
/// value is known to about 2 decimal digits: the unit roundoff (the largest
/// relative error of one rounding) is u = 2^-8 = 0.0039. Two bfloat16 values
/// multiply exactly in float32 (8 + 8 = 16 significant bits fit in 24),
/// which is why a bfloat16 product that accumulates in float32 loses only
/// the rounding of its inputs: the bound is worked out in
/// tensor/gemm/step7_bfloat16.cpp and tested in tests/tensor_bfloat16_test.cpp.
///
/// Conversion from float32 rounds to nearest, ties to even (the rule of
/// every IEEE operation, and of the vcvtne2ps2bf16 instruction): add
/// 0x7FFF plus the lowest kept bit, then cut. A NaN stays a NaN (quiet);
/// values past the largest bfloat16 round to infinity, as float32 does.
/// Conversion to float32 is exact: append 16 zero bits.
///
/// In ember bfloat16 is a storage type: tensors of it are converted (to),
/// copied, viewed, printed, saved (safetensors "BF16") and multiplied
/// (matmul, which accumulates and returns float32); every other op refuses it
/// with an error naming the op. Mixed precision training does not need more:
/// under an autocast scope (autograd/autocast.h) the products round their
/// float32 inputs to bfloat16 while packing them, and everything else stays
/// float32.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "tensor/bfloat16_each.h"

namespace ember {

/// The bits of the bfloat16 nearest to f (ties to even).
inline uint16_t bf16_bits_from_float(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((u >> 16) | 0x0040u);  // NaN: quiet, sign kept
  const uint32_t lowest_kept = (u >> 16) & 1u;
  u += 0x7FFFu + lowest_kept;  // below half: no carry; above: carry; exactly half: carry only onto an odd value
  return static_cast<uint16_t>(u >> 16);
}

/// The float32 of a bfloat16 (exact).
inline float float_from_bf16_bits(uint16_t b) {
  const uint32_t u = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

/// f rounded to bfloat16 and back: the value a bfloat16 product sees.
inline float round_to_bf16(float f) { return float_from_bf16_bits(bf16_bits_from_float(f)); }

/// One bfloat16 value. Conversions are explicit, so no template written for
/// float or double computes in bfloat16 by accident (it would not compile).
struct bfloat16 {
  uint16_t bits = 0;
  bfloat16() = default;
  template <typename T>
    requires std::is_arithmetic_v<T>
  explicit bfloat16(T v) : bits(bf16_bits_from_float(static_cast<float>(v))) {}  // float64 goes through float32
  template <typename T>
    requires std::is_arithmetic_v<T>
  explicit operator T() const {
    return static_cast<T>(float_from_bf16_bits(bits));
  }
  static bfloat16 from_bits(uint16_t b) {
    bfloat16 x;
    x.bits = b;
    return x;
  }
};
static_assert(sizeof(bfloat16) == 2);

}  // namespace ember
