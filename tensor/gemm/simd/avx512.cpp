// AVX-512's table (tensor/gemm/simd/isa.h): the float32 GEMM
// microkernel in 16-float vectors, MR 12, NR 32 (24 accumulators of
// AVX-512's 32 registers), and a 16 x 16 tile transpose. Compiled with
// -mavx512f -mfma; used only on CPUs that have AVX-512 F
// (tensor/gemm/microkernels.cpp).
#include <immintrin.h>

#include "tensor/gemm/simd/isa_impl.h"

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
  static Acc set1(float v) { return _mm512_set1_ps(v); }
  static float first(Acc v) { return _mm512_cvtss_f32(v); }
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

const IsaKernels kAvx512 = isa_kernels<Avx512, 12, 16, tile16>();

}  // namespace ember::gemm::simd
