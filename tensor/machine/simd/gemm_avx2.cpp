// The float32 GEMM microkernel in 8-float AVX2 vectors: MR 6, NR 16 (12
// accumulators of AVX2's 16 registers). Compiled with -mavx2 -mfma; called
// only on CPUs that have both (tensor/machine/gemm_kernels.cpp decides).
#include <immintrin.h>

#include "tensor/gemm/microkernel.h"

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
}  // namespace
void gemm_f32_avx2(int64_t kc, const void* a, const void* b, float* c, int64_t ldc, bool accumulate) {
  microkernel_tile<Avx2, 6, 2>(kc, a, b, c, ldc, accumulate);
}
}  // namespace ember::gemm::simd
