// The float32 GEMM microkernel in 8-float AVX2 vectors: MR 6, NR 16 (12
// accumulators of AVX2's 16 registers). Compiled with -mavx2 -mfma; called
// only on CPUs that have both (tensor/machine/gemm_kernels.cpp decides).
#include <immintrin.h>

#include "tensor/gemm/microkernel.h"
#include "tensor/machine/simd/gemm_pack_impl.h"

namespace ember::gemm::simd {
namespace {
struct Avx2 {
  using Elem = float;
  using Acc = __m256;
  using BReg = __m256;
  using AReg = __m256;
  static constexpr int W = 8, K = 1;
  static Acc zero() { return _mm256_setzero_ps(); }
  static BReg load(const float* p) { return _mm256_load_ps(p); }
  static AReg broadcast(const float* p) { return _mm256_broadcast_ss(p); }
  static Acc fma(AReg a, BReg b, Acc c) { return _mm256_fmadd_ps(a, b, c); }
  static Acc loadu(const float* p) { return _mm256_loadu_ps(p); }
  static Acc add(Acc x, Acc y) { return _mm256_add_ps(x, y); }
  static void storeu(float* p, Acc v) { _mm256_storeu_ps(p, v); }
};
// An 8 x 8 tile of 32-bit values transposed in registers: rows interleaved
// by 32 then 64 bits, then the 128-bit halves swapped across rows.
void tile8(const uint32_t* src, int64_t ss, int n, uint32_t* dst, int64_t ds) {
  __m256 r[8], t[8], u[8];
  for (int i = 0; i < 8; ++i) r[i] = i < n ? _mm256_loadu_ps(reinterpret_cast<const float*>(src + i * ss)) : _mm256_setzero_ps();
  // the n rows that exist: lanes i < n of the mask set
  const __m256i keep = _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  for (int i = 0; i < 4; ++i) {
    t[2 * i] = _mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  for (int i = 0; i < 2; ++i) {
    u[4 * i + 0] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], 0x44);
    u[4 * i + 1] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], 0xEE);
    u[4 * i + 2] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0x44);
    u[4 * i + 3] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0xEE);
  }
  for (int j = 0; j < 4; ++j) {
    _mm256_maskstore_ps(reinterpret_cast<float*>(dst + j * ds), keep, _mm256_permute2f128_ps(u[j], u[4 + j], 0x20));
    _mm256_maskstore_ps(reinterpret_cast<float*>(dst + (4 + j) * ds), keep, _mm256_permute2f128_ps(u[j], u[4 + j], 0x31));
  }
}
}  // namespace
void transpose32_avx2(const uint32_t* src, int64_t ss, int64_t rows, int64_t cols, uint32_t* dst, int64_t ds) {
  transpose_loop<8, tile8>(src, ss, rows, cols, dst, ds);
}
void bf16_bits_avx2(const float* src, uint16_t* dst, int64_t n) { bf16_bits_of_each(src, dst, n); }
void bf16_pair_panels_avx2(const float* src, int64_t ks, int64_t rows, int64_t kc, int unit, uint32_t* dst) {
  bf16_pair_panels_each(src, ks, rows, kc, unit, dst);
}
void gemm_f32_avx2(int64_t kc, const void* a, const void* b, float* c, int64_t ldc, bool accumulate) {
  microkernel_tile<Avx2, 6, 2>(kc, a, b, c, ldc, accumulate);
}

// The peak microbenchmark (tensor/machine/gemm_kernels.cpp, measured_peak_gflops):
// 12 independent 8-float FMA chains, one FMA of each per iteration; returns a sum so the work is kept.
float peak_loop_avx2(int64_t iters) {
  __m256 acc[12];
#pragma GCC unroll 32
  for (int i = 0; i < 12; ++i) acc[i] = _mm256_set1_ps(1.0f + 0.01f * static_cast<float>(i));
  const __m256 x = _mm256_set1_ps(0.999f), y = _mm256_set1_ps(0.001f);
  for (int64_t r = 0; r < iters; ++r) {
#pragma GCC unroll 32
    for (int i = 0; i < 12; ++i) acc[i] = _mm256_fmadd_ps(acc[i], x, y);
  }
  __m256 s = acc[0];
  for (int i = 1; i < 12; ++i) s = _mm256_add_ps(s, acc[i]);
  return _mm_cvtss_f32(_mm256_castps256_ps128(s));
}
}  // namespace ember::gemm::simd
