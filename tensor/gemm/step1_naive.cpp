// Step 1: the definition.
//
//   C[i][j] = sum over k of A[i][k] B[k][j]
//
// Three loops and one multiply-add: 2 M N K operations, and it is correct for
// any strides. It is also slow, and the reason is memory, not arithmetic.
// The inner loop walks down a column of B: for a row-major B, consecutive k
// are N floats apart, so each B[k][j] it reads sits on a cache line of its
// own (64 bytes, 16 floats, of which it uses one). For N = 1024 a column
// touches 1024 lines, 64 KiB, more than the 48 KiB L1 cache of the machines
// ember is measured on: by the time column j + 1 wants the neighbours of
// those floats, the lines are gone to L2. The CPU spends its time waiting
// for lines, and its vector units (16 multiply-adds per instruction, two
// instructions per cycle) do one scalar operation at a time: the sum over k
// is a chain of dependent additions the compiler may not reorder (float
// addition is not associative), so not even the latency of the adds is hidden.
//
// Next, step2_loop_order.cpp: the same arithmetic in another order.
#include "tensor/gemm/gemm.h"

namespace ember::gemm {

void naive(View<float> a, View<float> b, Out c) {
  for (int64_t i = 0; i < a.rows; ++i)
    for (int64_t j = 0; j < b.cols; ++j) {
      float sum = 0;
      for (int64_t k = 0; k < a.cols; ++k) sum += a.at(i, k) * b.at(k, j);
      c.at(i, j) = sum;
    }
}

}  // namespace ember::gemm
