// matmul: the one file that talks to OpenBLAS.
//
// PyTorch semantics: 1-D x 1-D is a dot product; a 1-D operand is treated as
// a row (left) or column (right) vector and that dim is removed afterwards;
// N-D operands are stacks of matrices whose batch dims broadcast.
//
// A matrix reaches BLAS without a copy when one of its strides is 1: a
// row-major view passes as "no transpose", a transposed view (column-major)
// passes with the transpose flag. Only other layouts are copied.
#include <cblas.h>

#include "tensor/hooks.h"
#include "tensor/kernels.h"

namespace ember::kernel {

namespace {

// How a (rows, cols) matrix view is handed to BLAS.
struct BlasOperand {
  CBLAS_TRANSPOSE trans;
  int64_t ld;
};

bool blas_layout(int64_t rows, int64_t cols, int64_t s_row, int64_t s_col, BlasOperand& op) {
  if (s_col == 1 && (rows == 1 || s_row >= std::max<int64_t>(cols, 1))) {
    op = {CblasNoTrans, rows == 1 ? std::max<int64_t>(cols, 1) : s_row};
    return true;
  }
  if (s_row == 1 && (cols == 1 || s_col >= std::max<int64_t>(rows, 1))) {
    op = {CblasTrans, cols == 1 ? std::max<int64_t>(rows, 1) : s_col};
    return true;
  }
  return false;
}

void gemm(BlasOperand A, BlasOperand B, int64_t M, int64_t N, int64_t K, const float* a, const float* b, float* c) {
  cblas_sgemm(CblasRowMajor, A.trans, B.trans, M, N, K, 1.0f, a, A.ld, b, B.ld, 0.0f, c, std::max<int64_t>(N, 1));
}
void gemm(BlasOperand A, BlasOperand B, int64_t M, int64_t N, int64_t K, const double* a, const double* b, double* c) {
  cblas_dgemm(CblasRowMajor, A.trans, B.trans, M, N, K, 1.0, a, A.ld, b, B.ld, 0.0, c, std::max<int64_t>(N, 1));
}

// a: (..., M, K) b: (..., K, N) with equal batch shapes (already broadcast) -> (..., M, N)
Tensor batched_matmul(Tensor a, Tensor b, const Shape& batch) {
  const int64_t M = a.size(-2), K = a.size(-1), N = b.size(-1);
  Shape out_shape = batch;
  out_shape.push_back(M);
  out_shape.push_back(N);
  Tensor out = empty(out_shape, a.dtype());
  if (out.numel() == 0) return out;
  if (K == 0) {
    fill_(out, 0.0);
    return out;
  }
  BlasOperand opa{CblasNoTrans, 1}, opb{CblasNoTrans, 1};
  if (!blas_layout(M, K, a.stride()[a.dim() - 2], a.stride()[a.dim() - 1], opa)) {
    a = contiguous(a);
    blas_layout(M, K, a.stride()[a.dim() - 2], a.stride()[a.dim() - 1], opa);
  }
  if (!blas_layout(K, N, b.stride()[b.dim() - 2], b.stride()[b.dim() - 1], opb)) {
    b = contiguous(b);
    blas_layout(K, N, b.stride()[b.dim() - 2], b.stride()[b.dim() - 1], opb);
  }
  const int64_t nb = numel_of(batch);
  const int64_t nbd = static_cast<int64_t>(batch.size());
  // 2 M N K per product: a multiply and an add for every (m, n, k).
  const double item = static_cast<double>(dtype_size(a.dtype()));
  note_work(2.0 * nb * M * N * K, item * nb * (M * K + K * N), item * nb * M * N);
  EMBER_DISPATCH_FLOAT(a.dtype(), "matmul", [&]<typename T>() {
    const T* pa = a.data_ptr<T>();
    const T* pb = b.data_ptr<T>();
    T* pc = out.data_ptr<T>();
    Shape idx(nbd, 0);
    for (int64_t i = 0; i < nb; ++i) {
      int64_t oa = 0, ob = 0;
      for (int64_t d = 0; d < nbd; ++d) {
        oa += idx[d] * a.stride()[d];
        ob += idx[d] * b.stride()[d];
      }
      gemm(opa, opb, M, N, K, pa + oa, pb + ob, pc + i * M * N);
      for (int64_t d = nbd - 1; d >= 0; --d) {
        if (++idx[d] < batch[d]) break;
        idx[d] = 0;
      }
    }
  });
  return out;
}

}  // namespace

Tensor matmul(const Tensor& a, const Tensor& b) {
  EMBER_CHECK(a.dim() >= 1 && b.dim() >= 1, "matmul",
              "both arguments need at least 1 dim, got shapes " << shape_str(a.shape()) << " and " << shape_str(b.shape()));
  EMBER_CHECK(a.dtype() == b.dtype(), "matmul",
              "dtype mismatch: " << dtype_name(a.dtype()) << " " << shape_str(a.shape()) << " vs "
                                 << dtype_name(b.dtype()) << " " << shape_str(b.shape()));
  EMBER_CHECK(is_floating(a.dtype()), "matmul",
              "expected floating tensors, got " << dtype_name(a.dtype()) << " of shapes " << shape_str(a.shape())
                                                << " and " << shape_str(b.shape()));
  const int64_t ka = a.size(-1), kb = b.dim() == 1 ? b.size(0) : b.size(-2);
  EMBER_CHECK(ka == kb, "matmul",
              "a has shape " << shape_str(a.shape()) << " but b has shape " << shape_str(b.shape())
                             << "; a.shape[-1] (" << ka << ") must equal b.shape[" << (b.dim() == 1 ? "0" : "-2")
                             << "] (" << kb << ")");
  // (…, M, K) @ (K, N): fold the batch into M for one large gemm when a's
  // layout allows it without a copy.
  if (a.dim() > 2 && b.dim() == 2) {
    Shape rows_strides;
    if (view_strides(a.shape(), a.stride(), {a.numel() / std::max<int64_t>(ka, 1), ka}, rows_strides) && ka > 0) {
      Tensor flat = as_strided(a, {a.numel() / ka, ka}, rows_strides, a.storage_offset());
      Shape out_shape(a.shape().begin(), a.shape().end() - 1);
      out_shape.push_back(b.size(1));
      return reshape(batched_matmul(flat, b, {}), out_shape);
    }
  }
  // Promote 1-D operands to matrices, remember to drop the dim at the end.
  Tensor A = a.dim() == 1 ? unsqueeze(a, 0) : a;
  Tensor B = b.dim() == 1 ? unsqueeze(b, 1) : b;
  Shape ba(A.shape().begin(), A.shape().end() - 2), bb(B.shape().begin(), B.shape().end() - 2);
  Shape batch;
  try {
    batch = broadcast_shapes(ba, bb, "matmul");
  } catch (const Error&) {
    EMBER_FAIL("matmul", "batch dims of a " << shape_str(a.shape()) << " and b " << shape_str(b.shape())
                                            << " cannot be broadcast: " << shape_str(ba) << " vs " << shape_str(bb));
  }
  Shape ta = batch, tb = batch;
  ta.push_back(A.size(-2));
  ta.push_back(A.size(-1));
  tb.push_back(B.size(-2));
  tb.push_back(B.size(-1));
  Tensor out = batched_matmul(expand(A, ta), expand(B, tb), batch);
  if (a.dim() == 1) out = squeeze(out, out.dim() - 2);
  if (b.dim() == 1) out = squeeze(out, out.dim() - 1);
  return out;
}

}  // namespace ember::kernel
