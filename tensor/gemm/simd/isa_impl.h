// What each width gives the GEMM, written once (tensor/gemm/simd/isa.h):
// the bfloat16 rounding loop (tensor/bfloat16_each.h, which the compiler
// vectorizes at the width of the file that includes this), a 32-bit block
// transpose around the tile transpose of that width, the peak loop, and
// isa_kernels(), which puts them in the width's table with its microkernel.
// Included by tensor/gemm/simd/avx2.cpp and avx512.cpp only:
// everything here is a template or static, so each keeps its own copy.
#pragma once

#include <cstdint>
#include <cstring>

#include "tensor/bfloat16_each.h"
#include "tensor/gemm/microkernel.h"
#include "tensor/gemm/simd/isa.h"

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

// bfloat16 pair panels straight from float32 lines (step 7's packing of a
// block whose rows are at unit stride: a row-major B, a transposed A). Line
// k of the block is src + k * ks, rows values long. For each pair q of k
// and each row r, the 32-bit pair (the bfloat16 of line 2q in the low half,
// of line 2q + 1 in the high half: the order vdpbf16ps reads) goes to
// micro-panel r / unit, at pair q, place r % unit; rows past the edge and
// the missing line of an odd depth are zeros. One pass: round, pair and
// place together, where separate calls per line would cost more than the
// work on lines as short as attention's (32 or 128 rows).
template <int U>
static void pair_lines(const float* lo, const float* hi, int64_t n, uint32_t* out) {
  const int64_t len = U > 0 ? U : n;  // a compile-time length for a whole panel
  uint32_t l, h;
  if (!hi) {
    for (int64_t i = 0; i < len; ++i) std::memcpy(&l, lo + i, 4), out[i] = bf16_bits_of_one(l);
    return;
  }
  for (int64_t i = 0; i < len; ++i) {
    std::memcpy(&l, lo + i, 4);
    std::memcpy(&h, hi + i, 4);
    out[i] = bf16_bits_of_one(l) | bf16_bits_of_one(h) << 16;
  }
}
template <int U>
static void bf16_pair_panels_of(const float* src, int64_t ks, int64_t rows, int64_t kc, int unit, uint32_t* dst) {
  const int64_t pairs = (kc + 1) / 2, panel = unit * pairs;  // uint32 per micro-panel
  constexpr int64_t kAhead = 4;  // pairs of lines ahead: ask for them while this pair is rounded
  for (int64_t q = 0; q < pairs; ++q) {
    const float* lo = src + 2 * q * ks;
    const float* hi = 2 * q + 1 < kc ? lo + ks : nullptr;
    if (2 * (q + kAhead) + 1 < kc)
      for (int64_t c = 0; c < rows; c += 16) {
        __builtin_prefetch(lo + 2 * kAhead * ks + c);
        __builtin_prefetch(lo + (2 * kAhead + 1) * ks + c);
      }
    int64_t r = 0;
    uint32_t* at = dst + q * unit;
    for (; r + unit <= rows; r += unit, at += panel) pair_lines<U>(lo + r, hi ? hi + r : nullptr, unit, at);
    if (r < rows) {
      pair_lines<0>(lo + r, hi ? hi + r : nullptr, rows - r, at);
      std::memset(at + (rows - r), 0, static_cast<size_t>(unit - (rows - r)) * 4);
    }
  }
}
// The two units step 7's vdpbf16ps kernel packs (MR 12, NR 32) get loops of
// a fixed length; any other, a loop of the unit's length.
static inline void bf16_pair_panels_each(const float* src, int64_t ks, int64_t rows, int64_t kc, int unit, uint32_t* dst) {
  if (unit == 12) bf16_pair_panels_of<12>(src, ks, rows, kc, unit, dst);
  else if (unit == 32) bf16_pair_panels_of<32>(src, ks, rows, kc, unit, dst);
  else bf16_pair_panels_of<0>(src, ks, rows, kc, unit, dst);
}

// The peak microbenchmark: `chains` independent FMA chains of V::W floats,
// one FMA of each per iteration.
template <typename V, int chains>
float peak_loop(int64_t iters) {
  typename V::Acc acc[chains];
#pragma GCC unroll 32
  for (int i = 0; i < chains; ++i) acc[i] = V::set1(1.0f + 0.01f * static_cast<float>(i));
  const typename V::Acc x = V::set1(0.999f), y = V::set1(0.001f);
  for (int64_t r = 0; r < iters; ++r) {
#pragma GCC unroll 32
    for (int i = 0; i < chains; ++i) acc[i] = V::fma(acc[i], x, y);
  }
  typename V::Acc s = acc[0];
  for (int i = 1; i < chains; ++i) s = V::add(s, acc[i]);
  return V::first(s);
}

// A width's table: V its vector operations (tensor/gemm/microkernel.h), MR
// the microkernel's rows (its NR is 2 vectors), `tile` its T x T transpose.
// The peak loop runs as many chains as the microkernel has accumulators.
template <typename V, int MR, int T, void (*tile)(const uint32_t*, int64_t, int, uint32_t*, int64_t)>
constexpr IsaKernels isa_kernels() {
  return {microkernel_tile<V, MR, 2>, transpose_loop<T, tile>, bf16_bits_of_each, bf16_pair_panels_each,
          peak_loop<V, 2 * MR>, MR, 2 * V::W, 2 * MR, V::W};
}

}  // namespace ember::gemm::simd
