// exp, tanh, erf and GELU in 16-float AVX-512 vectors. Compiled with -mavx512f; called
// only on CPUs that have it (tensor/machine/vec_math.cpp decides).
#include <immintrin.h>
#include <sleef.h>

#include "tensor/machine/simd/vec_math_impl.h"

namespace ember::detail::simd {
namespace {
__m512 load(const float* p) { return _mm512_loadu_ps(p); }
void store(float* p, __m512 v) { _mm512_storeu_ps(p, v); }
__m512 exp_v(__m512 v) { return Sleef_expf16_u10avx512f(v); }
__m512 tanh_v(__m512 v) { return Sleef_tanhf16_u10avx512f(v); }
void exp_w(const float* x, float* y, int64_t n) { apply<16, __m512, load, store, exp_v>(x, y, n); }
void tanh_w(const float* x, float* y, int64_t n) { apply<16, __m512, load, store, tanh_v>(x, y, n); }
}  // namespace
const Table& table_avx512() {
  static constexpr Table t = table_of<exp_w, tanh_w>();
  return t;
}
}  // namespace ember::detail::simd
