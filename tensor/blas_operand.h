/// @file
/// How a matrix view reaches BLAS without a copy, and the typed call: what
/// tensor/matmul.cpp and tensor/attention.cpp share (inside the kernels;
/// not part of the API).
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "tensor/machine/blas_library.h"

namespace ember::kernel {

/// How a (rows, cols) matrix view is handed to BLAS.
struct BlasOperand {
  bool trans;  // passed with BLAS's transpose flag (a column-major view)
  int64_t ld;
};

/// A view reaches BLAS as it is when one of its strides is 1: row-major as
/// "no transpose", column-major with the transpose flag. False: copy it.
inline bool blas_layout(int64_t rows, int64_t cols, int64_t s_row, int64_t s_col, BlasOperand& op) {
  if (s_col == 1 && (rows == 1 || s_row >= std::max<int64_t>(cols, 1))) {
    op = {false, rows == 1 ? std::max<int64_t>(cols, 1) : s_row};
    return true;
  }
  if (s_row == 1 && (cols == 1 || s_col >= std::max<int64_t>(rows, 1))) {
    op = {true, cols == 1 ? std::max<int64_t>(rows, 1) : s_col};
    return true;
  }
  return false;
}

/// C (M, N) = alpha op(A) op(B) + beta C on the calling thread, float32 or
/// float64, row-major (blas::sgemm / dgemm with the sizes as BLAS's ints).
/// One row (M = 1: a decode step's every product) is a matrix-vector
/// product, blas::sgemv / dgemv on op(B): gemm would pack all of B first.
template <typename T>
void blas_gemm(BlasOperand A, BlasOperand B, int64_t M, int64_t N, int64_t K, T alpha, const T* a, const T* b, T beta,
               T* c, int64_t ldc) {
  const int m = static_cast<int>(M), n = static_cast<int>(N), k = static_cast<int>(K);
  const int lda = static_cast<int>(A.ld), ldb = static_cast<int>(B.ld), ldcc = static_cast<int>(ldc);
  if (M == 1 && N > 0 && K > 0) {
    // c (N) = op(B)ᵀ a: B stored (N, K) when transposed (no transpose for
    // gemv), else (K, N) (gemv transposes it); a's K values at stride lda
    // when A is transposed
    const int inc_a = A.trans ? lda : 1;
    if constexpr (std::is_same_v<T, float>)
      B.trans ? blas::sgemv(false, n, k, alpha, b, ldb, a, inc_a, beta, c, 1)
              : blas::sgemv(true, k, n, alpha, b, ldb, a, inc_a, beta, c, 1);
    else
      B.trans ? blas::dgemv(false, n, k, alpha, b, ldb, a, inc_a, beta, c, 1)
              : blas::dgemv(true, k, n, alpha, b, ldb, a, inc_a, beta, c, 1);
    return;
  }
  if constexpr (std::is_same_v<T, float>)
    blas::sgemm(A.trans, B.trans, m, n, k, alpha, a, lda, b, ldb, beta, c, ldcc);
  else
    blas::dgemm(A.trans, B.trans, m, n, k, alpha, a, lda, b, ldb, beta, c, ldcc);
}

}  // namespace ember::kernel
