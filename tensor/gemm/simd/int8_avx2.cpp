// Step 8's tiles at AVX2 (tensor/gemm/simd/int8_tiles.h), also the int8
// kernel of an AVX-512 CPU without VNNI. Compiled with -mavx2 -mfma.
//
// vpmaddubsw multiplies unsigned bytes by signed bytes and adds pairs into
// int16 with saturation; vpmaddwd then adds pairs of those into int32. To
// stay exact, the activation's sign moves onto the weight: |q| (at most
// 127) times sign(q) w (in [-127, 127]) gives products of at most 127^2
// and pair sums of at most 32258, below int16's 32767, so nothing
// saturates and each lane gets the same four-product sum as vpdpbusd.
#include <immintrin.h>

#include "tensor/gemm/simd/int8_tiles.h"

namespace ember::gemm::simd {
namespace {
struct Avx2I8 {
  static constexpr int L = 8;
  static constexpr bool kOffset = false;
  using I = __m256i;
  using F = __m256;
  struct A {
    __m256i bc, abs;
  };
  static I izero() { return _mm256_setzero_si256(); }
  static F fzero() { return _mm256_setzero_ps(); }
  static I load(const char* p) { return _mm256_load_si256(reinterpret_cast<const __m256i*>(p)); }
  static A prep(int32_t four) {
    const __m256i bc = _mm256_set1_epi32(four);
    return {bc, _mm256_abs_epi8(bc)};
  }
  static I dot(I acc, const A& a, I b) {
    const __m256i pairs = _mm256_maddubs_epi16(a.abs, _mm256_sign_epi8(b, a.bc));
    return _mm256_add_epi32(acc, _mm256_madd_epi16(pairs, _mm256_set1_epi16(1)));
  }
  static I wsum(I acc, I) { return acc; }
  static I correct(I acc, I) { return acc; }
  static F cvt(I x) { return _mm256_cvtepi32_ps(x); }
  static F set1(float x) { return _mm256_set1_ps(x); }
  static F mul(F x, F y) { return _mm256_mul_ps(x, y); }
  static F fmadd(F x, F y, F z) { return _mm256_fmadd_ps(x, y, z); }
  static F loadu(const float* p) { return _mm256_loadu_ps(p); }
  static void storeu(float* p, F v) { _mm256_storeu_ps(p, v); }
  static F widen_int8(const char* p) {
    return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))));
  }
  static F widen_bf16(const char* p) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
  }
};
}  // namespace

// 16 registers: MR 2 x NV 1 (two vectors a panel) for many rows, and one
// row over 2 panels.
const Int8Kernels kInt8Avx2 = int8_kernels<Avx2I8>(2, 1, 2);

}  // namespace ember::gemm::simd
