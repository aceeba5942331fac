/// @file
/// What one vector width gives ember's GEMM: its float32 microkernel, the
/// packing loops compiled at that width, and the peak microbenchmark. One
/// table per instruction set, each made by one template
/// (tensor/gemm/simd/isa_impl.h) in the file compiled for it
/// (avx2.cpp, avx512.cpp); tensor/gemm/microkernels.cpp picks
/// the one this CPU runs.
#pragma once

#include <cstdint>

namespace ember::gemm::simd {

struct IsaKernels {
  // C (MR x NR) (+)= A panel · B panel over kc (tensor/gemm/microkernel.h)
  void (*gemm_f32)(int64_t kc, const void* a, const void* b, float* c, int64_t ldc, bool accumulate);
  // dst[c * ds + r] = src[r * ss + c] for 32-bit values
  void (*transpose32)(const uint32_t* src, int64_t ss, int64_t rows, int64_t cols, uint32_t* dst, int64_t ds);
  // float32 -> bfloat16 bits, nearest, ties to even
  void (*bf16_bits)(const float* src, uint16_t* dst, int64_t n);
  // bfloat16 pair panels straight from float32 lines (step 7's packing)
  void (*bf16_pair_panels)(const float* src, int64_t ks, int64_t rows, int64_t kc, int unit, uint32_t* dst);
  // `chains` independent FMA chains of `lanes` floats, `iters` times; returns a sum so the work is kept
  float (*peak_loop)(int64_t iters);
  int mr, nr;           // the microkernel's tile
  int chains, lanes;    // the peak loop's: chains x lanes x 2 flops per iteration
};

extern const IsaKernels kAvx2;    // avx2.cpp, compiled with -mavx2 -mfma
extern const IsaKernels kAvx512;  // avx512.cpp, compiled with -mavx512f -mfma

}  // namespace ember::gemm::simd
