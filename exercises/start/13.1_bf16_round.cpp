// Exercise 13.1: Rounding a float to bfloat16 (chapter 13, docs/book/13_gemm_and_bfloat16.md)
//
// Write to_bf16(x): the 16 bits of the bfloat16 nearest to the float32 x.
// bfloat16 keeps a float32's sign, its 8 exponent bits and the top 7 of its
// 23 mantissa bits: the high half of the float's 32 bits. Cutting the low
// half off would round toward zero; round to nearest instead, and when x is
// exactly half-way between two bfloat16 values, to the one whose last kept
// bit is 0 (ties to even). Values past the largest bfloat16 become
// infinity, as the rule says. A NaN must stay a NaN (of the same sign).
//
// Think about:
//   * the low half decides the rounding: which values of it are below,
//     exactly at and above half a step?
//   * rounding up is adding 1 to the high half: what happens when the
//     mantissa bits are all 1? (for the largest finite values, and for a NaN)
//   * a NaN is an exponent of all 1s with a mantissa that is not 0: what is
//     left of a NaN whose mantissa bits all sit in the low half, once it is
//     cut off? what can you set so that it stays a NaN?
//   * the bits of a float: std::memcpy them into a uint32_t (<cstring>).
//
// Compare with, after you try: tensor/bfloat16.h.
//
// Check it:  bash scripts/exercise.sh 13.1
#include <cstdint>
#include <cstring>

#include "exercises/exercise.h"

namespace ex13_1 {

uint16_t to_bf16(float x) {
  (void)x;
  TODO("the high half of x's bits, rounded to nearest with ties to even; and what does a NaN need?");
}

}  // namespace ex13_1
