// The bfloat16 GEMM microkernel: vdpbf16ps on bfloat16 pairs, MR 12, NR 32.
// Each instruction multiplies 16 pairs of B by one pair of A (broadcast)
// and adds both products to 16 float32 accumulators: 64 flops, twice an
// FMA's. Compiled with -mavx512f -mavx512bf16; called only on CPUs that
// have AVX512_BF16 (tensor/gemm/microkernels.cpp decides).
#include <immintrin.h>

#include <cstring>

#include "tensor/gemm/microkernel.h"

namespace ember::gemm::simd {
namespace {
struct Avx512Bf16 {
  using Elem = uint16_t;  // bfloat16 bits, in pairs along k
  using Acc = __m512;
  using BReg = __m512bh;
  using AReg = __m512bh;
  static constexpr int W = 16, K = 2;
  static Acc zero() { return _mm512_setzero_ps(); }
  static BReg load(const uint16_t* p) { return (__m512bh)_mm512_load_si512(p); }
  static AReg broadcast(const uint16_t* p) {
    int32_t pair;
    std::memcpy(&pair, p, sizeof pair);
    return (__m512bh)_mm512_set1_epi32(pair);
  }
  static Acc fma(AReg a, BReg b, Acc c) { return _mm512_dpbf16_ps(c, a, b); }
  static Acc loadu(const float* p) { return _mm512_loadu_ps(p); }
  static Acc add(Acc x, Acc y) { return _mm512_add_ps(x, y); }
  static void storeu(float* p, Acc v) { _mm512_storeu_ps(p, v); }
};
}  // namespace
void gemm_bf16_avx512(int64_t kc, const void* a, const void* b, float* c, int64_t ldc, bool accumulate) {
  microkernel_tile<Avx512Bf16, 12, 2>(kc, a, b, c, ldc, accumulate);
}

// The peak microbenchmark (tensor/gemm/microkernels.cpp, measured_peak_gflops):
// 24 independent vdpbf16ps chains, one of each per iteration (32 pairs: 64 flops); returns a sum so the work is kept.
float peak_loop_avx512_bf16(int64_t iters) {
  __m512 acc[24];
#pragma GCC unroll 32
  for (int i = 0; i < 24; ++i) acc[i] = _mm512_set1_ps(1.0f + 0.01f * static_cast<float>(i));
  const __m512bh x = (__m512bh)_mm512_set1_epi32(0x3F803F80), y = (__m512bh)_mm512_set1_epi32(0x3A803A80);
  for (int64_t r = 0; r < iters; ++r) {
#pragma GCC unroll 32
    for (int i = 0; i < 24; ++i) acc[i] = _mm512_dpbf16_ps(acc[i], x, y);
  }
  __m512 s = acc[0];
  for (int i = 1; i < 24; ++i) s = _mm512_add_ps(s, acc[i]);
  return _mm512_cvtss_f32(s);
}
}  // namespace ember::gemm::simd
