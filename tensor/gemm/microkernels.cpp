// Which GEMM microkernel runs (tensor/gemm/microkernels.h): CPUID, the
// width vec_math chose (EMBER_SIMD), and EMBER_GEMM.
#include "tensor/gemm/microkernels.h"

#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <string>

#include "base/error.h"
#include "tensor/gemm/simd/isa.h"
#include "tensor/gemm/simd/isa_impl.h"
#include "tensor/machine/vec_math.h"

namespace ember::gemm {

namespace simd {
// simd/avx512_bf16.cpp, compiled with -mavx512bf16
void gemm_bf16_avx512(int64_t kc, const void* a, const void* b, float* c, int64_t ldc, bool accumulate);
float peak_loop_avx512_bf16(int64_t iters);

// The SSE2 peak loop (part of x86-64, so compiled here): 12 chains of a
// multiply and an add, 4 floats each.
float peak_loop_sse2(int64_t iters) {
  __m128 acc[12];
  for (int i = 0; i < 12; ++i) acc[i] = _mm_set1_ps(1.0f + 0.01f * static_cast<float>(i));
  const __m128 x = _mm_set1_ps(0.999f), y = _mm_set1_ps(0.001f);
  for (int64_t r = 0; r < iters; ++r) {
#pragma GCC unroll 12
    for (int i = 0; i < 12; ++i) acc[i] = _mm_add_ps(_mm_mul_ps(acc[i], x), y);
  }
  __m128 s = acc[0];
  for (int i = 1; i < 12; ++i) s = _mm_add_ps(s, acc[i]);
  return _mm_cvtss_f32(s);
}
}  // namespace simd

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::Portable: return "SSE2";
    case Isa::AVX2: return "AVX2";
    case Isa::AVX512: return "AVX-512";
  }
  return "?";
}

std::vector<Isa> isas_for_this_cpu() {
  std::vector<Isa> out;
  for (const std::string& w : detail::vec_math_isas_for_this_cpu()) {  // the same CPUID tests
    if (w == "AVX-512") out.push_back(Isa::AVX512);
    else if (w == "AVX2") out.push_back(Isa::AVX2);
    else out.push_back(Isa::Portable);
  }
  return out;
}

bool has_avx512_bf16() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bf16");
}

Kernel f32_kernel(Isa isa) {
  static const std::vector<Isa> runnable = isas_for_this_cpu();  // the CPU does not change: ask once
  bool runs = false;
  for (Isa i : runnable) runs = runs || i == isa;
  EMBER_CHECK(runs, "gemm", "the " << isa_name(isa) << " microkernel was asked for, but this CPU does not run " << isa_name(isa));
  switch (isa) {
    case Isa::AVX512: return {simd::kAvx512.mr, simd::kAvx512.nr, simd::kAvx512.gemm_f32, false, "AVX-512"};
    case Isa::AVX2: return {simd::kAvx2.mr, simd::kAvx2.nr, simd::kAvx2.gemm_f32, false, "AVX2"};
    case Isa::Portable: break;
  }
  return portable_kernel();
}

Kernel bf16_kernel() {
  EMBER_CHECK(has_avx512_bf16(), "gemm", "the vdpbf16ps microkernel was asked for, but this CPU has no AVX512_BF16");
  return {12, 32, simd::gemm_bf16_avx512, true, "AVX512_BF16", /*k_align=*/2};
}

Isa default_isa() {
  static const Isa isa = [] {
    const std::string w = detail::vec_math_isa();  // checks EMBER_SIMD
    return w == "AVX-512" ? Isa::AVX512 : w == "AVX2" ? Isa::AVX2 : Isa::Portable;
  }();
  return isa;
}

bool bf16_native() { return default_isa() == Isa::AVX512 && has_avx512_bf16(); }

// Packing's two loops at the default width (EMBER_SIMD's, so that the tests
// run them at each): both move or round values one by one in the same way
// at every width, so the choice changes no bit, only the speed.
namespace {
struct PackLoops {
  void (*transpose)(const uint32_t*, int64_t, int64_t, int64_t, uint32_t*, int64_t);
  void (*bf16_bits)(const float*, uint16_t*, int64_t);
  void (*bf16_pair_panels)(const float*, int64_t, int64_t, int64_t, int, uint32_t*);
};
void transpose32_scalar(const uint32_t* src, int64_t ss, int64_t rows, int64_t cols, uint32_t* dst, int64_t ds) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) dst[c * ds + r] = src[r * ss + c];
}
PackLoops pack_loops_at(Isa isa) {
  f32_kernel(isa);  // refuses a width this CPU lacks
  switch (isa) {
    case Isa::AVX512: return PackLoops{simd::kAvx512.transpose32, simd::kAvx512.bf16_bits, simd::kAvx512.bf16_pair_panels};
    case Isa::AVX2: return PackLoops{simd::kAvx2.transpose32, simd::kAvx2.bf16_bits, simd::kAvx2.bf16_pair_panels};
    case Isa::Portable: break;
  }
  return PackLoops{transpose32_scalar, bf16_bits_of, simd::bf16_pair_panels_each};
}
const PackLoops& pack_loops() {
  static const PackLoops loops = pack_loops_at(default_isa());
  return loops;
}
}  // namespace

