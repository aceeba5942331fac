// Step 2: loop order for unit stride.
//
// The three loops can run in any order: each (i, j, k) adds A[i][k] B[k][j]
// into C[i][j] once whatever the order. Putting j innermost (i, k, j),
//
//   for i: C[i][:] = 0;  for k: C[i][:] += A[i][k] * B[k][:]
//
// the inner loop reads a row of B and updates a row of C, both at unit
// stride for row-major matrices: every byte of every cache line is used,
// the hardware prefetcher sees a stream and fetches ahead, and the j
// iterations are independent, so the compiler turns the loop into vector
// multiply-adds (A[i][k] is one value, broadcast). The same arithmetic, an
// order that suits the memory.
//
// What is left: for every row i the whole of B streams through the cache
// (4 MiB for K = N = 1024, more than L2 holds), so each B[k][j] is loaded
// from far away M times, and every update of C[i][j] is a load and a store.
// With one multiply-add per two floats moved (B[k][j] in, C[i][j] in and
// out), the loop runs at the speed memory delivers B, not at the speed the
// FMA units could go. For a transposed B (row_stride 1) this order has the
// stride problem step 1 had; step 4's packing removes the question.
//
// Next, step3_blocked.cpp: reuse B while it is in cache.
#include "tensor/gemm/gemm.h"

namespace ember::gemm {

void loop_order(View<float> a, View<float> b, Out c) {
  const int64_t M = a.rows, K = a.cols, N = b.cols;
  for (int64_t i = 0; i < M; ++i) {
    float* ci = &c.at(i, 0);
    for (int64_t j = 0; j < N; ++j) ci[j] = 0;
    for (int64_t k = 0; k < K; ++k) {
      const float aik = a.at(i, k);
      if (b.col_stride == 1) {  // the unit-stride loop the compiler vectorizes
        const float* bk = b.data + k * b.row_stride;
        for (int64_t j = 0; j < N; ++j) ci[j] += aik * bk[j];
      } else {
        for (int64_t j = 0; j < N; ++j) ci[j] += aik * b.at(k, j);
      }
    }
  }
}

}  // namespace ember::gemm
