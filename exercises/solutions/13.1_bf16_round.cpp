// Exercise 13.1: Rounding a float to bfloat16, a reference solution.
#include <cstdint>
#include <cstring>

#include "exercises/exercise.h"

namespace ex13_1 {

uint16_t to_bf16(float x) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((u >> 16) | 0x0040u);  // NaN: keep it one
  const uint32_t half = 0x8000u, low = u & 0xFFFFu, kept = u >> 16;
  // above half: up; below: down; exactly half: up only from an odd last bit
  const bool up = low > half || (low == half && (kept & 1u));
  return static_cast<uint16_t>(kept + (up ? 1u : 0u));  // a carry into the exponent is right (up to infinity)
}

}  // namespace ex13_1
