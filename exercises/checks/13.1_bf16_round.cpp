// Checks exercise 13.1: to_bf16 on the edge values (ties both ways, the
// largest values, infinities, zeros, subnormals, NaNs), then on every one of
// the 65536 high halves with the low halves that decide a rounding, against
// ember's own conversion (tensor/bfloat16.h).
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
void expect_bits(uint32_t in, uint16_t want, const std::string& what, const std::string& hint = "") {
  const uint16_t got = ex13_1::to_bf16(from_bits(in));
  check::expect(got == want, "to_bf16(" + what + ", bits " + hex(in, 8) + ") is " + hex(got, 4) + ", but should be " +
                                 hex(want, 4), hint);
}

}  // namespace

check::Exercise check::exercise() {
  return {"13.1", "Rounding a float to bfloat16", "docs/book/13_gemm_and_bfloat16.md", {
    {"values that bfloat16 holds exactly keep their bits", [] {
       expect_bits(0x3F800000u, 0x3F80, "1");
       expect_bits(0xC0490000u, 0xC049, "-3.140625");
       expect_bits(0x80000000u, 0x8000, "-0", "the sign bit is the top bit: it stays");
     }},
    {"below half-way rounds down, above rounds up", [] {
       expect_bits(0x3F807FFFu, 0x3F80, "1 + a bit less than half a step");
       expect_bits(0x3F808001u, 0x3F81, "1 + a bit more than half a step", "more than half: round up (add 1 to the high half)");
       expect_bits(0xBF808001u, 0xBF81, "-(1 + a bit more than half a step)", "negative values round away from zero the same way: the bits do not care about the sign");
     }},
    {"exactly half-way rounds to the even neighbour", [] {
       expect_bits(0x3F808000u, 0x3F80, "1 + half a step (to even 0x3F80)", "a tie goes to the neighbour whose last bit is 0");
       expect_bits(0x3F818000u, 0x3F82, "1 + 3 half steps (to even 0x3F82)", "a tie goes to the neighbour whose last bit is 0");
     }},
    {"the largest values, infinities and subnormals", [] {
       expect_bits(0x7F7F7FFFu, 0x7F7F, "just below half a step past the largest bfloat16");
       expect_bits(0x7F7FFFFFu, 0x7F80, "the largest float32 (rounds to infinity)", "the carry runs into the exponent: that is infinity, which is right");
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
                       "a NaN whose payload is only in the low half would become infinity: set the quiet bit 0x0040");
       }
     }},
    {"every high half, with the low halves that decide a rounding, as ember rounds them", [] {
       const uint32_t lows[] = {0x0000, 0x0001, 0x7FFF, 0x8000, 0x8001, 0xFFFF};
       int64_t checked = 0;
       for (uint32_t high = 0; high < 65536; ++high)
         for (uint32_t low : lows) {
           const float x = from_bits(high << 16 | low);
           const uint16_t got = ex13_1::to_bf16(x), want = ember::bf16_bits_from_float(x);
           if (std::isnan(x)) {
             check::expect(std::isnan(ember::float_from_bf16_bits(got)), "to_bf16 of the NaN " + hex(high << 16 | low, 8) +
                           " is " + hex(got, 4) + ", not a NaN");
           } else {
             check::expect(got == want, "to_bf16 of bits " + hex(high << 16 | low, 8) + " is " + hex(got, 4) +
                           ", but should be " + hex(want, 4));
           }
           ++checked;
         }
       check::note(std::to_string(checked) + " values checked, every sign and exponent.");
     }},
  }};
}
