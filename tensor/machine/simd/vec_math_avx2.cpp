// exp, tanh, erf and GELU in 8-float AVX2 vectors. Compiled with -mavx2 -mfma; called
// only on CPUs that have both (tensor/machine/vec_math.cpp decides).
#include <immintrin.h>
#include <sleef.h>

#include "tensor/machine/simd/vec_math_impl.h"

namespace ember::detail::simd {
namespace {
__m256 load(const float* p) { return _mm256_loadu_ps(p); }
void store(float* p, __m256 v) { _mm256_storeu_ps(p, v); }
__m256 exp_v(__m256 v) { return Sleef_expf8_u10avx2(v); }
__m256 tanh_v(__m256 v) { return Sleef_tanhf8_u10avx2(v); }
void exp_w(const float* x, float* y, int64_t n) { apply<8, __m256, load, store, exp_v>(x, y, n); }
void tanh_w(const float* x, float* y, int64_t n) { apply<8, __m256, load, store, tanh_v>(x, y, n); }
}  // namespace
const Table& table_avx2() {
  static constexpr Table t = table_of<exp_w, tanh_w>();
  return t;
}
}  // namespace ember::detail::simd
