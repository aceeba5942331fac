// Which GEMM microkernel runs (tensor/machine/gemm_kernels.h): CPUID, the
// width vec_math chose (EMBER_SIMD), and EMBER_GEMM.
#include "tensor/machine/gemm_kernels.h"

#include <cstdlib>
#include <string>

#include "tensor/error.h"
#include "tensor/machine/vec_math.h"

namespace ember::gemm {

namespace simd {
void gemm_f32_avx2(int64_t kc, const void* a, const void* b, float* c, int64_t ldc, bool accumulate);
void gemm_f32_avx512(int64_t kc, const void* a, const void* b, float* c, int64_t ldc, bool accumulate);
void gemm_bf16_avx512(int64_t kc, const void* a, const void* b, float* c, int64_t ldc, bool accumulate);
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
  bool runs = false;
  for (Isa i : isas_for_this_cpu()) runs = runs || i == isa;
  EMBER_CHECK(runs, "gemm", "the " << isa_name(isa) << " microkernel was asked for, but this CPU does not run " << isa_name(isa));
  switch (isa) {
    case Isa::AVX512: return {12, 32, simd::gemm_f32_avx512, false, "AVX-512"};
    case Isa::AVX2: return {6, 16, simd::gemm_f32_avx2, false, "AVX2"};
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

}  // namespace ember::gemm