void transpose32(const void* src, int64_t src_stride, int64_t rows, int64_t cols, void* dst, int64_t dst_stride) {
  pack_loops().transpose(static_cast<const uint32_t*>(src), src_stride, rows, cols, static_cast<uint32_t*>(dst), dst_stride);
}
void transpose32_at(Isa isa, const void* src, int64_t src_stride, int64_t rows, int64_t cols, void* dst, int64_t dst_stride) {
  pack_loops_at(isa).transpose(static_cast<const uint32_t*>(src), src_stride, rows, cols, static_cast<uint32_t*>(dst),
                               dst_stride);
}
void to_bf16_bits_at(Isa isa, const float* src, uint16_t* dst, int64_t n) { pack_loops_at(isa).bf16_bits(src, dst, n); }
void to_bf16_bits(const float* src, uint16_t* dst, int64_t n) { pack_loops().bf16_bits(src, dst, n); }
void to_bf16_pair_panels(const float* src, int64_t ks, int64_t rows, int64_t kc, int unit, void* dst) {
  pack_loops().bf16_pair_panels(src, ks, rows, kc, unit, static_cast<uint32_t*>(dst));
}
void to_bf16_pair_panels_at(Isa isa, const float* src, int64_t ks, int64_t rows, int64_t kc, int unit, void* dst) {
  pack_loops_at(isa).bf16_pair_panels(src, ks, rows, kc, unit, static_cast<uint32_t*>(dst));
}

void interleave16(const uint16_t* lo, const uint16_t* hi, int64_t n, uint16_t* out) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {  // SSE2: part of x86-64
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(lo + i));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(hi + i));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 2 * i), _mm_unpacklo_epi16(a, b));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 2 * i + 8), _mm_unpackhi_epi16(a, b));
  }
  for (; i < n; ++i) {
    out[2 * i] = lo[i];
    out[2 * i + 1] = hi[i];
  }
}

bool f32_matmul_uses_ember() {
  static const bool ember = [] {
    const char* v = std::getenv("EMBER_GEMM");
    const std::string want = v ? v : "";
    EMBER_CHECK(want.empty() || want == "openblas" || want == "ember", "EMBER_GEMM",
                "\"" << want << "\" is not a GEMM ember has: openblas (the default) or ember");
    return want == "ember";
  }();
  return ember;
}

double measured_peak_gflops(Isa isa, bool bf16, int threads, int repeats) {
  if (bf16) bf16_kernel();  // refuses a CPU without AVX512_BF16
  else f32_kernel(isa);     // refuses a width this CPU lacks
  // flops per iteration of each loop: chains x lanes x 2 (x 2 for a pair)
  using Loop = float (*)(int64_t);
  Loop loop = simd::peak_loop_sse2;
  double flops = 12 * 4 * 2;
  if (bf16) loop = simd::peak_loop_avx512_bf16, flops = 24 * 16 * 4;
  else if (isa != Isa::Portable) {
    const simd::IsaKernels& k = isa == Isa::AVX512 ? simd::kAvx512 : simd::kAvx2;
    loop = k.peak_loop, flops = k.chains * k.lanes * 2;
  }
  return best_loop_rate(loop, flops, threads, repeats);
}

double best_loop_rate(float (*loop)(int64_t), double flops, int threads, int repeats) {
  const int64_t iters = static_cast<int64_t>(2e-3 * 100e9 / flops);  // ~2 ms at 100 GFLOP/s per thread
  double best = 0;
  std::vector<float> sums(static_cast<size_t>(threads));  // each thread's result, kept so the loop is not dropped
  for (int r = 0; r < repeats; ++r) {
    int ran = 1;  // the threads OpenMP gave (one where the pragmas are compiled out)
    const auto t0 = std::chrono::steady_clock::now();
#pragma omp parallel num_threads(threads)
    {
      const int t = omp_get_thread_num();
      if (t == 0) ran = omp_get_num_threads();
      sums[static_cast<size_t>(t)] = loop(iters);
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    best = std::max(best, flops * static_cast<double>(iters) * ran / s / 1e9);
  }
  EMBER_CHECK(std::isfinite(sums[0]), "measured_peak_gflops", "the peak loop gave " << sums[0]);
  return best;
}

}  // namespace ember::gemm
