// Exercise 13.1: Rounding a float to bfloat16 (chapter 13, docs/book/13_gemm_and_bfloat16.md)
//
// Write to_bf16(x): the 16 bits of the bfloat16 nearest to the float32 x.
// bfloat16 keeps a float32's sign, its 8 exponent bits and the top 7 of its
// 23 mantissa bits: the high half of the float's 32 bits. Cutting the low
// half off would round toward zero; round to nearest instead, and when x is
// exactly half-way between two bfloat16 values, to the one whose last kept
// bit is 0 (ties to even). Values past the largest bfloat16 become
// infinity, as the rule says. A NaN must stay a NaN: if its payload sits
// only in the low half, cutting it off would leave infinity, so set a kept
// mantissa bit (0x0040, the "quiet" bit).
//
// Read the bits with std::memcpy (uint32_t u; std::memcpy(&u, &x, 4)).
// Look in tensor/bfloat16.h only after you have tried.
//
// Check it:  bash scripts/exercise.sh 13.1
#include <cstdint>
#include <cstring>

#include "exercises/exercise.h"

namespace ex13_1 {

uint16_t to_bf16(float x) {
  (void)x;
  TODO("the high half of x's bits, rounded to nearest with ties to even; a NaN stays a NaN");
}

}  // namespace ex13_1
