// Step 5: a register-blocked microkernel in FMA intrinsics.
//
// Step 4's loops are right; its plain-C microkernel is not fast, because
// the compiler, building for baseline x86-64, has 16 registers of 4 floats
// and no fused multiply-add: the 4 x 16 tile does not fit in registers and
// every multiply-add is two instructions. Written with intrinsics for the
// CPU's own vectors, the tile stays in registers for all kc steps and each
// step is a handful of loads and a block of FMAs (tensor/gemm/microkernel.h,
// where the shapes are explained):
//
//   AVX-512  16 floats x 2 FMA units: 12 x 32 tile, 24 FMAs per k, 2 + 12 loads
//   AVX2      8 floats x 2 FMA units:  6 x 16 tile, 12 FMAs per k, 2 + 6 loads
//
// An instruction set the build does not target cannot be used in the same
// file as baseline code, so each kernel lives in its own file compiled for
// its instruction set (tensor/gemm/simd/avx2.cpp, avx512.cpp),
// and tensor/gemm/microkernels.cpp picks the one this CPU runs, the way
// the vector math picks its width (EMBER_SIMD asks for a narrower one).
//
// This is the step where the speed jumps: the loops and the packing keep
// the kernel fed from L1 and L2, and the kernel keeps the FMA units busy.
// What is left to gain is the second core: step 6.
#include "tensor/gemm/microkernels.h"
#include "tensor/gemm/panels.h"

namespace ember::gemm {

void microkernel(View<float> a, View<float> b, Out c, Isa isa) {
  if (a.cols == 0) return fill_zero(c);
  packed_loops(a, b, c, f32_kernel(isa));
}

}  // namespace ember::gemm
