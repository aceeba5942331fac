/// @file
/// How a matrix product gets fast: ember's own GEMM, in seven steps that a
/// reader takes in order, one file each (docs/book/13_gemm_and_bfloat16.md).
///
///   C = A B      A (M, K), B (K, N), C (M, N): 2 M N K floating-point operations
///
///   step1_naive.cpp       the definition: for i, for j, sum over k
///   step2_loop_order.cpp  i, k, j: the inner loop walks rows, unit stride
///   step3_blocked.cpp     tiles of B that stay in cache while they are reused
///   step4_packed.cpp      copy each tile into the order the inner loop reads it
///   step5_microkernel.cpp a register-blocked MR x NR kernel in FMA intrinsics
///                         (microkernel.h; AVX2 or AVX-512, chosen at run time:
///                         tensor/gemm/microkernels.h)
///   step6_threads.cpp     the tiles of C shared among threads: ember's fp32 GEMM
///   step7_bfloat16.cpp    the same loops on bfloat16 panels, vdpbf16ps where the
///                         CPU has AVX512_BF16: the product autocast runs
///
/// Every step computes the same C (within float32 round-off; steps 5-7 give
/// the same bits at every FMA width, AVX2 or AVX-512, and every thread count;
/// the plain C kernel, with a separate multiply and add, gives others), for A and B of any
/// strides: row-major, transposed views, slices. examples/gemm_lesson times
/// each against OpenBLAS and this machine's measured FMA peak.
///
/// ember's float32 matmul stays on OpenBLAS (tensor/matmul.cpp) unless
/// EMBER_GEMM=ember asks for step 6: see tensor/gemm/microkernels.h for
/// how that choice is made.
#pragma once

#include <cstdint>

#include "tensor/bfloat16.h"

namespace ember::gemm {

/// A matrix in memory: element (i, j) at data[i * row_stride + j * col_stride].
/// Row-major has col_stride 1; its transposed view has row_stride 1.
template <typename T>
struct View {
  const T* data = nullptr;
  int64_t rows = 0, cols = 0, row_stride = 0, col_stride = 1;
  T at(int64_t i, int64_t j) const { return data[i * row_stride + j * col_stride]; }
};

/// The result: row-major, consecutive rows `ld` floats apart (ld >= cols).
struct Out {
  float* data = nullptr;
  int64_t rows = 0, cols = 0, ld = 0;
  float& at(int64_t i, int64_t j) const { return data[i * ld + j]; }
};

/// The microkernels' instruction sets, narrowest first. Portable is plain C
/// compiled for baseline x86-64 (the compiler's SSE2); AVX2 and AVX-512 are
/// FMA intrinsics (tensor/gemm/simd/*.cpp).
enum class Isa { Portable, AVX2, AVX512 };
const char* isa_name(Isa isa);  // "SSE2", "AVX2", "AVX-512" (the names EMBER_SIMD takes)

// ---- the steps: each overwrites C with A B; A (M, K), B (K, N), C (M, N) ----
void naive(View<float> a, View<float> b, Out c);       // step 1
void loop_order(View<float> a, View<float> b, Out c);  // step 2
void blocked(View<float> a, View<float> b, Out c);     // step 3
void packed(View<float> a, View<float> b, Out c);      // step 4 (the plain-C microkernel, one thread)
void microkernel(View<float> a, View<float> b, Out c, Isa isa);  // step 5 (one thread)
/// Step 6: step 5's loops with the tiles of C shared among ember's threads
/// (parallel = false: on the calling thread only, for a product that is one
/// of many running in parallel).
void threaded(View<float> a, View<float> b, Out c, Isa isa, bool parallel = true);

/// Step 7: C = round(A) round(B), each input rounded to bfloat16 (to nearest,
/// ties to even) as it is packed, products and sums in float32. `native`:
/// vdpbf16ps on bfloat16 pair panels (needs AVX512_BF16, see
/// gemm::has_avx512_bf16); otherwise the rounded values are packed as
/// float32 and step 6's FMA kernel of `isa` multiplies them: the same bits.
void bf16_product(View<float> a, View<float> b, Out c, Isa isa, bool native, bool parallel = true);
void bf16_product(View<bfloat16> a, View<bfloat16> b, Out c, Isa isa, bool native, bool parallel = true);

}  // namespace ember::gemm
