// exp and erf in 8-float AVX2 vectors. Compiled with -mavx2 -mfma; called
// only on CPUs that have both (tensor/machine/vec_math.cpp decides).
#include <immintrin.h>
#include <sleef.h>

#include "tensor/machine/simd/vec_math_impl.h"

namespace ember::detail::simd {
namespace {
__m256 load(const float* p) { return _mm256_loadu_ps(p); }
void store(float* p, __m256 v) { _mm256_storeu_ps(p, v); }
__m256 exp_v(__m256 v) { return Sleef_expf8_u10avx2(v); }
}  // namespace
void exp_avx2(const float* x, float* y, int64_t n) { apply<8, __m256, load, store, exp_v>(x, y, n); }
void erf_avx2(const float* x, float* y, int64_t n) { erf_from_exp<exp_avx2>(x, y, n); }
}  // namespace ember::detail::simd
