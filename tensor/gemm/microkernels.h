/// @file
/// Which GEMM microkernel runs on this CPU (tensor/gemm/, steps 5-7).
///
/// As for the vector math (vec_math.h), the widest instruction set the CPU
/// runs is chosen once, from CPUID, and EMBER_SIMD=AVX2 or EMBER_SIMD=SSE2 in
/// the environment asks for a narrower one. The kernels themselves are in
/// tensor/gemm/simd/*.cpp, each file compiled for its instruction
/// set; the rest of the build stays baseline x86-64.
///
///   float32    AVX-512 (MR 12, NR 32), AVX2 (MR 6, NR 16), SSE2 (step 4's plain C)
///   bfloat16   vdpbf16ps on bfloat16 pairs (MR 12, NR 32) where the CPU has
///              AVX512_BF16 and the width is AVX-512; elsewhere the values are
///              rounded to bfloat16 while packing and multiplied by the float32
///              kernel of that width (the same bits, see step7_bfloat16.cpp)
///
/// Which library does ember's float32 matmul use? OpenBLAS, unless the
/// environment says EMBER_GEMM=ember (then step 6, tensor/gemm/step6_threads.cpp).
/// The choice is not made by timing both at start-up: a choice that depends on
/// how busy the machine was would give different bits from one run to the
/// next for the same seed. examples/gemm_lesson measures both on this
/// machine and says which is faster; EMBER_GEMM=openblas (or unset) keeps
/// OpenBLAS. Any other value is an ember::Error at the first product.
#pragma once

#include <string>
#include <vector>

#include "tensor/gemm/panels.h"

namespace ember::gemm {

/// The float32 microkernel of `isa` (ember::Error if this CPU lacks it).
Kernel f32_kernel(Isa isa);
/// The bfloat16 pair kernel (vdpbf16ps; ember::Error without AVX512_BF16).
Kernel bf16_kernel();

/// The widths this CPU runs, widest first (the tests run each).
std::vector<Isa> isas_for_this_cpu();
/// This CPU has AVX512_BF16 (and AVX-512 F/BW/VL).
bool has_avx512_bf16();
/// The width ember's products run at: vec_math's (the widest, or EMBER_SIMD's).
Isa default_isa();
/// bfloat16 products use vdpbf16ps: the default width is AVX-512 and the CPU has AVX512_BF16.
bool bf16_native();
/// EMBER_GEMM=ember: float32 matmul runs on ember's step 6 instead of OpenBLAS.
bool f32_matmul_uses_ember();

/// Packing's 32-bit transpose, bfloat16 rounding and bfloat16 pair panels (tensor/gemm/panels.h)
/// at `isa`, for the tests of every width (packing itself runs them at
/// default_isa()).
void transpose32_at(Isa isa, const void* src, int64_t src_stride, int64_t rows, int64_t cols, void* dst, int64_t dst_stride);
void to_bf16_bits_at(Isa isa, const float* src, uint16_t* dst, int64_t n);
void to_bf16_pair_panels_at(Isa isa, const float* src, int64_t ks, int64_t rows, int64_t kc, int unit, void* dst);

/// This machine's arithmetic peak in GFLOP/s, measured, not read from a
/// datasheet: `threads` threads at once each run a loop of independent
/// multiply-adds at `isa` (FMA; SSE2: a multiply and an add), or vdpbf16ps
/// with `bf16` (AVX512_BF16 only), with more chains than the units' latency
/// needs; each run takes about 2 ms, and the best of `repeats` is kept (a
/// run that shared a core with another program is only ever slower).
double measured_peak_gflops(Isa isa, bool bf16, int threads, int repeats = 100);
/// The timing of measured_peak_gflops for any loop: `loop(iters)` does
/// `flops` operations per iteration; the best rate of `repeats` runs on
/// `threads` threads at once, in G operations per second.
double best_loop_rate(float (*loop)(int64_t), double flops, int threads, int repeats = 100);

}  // namespace ember::gemm
