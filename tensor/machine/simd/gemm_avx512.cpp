// The float32 GEMM microkernel in 16-float AVX-512 vectors: MR 12, NR 32 (24
// accumulators of AVX-512's 32 registers). Compiled with -mavx512f -mfma;
// called only on CPUs that have AVX-512 F (tensor/machine/gemm_kernels.cpp).
#include <immintrin.h>

#include "tensor/gemm/microkernel.h"

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
}  // namespace
void gemm_f32_avx512(int64_t kc, const void* a, const void* b, float* c, int64_t ldc, bool accumulate) {
  microkernel_tile<Avx512, 12, 2>(kc, a, b, c, ldc, accumulate);
}
}  // namespace ember::gemm::simd
