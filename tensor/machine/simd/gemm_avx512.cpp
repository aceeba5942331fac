// The float32 GEMM microkernel in 16-float AVX-512 vectors: MR 12, NR 32 (24
// accumulators of AVX-512's 32 registers). Compiled with -mavx512f -mfma;
// called only on CPUs that have AVX-512 F (tensor/machine/gemm_kernels.cpp).
#include <immintrin.h>

#include "tensor/gemm/microkernel.h"
#include "tensor/machine/simd/gemm_pack_impl.h"

namespace ember::gemm::simd {
namespace {
struct Avx512 {
  using Elem = float;
  using Acc = __m512;
  using BReg = __m512;
  using AReg = __m512;
  static constexpr int W = 16, K = 1;
  static Acc zero() { return _mm512_setzero_ps(); }
  static BReg load(const float* p) { return _mm512_load_ps(p); }
  static AReg broadcast(const float* p) { return _mm512_set1_ps(*p); }
  static Acc fma(AReg a, BReg b, Acc c) { return _mm512_fmadd_ps(a, b, c); }
  static Acc loadu(const float* p) { return _mm512_loadu_ps(p); }
  static Acc add(Acc x, Acc y) { return _mm512_add_ps(x, y); }
  static void storeu(float* p, Acc v) { _mm512_storeu_ps(p, v); }
};
// A 16 x 16 tile of 32-bit values transposed in registers: pairs of rows
// interleaved by 32 then 64 bits (4 x 4 blocks within each 128-bit lane),
// then the 128-bit lanes gathered across rows.
void tile16(const uint32_t* src, int64_t ss, int n, uint32_t* dst, int64_t ds) {
  __m512i r[16], t[16], u[16];
  for (int i = 0; i < 16; ++i) r[i] = i < n ? _mm512_loadu_si512(src + i * ss) : _mm512_setzero_si512();
  const __mmask16 keep = static_cast<__mmask16>((1u << n) - 1);  // the n rows that exist
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_unpacklo_epi32(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_epi32(r[2 * i], r[2 * i + 1]);
  }
  for (int i = 0; i < 4; ++i) {  // u[4i + j], lane L: rows 4i..4i+3 of column 4L + j
    u[4 * i + 0] = _mm512_unpacklo_epi64(t[4 * i], t[4 * i + 2]);
    u[4 * i + 1] = _mm512_unpackhi_epi64(t[4 * i], t[4 * i + 2]);
    u[4 * i + 2] = _mm512_unpacklo_epi64(t[4 * i + 1], t[4 * i + 3]);
    u[4 * i + 3] = _mm512_unpackhi_epi64(t[4 * i + 1], t[4 * i + 3]);
  }
  for (int j = 0; j < 4; ++j) {
    const __m512i p = _mm512_shuffle_i32x4(u[j], u[4 + j], 0x44), q = _mm512_shuffle_i32x4(u[j], u[4 + j], 0xEE);
    const __m512i p2 = _mm512_shuffle_i32x4(u[8 + j], u[12 + j], 0x44), q2 = _mm512_shuffle_i32x4(u[8 + j], u[12 + j], 0xEE);
    _mm512_mask_storeu_epi32(dst + (0 + j) * ds, keep, _mm512_shuffle_i32x4(p, p2, 0x88));
    _mm512_mask_storeu_epi32(dst + (4 + j) * ds, keep, _mm512_shuffle_i32x4(p, p2, 0xDD));
    _mm512_mask_storeu_epi32(dst + (8 + j) * ds, keep, _mm512_shuffle_i32x4(q, q2, 0x88));
    _mm512_mask_storeu_epi32(dst + (12 + j) * ds, keep, _mm512_shuffle_i32x4(q, q2, 0xDD));
  }
}
}  // namespace
void transpose32_avx512(const uint32_t* src, int64_t ss, int64_t rows, int64_t cols, uint32_t* dst, int64_t ds) {
  transpose_loop<16, tile16>(src, ss, rows, cols, dst, ds);
}
void bf16_bits_avx512(const float* src, uint16_t* dst, int64_t n) { bf16_bits_of_each(src, dst, n); }
void bf16_pair_panels_avx512(const float* src, int64_t ks, int64_t rows, int64_t kc, int unit, uint32_t* dst) {
  bf16_pair_panels_each(src, ks, rows, kc, unit, dst);
}
void gemm_f32_avx512(int64_t kc, const void* a, const void* b, float* c, int64_t ldc, bool accumulate) {
  microkernel_tile<Avx512, 12, 2>(kc, a, b, c, ldc, accumulate);
}

// The peak microbenchmark (tensor/machine/gemm_kernels.cpp, measured_peak_gflops):
// 24 independent 16-float FMA chains, one FMA of each per iteration; returns a sum so the work is kept.
float peak_loop_avx512(int64_t iters) {
  __m512 acc[24];
#pragma GCC unroll 32
  for (int i = 0; i < 24; ++i) acc[i] = _mm512_set1_ps(1.0f + 0.01f * static_cast<float>(i));
  const __m512 x = _mm512_set1_ps(0.999f), y = _mm512_set1_ps(0.001f);
  for (int64_t r = 0; r < iters; ++r) {
#pragma GCC unroll 32
    for (int i = 0; i < 24; ++i) acc[i] = _mm512_fmadd_ps(acc[i], x, y);
  }
  __m512 s = acc[0];
  for (int i = 1; i < 24; ++i) s = _mm512_add_ps(s, acc[i]);
  return _mm512_cvtss_f32(s);
}
}  // namespace ember::gemm::simd
