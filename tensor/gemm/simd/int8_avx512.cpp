// Step 8's tiles at AVX-512 with VNNI (tensor/gemm/simd/int8_tiles.h).
// Compiled with -mavx512f -mavx512bw -mavx512vnni -mfma; called only on
// CPUs that have AVX512_VNNI (tensor/gemm/step8_int8.cpp decides).
//
// vpdpbusd multiplies 64 unsigned bytes by 64 signed bytes and adds each
// lane's four products to its int32, exactly. The activations are signed,
// so each broadcast gets 128 added (a flip of the top bit: u = q + 128),
// and the group's sum is corrected at its end: sum (q + 128) w = sum q w +
// 128 sum w, where sum w, per output, is one more vpdpbusd of the weights
// by a vector of ones, shared by the MR rows.
#include <immintrin.h>

#include "tensor/gemm/simd/int8_tiles.h"

namespace ember::gemm::simd {
namespace {
struct Vnni {
  static constexpr int L = 16;
  static constexpr bool kOffset = true;
  using I = __m512i;
  using F = __m512;
  using A = __m512i;
  static I izero() { return _mm512_setzero_si512(); }
  static F fzero() { return _mm512_setzero_ps(); }
  static I load(const char* p) { return _mm512_load_si512(p); }
  static A prep(int32_t four) { return _mm512_set1_epi32(four ^ int32_t(0x80808080u)); }
  static I dot(I acc, A a, I b) { return _mm512_dpbusd_epi32(acc, a, b); }
  static I wsum(I acc, I b) { return _mm512_dpbusd_epi32(acc, _mm512_set1_epi8(1), b); }
  static I correct(I acc, I ws) { return _mm512_sub_epi32(acc, _mm512_slli_epi32(ws, 7)); }
  static F cvt(I x) { return _mm512_cvtepi32_ps(x); }
  static F set1(float x) { return _mm512_set1_ps(x); }
  static F mul(F x, F y) { return _mm512_mul_ps(x, y); }
  static F fmadd(F x, F y, F z) { return _mm512_fmadd_ps(x, y, z); }
  static F loadu(const float* p) { return _mm512_loadu_ps(p); }
  static void storeu(float* p, F v) { _mm512_storeu_ps(p, v); }
  static F widen_int8(const char* p) {
    return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_load_si128(reinterpret_cast<const __m128i*>(p))));
  }
  static F widen_bf16(const char* p) {
    const __m256i h = _mm256_load_si256(reinterpret_cast<const __m256i*>(p));
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
  }
};
}  // namespace

// MR 4 x NV 2 for many rows: 8 int32 accumulators, 2 weight sums and 8
// float32 totals in 32 registers; one row takes 4 panels, 64 outputs, so
// that 4 independent chains hide vpdpbusd's latency.
const Int8Kernels kInt8Avx512Vnni = int8_kernels<Vnni>(4, 2, 4);

// The int8 peak (tensor/gemm/step8_int8.cpp, measured_int8_peak): 24
// independent vpdpbusd chains, one of each per iteration: 64 multiply-adds,
// 128 operations each.
float peak_loop_vnni(int64_t iters) {
  __m512i acc[24];
#pragma GCC unroll 32
  for (int i = 0; i < 24; ++i) acc[i] = _mm512_set1_epi32(i);
  const __m512i x = _mm512_set1_epi8(3), y = _mm512_set1_epi8(-2);
  for (int64_t r = 0; r < iters; ++r) {
#pragma GCC unroll 32
    for (int i = 0; i < 24; ++i) acc[i] = _mm512_dpbusd_epi32(acc[i], x, y);
  }
  __m512i s = acc[0];
  for (int i = 1; i < 24; ++i) s = _mm512_add_epi32(s, acc[i]);
  return static_cast<float>(_mm512_reduce_add_epi32(s));
}

}  // namespace ember::gemm::simd
