// Step 7: fewer bits. The same loops, on bfloat16.
//
// A bfloat16 (tensor/bfloat16.h) is a float32 with 16 bits of mantissa cut
// off: half the bytes to move, and on CPUs with AVX512_BF16 one vdpbf16ps
// instruction multiplies 32 pairs of them and adds the products into 16
// float32 accumulators: 64 flops where an FMA does 32. The product keeps
// float32 where it matters: products of two bfloat16 values are exact in
// float32, and every sum is a float32 sum.
//
// Nothing in steps 4-6 changes but the panels. Packing (panels.h, pack with
// Packing::Bf16Pairs) rounds each float32 to the nearest bfloat16 (ties to
// even) as it copies it — the conversion costs no extra pass over memory —
// and lays k out in pairs, the order vdpbf16ps reads. On a CPU without
// AVX512_BF16 (or at a narrower EMBER_SIMD width) the values are rounded
// the same way but packed as float32, and step 6's FMA kernel multiplies
// them. Both paths compute each lane's sum in the same order with one
// rounding per product added: vdpbf16ps adds the pair's two products one
// after the other (the odd k first), so the fallback packs each pair in
// that order too, and the two give the same bits (tested), except that
// vdpbf16ps flushes subnormal inputs and results to zero.
//
// How wrong can it be? Each input is rounded once, with relative error at
// most u = 2^-8 (bfloat16's unit roundoff: 8 significant bits). A product
// of two rounded inputs is then off by a factor (1 + d1)(1 + d2), |d| <= u,
// and is exact in float32. Summing K of them in float32, in any order,
// adds at most gamma_K = K v / (1 - K v) relative to the sum of the
// magnitudes (v = 2^-24, float32's unit roundoff; Higham, "Accuracy and
// Stability of Numerical Algorithms", 3.1). So, against the exact product,
//
//   |C_bf16[i][j] - C[i][j]| <= ((1 + u)^2 (1 + gamma_K) - 1) sum_k |A[i][k]| |B[k][j]|
//
// which is 2u + u^2 + (1 + u)^2 gamma_K: 0.0079 for K = 1024, of which
// 2u = 0.0078 is the rounding of the inputs. The bound is reached: inputs
// just above a rounding midpoint, all rounded up, make every product err
// by almost 2u in the same direction (tests/tensor_bfloat16_test.cpp
// checks both the bound and that it is nearly attained).
#include "tensor/gemm/microkernels.h"
#include "tensor/gemm/panels.h"

namespace ember::gemm {

namespace {
// Depth of a block: 512 values of k, 256 pairs (a 32-column micro-panel of
// B is then 32 KiB, as step 6's float32 one is at 256). The fallback uses
// the same depth, so the two paths add the same block sums.
constexpr int64_t kKcBf16 = 512;

template <typename S>
Product bf16_plan(View<S> a, View<S> b, Isa isa, bool native) {
  Product p;
  p.M = a.rows;
  p.N = b.cols;
  p.K = a.cols;
  p.kc = kKcBf16;
  p.kernel = native ? bf16_kernel() : f32_kernel(isa);
  p.kernel.k_align = 2;  // pairs: the fallback's float32 panels too
  const int mr = p.kernel.mr, nr = p.kernel.nr;
  const Packing how = native ? Packing::Bf16Pairs : Packing::Bf16PairsSwapped;
  p.pack_a = [=](int64_t i0, int64_t mc, int64_t p0, int64_t kc, void* dst) { pack_a(a, i0, mc, p0, kc, mr, dst, how); };
  p.pack_b = [=](int64_t p0, int64_t kc, int64_t j0, int64_t nc, void* dst) { pack_b(b, p0, kc, j0, nc, nr, dst, how); };
  return p;
}

template <typename S>
void product(View<S> a, View<S> b, Out c, Isa isa, bool native, bool parallel) {
  if (a.cols == 0) return fill_zero(c);
  run_threaded(bf16_plan(a, b, isa, native), c, parallel);
}
}  // namespace

void bf16_product(View<float> a, View<float> b, Out c, Isa isa, bool native, bool parallel) {
  product(a, b, c, isa, native, parallel);
}
void bf16_product(View<bfloat16> a, View<bfloat16> b, Out c, Isa isa, bool native, bool parallel) {
  product(a, b, c, isa, native, parallel);
}

}  // namespace ember::gemm
