// Which width runs: decided once, from CPUID. SSE2 is part of x86-64, so the
// 4-float versions are compiled here, in the baseline build.
#include "tensor/machine/vec_math.h"

#include <immintrin.h>
#include <sleef.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "base/error.h"

#include "tensor/machine/simd/vec_math_impl.h"

namespace ember::detail {

namespace simd {
const Table& table_avx512();
const Table& table_avx2();

namespace {
__m128 load(const float* p) { return _mm_loadu_ps(p); }
void store(float* p, __m128 v) { _mm_storeu_ps(p, v); }
__m128 exp_v(__m128 v) { return Sleef_expf4_u10sse2(v); }
__m128 tanh_v(__m128 v) { return Sleef_tanhf4_u10sse2(v); }
void exp_w(const float* x, float* y, int64_t n) { apply<4, __m128, load, store, exp_v>(x, y, n); }
void tanh_w(const float* x, float* y, int64_t n) { apply<4, __m128, load, store, tanh_v>(x, y, n); }
}  // namespace
const Table& table_sse2() {
  static constexpr Table t = table_of<exp_w, tanh_w>();
  return t;
}
}  // namespace simd

namespace {
std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const std::string& w : v) out += (out.empty() ? "" : ", ") + w;
  return out;
}

struct Choice {
  const simd::Table* f;
  const char* isa;
};
// The widest the CPU runs; EMBER_SIMD=AVX2 or SSE2 in the environment asks
// for a narrower one (to compare them, and for the tests of each). A width
// the CPU lacks, or a name that is none of them, is an error: a request that
// cannot be honoured must not be silently replaced by another width.
Choice choose() {
  const std::vector<std::string> widths = vec_math_isas_for_this_cpu();
  const char* asked = std::getenv("EMBER_SIMD");
  const std::string want = asked && *asked ? asked : widths.front();
  auto known = [&](const char* w) { return want == w; };
  EMBER_CHECK(known("AVX-512") || known("AVX2") || known("SSE2"), "EMBER_SIMD",
              "\"" << want << "\" is not a width ember has: AVX-512, AVX2 or SSE2");
  EMBER_CHECK(std::find(widths.begin(), widths.end(), want) != widths.end(), "EMBER_SIMD",
              want << " was asked for, but this CPU runs only " << join(widths));
  if (want == "AVX-512") return Choice{&simd::table_avx512(), "AVX-512"};
  if (want == "AVX2") return Choice{&simd::table_avx2(), "AVX2"};
  return Choice{&simd::table_sse2(), "SSE2"};
}

const Choice& choice() {
  static const Choice c = choose();
  return c;
}
}  // namespace

std::vector<std::string> vec_math_isas_for_this_cpu() {
  __builtin_cpu_init();
  std::vector<std::string> out;
  if (__builtin_cpu_supports("avx512f")) out.push_back("AVX-512");
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) out.push_back("AVX2");
  out.push_back("SSE2");  // part of x86-64
  return out;
}

void exp_f32(const float* x, float* y, int64_t n) { choice().f->exp(x, y, n); }
void erf_f32(const float* x, float* y, int64_t n) { choice().f->erf(x, y, n); }
void tanh_f32(const float* x, float* y, int64_t n) { choice().f->tanh(x, y, n); }
void gelu_f32(const float* x, float* y, int64_t n) { choice().f->gelu(x, y, n); }
void gelu_backward_f32(const float* x, const float* g, float* y, int64_t n) { choice().f->gelu_backward(x, g, y, n); }
void gelu_tanh_f32(const float* x, float* y, int64_t n) { choice().f->gelu_tanh(x, y, n); }
void gelu_tanh_backward_f32(const float* x, const float* g, float* y, int64_t n) {
  choice().f->gelu_tanh_backward(x, g, y, n);
}
const char* vec_math_isa() { return choice().isa; }

}  // namespace ember::detail
