// Step 3: cache blocking.
//
// Step 2 streams all of B past each row of A. Cut B into tiles of kc rows
// and nc columns small enough to stay in a cache, and run every row of A
// against one tile before moving to the next:
//
//   for each column block jc (nc columns of B and C)
//     for each depth block pc (kc rows of B, kc columns of A)
//       for every row i:   C[i][jc..] += A[i][pc..] B[pc.., jc..]   (step 2's loops, inside the tile)
//
// The tile (kc x nc floats; 128 x 512 here, 256 KiB) is loaded from memory
// once and then read M times from L2, instead of M times from memory: the
// traffic to memory falls by the factor M, and the loop becomes limited by
// L2's bandwidth instead. What remains slow is inside the tile: every
// multiply-add still loads B[k][j] and loads and stores C[i][j] (three
// memory operations per two flops), and the tile's rows are nc floats
// apart, so the prefetcher restarts at every row. Step 4 fixes the layout,
// step 5 the loads and stores.
//
// Next, step4_packed.cpp.
#include <algorithm>

#include "tensor/gemm/gemm.h"

namespace ember::gemm {

namespace {
constexpr int64_t kDepthBlock = 128;   // kc: rows of B in a tile
constexpr int64_t kColumnBlock = 512;  // nc: columns of B in a tile
}  // namespace

void blocked(View<float> a, View<float> b, Out c) {
  const int64_t M = a.rows, K = a.cols, N = b.cols;
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) c.at(i, j) = 0;
  for (int64_t jc = 0; jc < N; jc += kColumnBlock) {
    const int64_t j_end = std::min(N, jc + kColumnBlock);
    for (int64_t pc = 0; pc < K; pc += kDepthBlock) {
      const int64_t k_end = std::min(K, pc + kDepthBlock);
      for (int64_t i = 0; i < M; ++i) {
        float* ci = &c.at(i, 0);
        for (int64_t k = pc; k < k_end; ++k) {
          const float aik = a.at(i, k);
          if (b.col_stride == 1) {
            const float* bk = b.data + k * b.row_stride;
            for (int64_t j = jc; j < j_end; ++j) ci[j] += aik * bk[j];
          } else {
            for (int64_t j = jc; j < j_end; ++j) ci[j] += aik * b.at(k, j);
          }
        }
      }
    }
  }
}

}  // namespace ember::gemm
