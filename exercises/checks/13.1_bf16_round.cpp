// Checks exercise 13.1: to_bf16 on the edge values (ties both ways, the
// largest values, infinities, zeros, subnormals, NaNs), then on every one of
// the 65536 high halves with the low halves that decide a rounding, against
// ember's own conversion (tensor/bfloat16.h). A wrong result is compared with
// the usual mistakes' (the low half cut off, ties always up, a lost sign,
// saturation at the largest finite value, subnormals flushed to zero, a NaN
// cut to infinity or rounded into the sign bit) to name the one it is.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

#include "exercises/checks/check.h"

namespace ex13_1 {
uint16_t to_bf16(float x);
}

namespace {

float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}
std::string hex(uint32_t v, int digits) {
  char s[16];
  std::snprintf(s, sizeof s, "0x%0*X", digits, v);
  return s;
}

bool is_nan_bits(uint32_t in) { return (in & 0x7FFFFFFFu) > 0x7F800000u; }

// What a wrong result of a NaN input is.
std::string nan_mistake(uint32_t in, uint16_t got) {
  if ((got & 0x7FFF) == 0x7F80)
    return "the NaN's mantissa bits all sat in the low half: cut off, an exponent of all 1s with a mantissa of 0 "
           "is left, which is infinity. Which mantissa bit can you set so that it stays a NaN?";
  if ((got >> 15) != (in >> 31))
    return "the NaN was rounded: 1 added to a mantissa of all 1s carries through the exponent into the sign bit. "
           "A NaN is not rounded";
  return "a NaN keeps its sign and an exponent of all 1s, with a mantissa that is not 0";
}

// What a wrong result of a number (not a NaN) is.
std::string rounding_mistake(uint32_t in, uint16_t got, uint16_t want) {
  const uint32_t low = in & 0xFFFFu, kept = in >> 16;
  if ((got ^ want) == 0x8000) return "the sign bit is lost or flipped: it is the top bit, and it stays";
  if (low == 0x8000 && got == kept + 1 && !(kept & 1u))
    return "a tie went up from an even last bit: exactly half-way goes to the neighbour whose last kept bit is 0";
  if (low == 0x8000 && got == kept && (kept & 1u))
    return "a tie stayed down at an odd last bit: exactly half-way goes to the neighbour whose last kept bit is 0, "
           "here the one above";
  if (got == kept && low > 0x8000)
    return "that is the high half cut off, which rounds toward zero: more than half a step rounds up, to the next "
           "bfloat16 away from zero";
  if ((want & 0x7FFF) == 0x7F80 && (got & 0x7FFF) == 0x7F7F)
    return "the result stops at the largest finite bfloat16: rounding up carries into the exponent, and the rule "
           "says that is infinity";
  if ((in & 0x7F800000u) == 0 && (got & 0x7FFF) == 0 && (want & 0x7FFF) != 0)
    return "a subnormal was flushed to zero: subnormals round by the same rule as every other value";
  if (low < 0x8000 && got == kept + 1) return "less than half a step rounds down: the high half stays as it is";
  return "round to nearest: the low half below 0x8000 keeps the high half, above adds 1 to it, at 0x8000 only an "
         "odd last bit goes up";
}

void expect_bits(uint32_t in, uint16_t want, const std::string& what) {
  const uint16_t got = ex13_1::to_bf16(from_bits(in));
  check::expect(got == want, "to_bf16(" + what + ", bits " + hex(in, 8) + ") is " + hex(got, 4) + ", but should be " +
                                 hex(want, 4),
                rounding_mistake(in, got, want));
}

}  // namespace

check::Exercise check::exercise() {
  return {"13.1", "Rounding a float to bfloat16", "docs/book/13_gemm_and_bfloat16.md", {
    {"values that bfloat16 holds exactly keep their bits", [] {
       expect_bits(0x3F800000u, 0x3F80, "1");
       expect_bits(0xC0490000u, 0xC049, "-3.140625");
       expect_bits(0x80000000u, 0x8000, "-0");
     }},
    {"below half-way rounds down, above rounds up", [] {
       expect_bits(0x3F807FFFu, 0x3F80, "1 + a bit less than half a step");
       expect_bits(0x3F808001u, 0x3F81, "1 + a bit more than half a step");
       expect_bits(0xBF808001u, 0xBF81, "-(1 + a bit more than half a step)");
     }},
    {"exactly half-way rounds to the even neighbour", [] {
       expect_bits(0x3F808000u, 0x3F80, "1 + half a step (to even 0x3F80)");
       expect_bits(0x3F818000u, 0x3F82, "1 + 3 half steps (to even 0x3F82)");
     }},
    {"the largest values, infinities and subnormals", [] {
       expect_bits(0x7F7F7FFFu, 0x7F7F, "just below half a step past the largest bfloat16");
       expect_bits(0x7F7FFFFFu, 0x7F80, "the largest float32 (rounds to infinity)");
       expect_bits(0x7F800000u, 0x7F80, "infinity");
       expect_bits(0xFF800000u, 0xFF80, "-infinity");
       expect_bits(0x00018000u, 0x0002, "a subnormal tie (to even 0x0002)");
       expect_bits(0x00008001u, 0x0001, "the smallest subnormal past half-way");
     }},
    {"a NaN stays a NaN", [] {
       for (uint32_t nan : {0x7FC00000u, 0x7F800001u, 0xFF800001u, 0x7FFFFFFFu}) {
         const uint16_t got = ex13_1::to_bf16(from_bits(nan));
         check::expect((got & 0x7F80) == 0x7F80 && (got & 0x007F) != 0 && (got >> 15) == (nan >> 31),
                       "to_bf16(NaN with bits " + hex(nan, 8) + ") is " + hex(got, 4) + ", which is not a NaN of the same sign",
                       nan_mistake(nan, got));
       }
     }},
    {"every high half, with the low halves that decide a rounding, as ember rounds them", [] {
       const uint32_t lows[] = {0x0000, 0x0001, 0x7FFF, 0x8000, 0x8001, 0xFFFF};
       int64_t checked = 0;
       for (uint32_t high = 0; high < 65536; ++high)
         for (uint32_t low : lows) {
           const uint32_t in = high << 16 | low;
           const float x = from_bits(in);
           const uint16_t got = ex13_1::to_bf16(x), want = ember::bf16_bits_from_float(x);
           if (is_nan_bits(in) && !std::isnan(ember::float_from_bf16_bits(got)))
             check::fail("to_bf16 of the NaN " + hex(in, 8) + " is " + hex(got, 4) + ", not a NaN",
                         nan_mistake(in, got));
           if (!is_nan_bits(in) && got != want)
             check::fail("to_bf16 of bits " + hex(in, 8) + " is " + hex(got, 4) + ", but should be " + hex(want, 4),
                         rounding_mistake(in, got, want));
           ++checked;
         }
       check::note(std::to_string(checked) + " values checked, every sign and exponent.");
     }},
  }};
}
