// AVX2's table (tensor/gemm/simd/isa.h): the float32 GEMM
// microkernel in 8-float vectors, MR 6, NR 16 (12 accumulators of AVX2's 16
// registers), and an 8 x 8 tile transpose. Compiled with -mavx2 -mfma; used
// only on CPUs that have both (tensor/gemm/microkernels.cpp decides).
#include <immintrin.h>

#include "tensor/gemm/simd/isa_impl.h"

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
  static Acc set1(float v) { return _mm256_set1_ps(v); }
  static float first(Acc v) { return _mm_cvtss_f32(_mm256_castps256_ps128(v)); }
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

const IsaKernels kAvx2 = isa_kernels<Avx2, 6, 8, tile8>();

}  // namespace ember::gemm::simd
