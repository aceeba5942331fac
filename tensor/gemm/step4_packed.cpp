// Step 4: packing, and the five loops around a microkernel.
//
// Step 3 reused B from cache but still read it in the matrix's own layout:
// rows nc floats apart, every C element loaded and stored at each k. Two
// changes, the structure every fast GEMM since GotoBLAS has used:
//
// 1. Pack. Before a block is used, copy it into the order the inner loop
//    will read it (tensor/gemm/panels.h): A's block (mc x kc) as panels of
//    MR rows, column by column; B's block (kc x nc) as panels of NR columns,
//    row by row. Then the inner loop reads both at unit stride, from a small
//    contiguous buffer the prefetcher follows, and the copy costs one pass
//    over each block, against 2 MR or 2 NR flops per packed value.
//
// 2. Compute C in MR x NR tiles, each summed over kc in a small local array
//    (the microkernel), and stored to C once per kc instead of loaded and
//    stored at every k. For each k the tile needs MR values of A and NR of
//    B: MR + NR loads for MR x NR multiply-adds.
//
// The loops, outside in (the B panel lives in L3, the A block in L2, one B
// micro-panel in L1 while MR-row panels of A stream past it):
//
//   for jc (nc columns)            pack B[pc.., jc..] for each pc:
//     for pc (kc deep)               B block -> panels of NR columns
//       for ic (mc rows)             A block -> panels of MR rows
//         for jr (NR columns)          the macro-kernel (macro_kernel)
//           for ir (MR rows)             microkernel: C tile (+)= A panel x B panel
//
// The first kc block stores its sums into C, later ones add to them, so the
// sum for each C element runs over k in order: block sums added in order.
//
// Here the microkernel is plain C (MR 4, NR 16) that the compiler
// vectorizes for baseline x86-64: SSE2, 4 floats per instruction, separate
// multiply and add. Step 5 writes it with FMA intrinsics at 8 or 16 floats.
#include <cstring>

#include "tensor/gemm/panels.h"

namespace ember::gemm {

namespace {

constexpr int kPortableMr = 4, kPortableNr = 16;

void portable_micro(int64_t kc, const void* a_panel, const void* b_panel, float* c, int64_t ldc, bool accumulate) {
  const float* a = static_cast<const float*>(a_panel);
  const float* b = static_cast<const float*>(b_panel);
  float acc[kPortableMr][kPortableNr] = {};
  for (int64_t k = 0; k < kc; ++k, a += kPortableMr, b += kPortableNr)
    for (int i = 0; i < kPortableMr; ++i)
      for (int j = 0; j < kPortableNr; ++j) acc[i][j] += a[i] * b[j];
  for (int i = 0; i < kPortableMr; ++i)
    for (int j = 0; j < kPortableNr; ++j) c[i * ldc + j] = accumulate ? c[i * ldc + j] + acc[i][j] : acc[i][j];
}

// Step 4's blocking: B panel of kc x nc in L3 (1 MiB), A block mc x kc in L2 (128 KiB).
constexpr int64_t kKc = 256, kMc = 128, kNc = 1024;

}  // namespace

void packed_loops(View<float> a, View<float> b, Out c, const Kernel& kern) {
  const int64_t M = a.rows, K = a.cols, N = b.cols;
  PanelBuffer bp(panel_bytes(kern, kNc, kern.nr, kKc)), ap(panel_bytes(kern, kMc, kern.mr, kKc));
  for (int64_t jc = 0; jc < N; jc += kNc) {
    const int64_t nc = std::min(kNc, N - jc);
    for (int64_t pc = 0; pc < K; pc += kKc) {
      const int64_t kc = std::min(kKc, K - pc);
      pack_b(b, pc, kc, jc, nc, kern.nr, bp.as<float>());
      for (int64_t ic = 0; ic < M; ic += kMc) {
        const int64_t mc = std::min(kMc, M - ic);
        pack_a(a, ic, mc, pc, kc, kern.mr, ap.as<float>());
        macro_kernel(kern, mc, nc, kc, ap.as<float>(), bp.as<float>(), c, ic, jc, /*accumulate=*/pc > 0);
      }
    }
  }
}

Kernel portable_kernel() { return {kPortableMr, kPortableNr, portable_micro, false, "SSE2"}; }

void tile_through_buffer(const Kernel& k, int64_t kc, const void* a, const void* b, Out c, int64_t i, int64_t j,
                         int64_t rows, int64_t cols, bool accumulate) {
  alignas(64) float tile[32 * 64];  // room for every kernel's MR x NR
  for (int64_t r = 0; r < rows; ++r)
    if (accumulate) std::memcpy(tile + r * k.nr, &c.at(i + r, j), static_cast<size_t>(cols) * sizeof(float));
  k.run(padded_depth(k.k_align, kc), a, b, tile, k.nr, accumulate);
  for (int64_t r = 0; r < rows; ++r) std::memcpy(&c.at(i + r, j), tile + r * k.nr, static_cast<size_t>(cols) * sizeof(float));
}

void macro_kernel(const Kernel& k, int64_t mc, int64_t nc, int64_t kc, const void* a_panels, const void* b_panels,
                  Out c, int64_t i0, int64_t j0, bool accumulate) {
  const char* a = static_cast<const char*>(a_panels);
  const char* b = static_cast<const char*>(b_panels);
  const int64_t a_step = panel_bytes(k, k.mr, k.mr, kc), b_step = panel_bytes(k, k.nr, k.nr, kc);
  for (int64_t jr = 0; jr < nc; jr += k.nr) {
    const int64_t cols = std::min<int64_t>(k.nr, nc - jr);
    const char* bj = b + (jr / k.nr) * b_step;
    for (int64_t ir = 0; ir < mc; ir += k.mr) {
      const int64_t rows = std::min<int64_t>(k.mr, mc - ir);
      const char* ai = a + (ir / k.mr) * a_step;
      if (rows == k.mr && cols == k.nr)
        k.run(padded_depth(k.k_align, kc), ai, bj, &c.at(i0 + ir, j0 + jr), c.ld, accumulate);
      else
        tile_through_buffer(k, kc, ai, bj, c, i0 + ir, j0 + jr, rows, cols, accumulate);
    }
  }
}

void fill_zero(Out c) {
  for (int64_t i = 0; i < c.rows; ++i)
    for (int64_t j = 0; j < c.cols; ++j) c.at(i, j) = 0;
}

void packed(View<float> a, View<float> b, Out c) {
  if (a.cols == 0) return fill_zero(c);  // an empty sum (the loops below would not touch C)
  packed_loops(a, b, c, portable_kernel());
}

}  // namespace ember::gemm
