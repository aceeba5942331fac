/// @file
/// Step 5's register-blocked microkernel, written once for any vector width.
///
/// It computes one MR x NR tile of C from two packed panels (step 4's
/// layout): for each k, MR values of A (a column of the A block) and NR
/// values of B (a row of the B block). The tile lives in registers for the
/// whole loop over k: MR x NV vector accumulators (NR = NV vectors of W
/// floats). Per k it loads NV vectors of B, and for each of the MR rows
/// broadcasts one value of A to all W lanes and issues NV fused
/// multiply-adds:
///
///   acc[i][v] = fma(broadcast(a[k][i]), b[k][v*W .. v*W+W), acc[i][v])
///
/// MR x NV FMAs (2 MR NR flops) for NV + MR loads, against step 3's three
/// memory operations per multiply-add: now the loads are a few per dozen
/// FMAs and the FMA units, not the caches, set the speed. The shape follows
/// from the register file: AVX-512 has 32 vector registers, so 12 x 2
/// accumulators + 2 of B + 1 broadcast fit with room to spare (MR 12,
/// NR 32); AVX2 has 16, so 6 x 2 + 2 + 1 (MR 6, NR 16). And from the
/// latency: an FMA's result is ready about 4 cycles after it starts, two
/// start each cycle, so at least 8 independent accumulators must be in
/// flight; 24 (or 12) are.
///
/// The sum over k for each C element runs in the order k = 0, 1, 2, ... in
/// one lane, with one rounding per FMA, whatever W, MR or NR: so every
/// width gives the same bits (tested).
///
/// Step 7 runs the same template on bfloat16 pairs: a "k step" is then two
/// values of k, B's row of the panel holds NR pairs, A's broadcast is one
/// pair (32 bits), and the FMA is vdpbf16ps, which adds both products of a
/// pair to a float32 lane: twice the flops per instruction.
///
/// V provides: Elem (the panel's element type), K (values of k per step: 1,
/// or 2 for pairs), W (floats per vector), Acc, BReg, AReg, zero(),
/// load(const Elem*) (aligned, W*K elements), broadcast(const Elem*) (K
/// elements to every lane), fma(AReg, BReg, Acc) -> Acc, and for the
/// float32 tile loadu/add/storeu. The tensor/gemm/simd/*.cpp files
/// instantiate it with their intrinsics.
#pragma once

#include <cstdint>

namespace ember::gemm {

template <class V, int MR, int NV>
void microkernel_tile(int64_t kc, const void* a_panel, const void* b_panel, float* c, int64_t ldc, bool accumulate) {
  using Elem = typename V::Elem;
  constexpr int W = V::W, S = V::K, NR = NV * W;
  const Elem* a = static_cast<const Elem*>(a_panel);
  const Elem* b = static_cast<const Elem*>(b_panel);
  typename V::Acc acc[MR][NV];
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) acc[i][v] = V::zero();
  // The C tile is read (or written) only after the loop below: ask for its
  // lines now, so that they arrive while the FMAs run.
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i) {
    __builtin_prefetch(c + i * ldc, 1);
    __builtin_prefetch(c + i * ldc + NR - 1, 1);
  }
  const int64_t steps = (kc + S - 1) / S;
  for (int64_t k = 0; k < steps; ++k) {
    typename V::BReg bk[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) bk[v] = V::load(b + v * W * S);
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i) {
      const typename V::AReg ai = V::broadcast(a + i * S);
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) acc[i][v] = V::fma(ai, bk[v], acc[i][v]);
    }
    a += MR * S;
    b += NR * S;
  }
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) {
      float* p = c + i * ldc + v * W;
      V::storeu(p, accumulate ? V::add(V::loadu(p), acc[i][v]) : acc[i][v]);
    }
}

}  // namespace ember::gemm
