// matmul over BLAS, or over ember's own GEMM (tensor/gemm/).
//
// PyTorch semantics: 1-D x 1-D is a dot product; a 1-D operand is treated as
// a row (left) or column (right) vector and that dim is removed afterwards;
// N-D operands are stacks of matrices whose batch dims broadcast.
//
// A matrix reaches BLAS without a copy when one of its strides is 1: a
// row-major view passes as "no transpose", a transposed view (column-major)
// passes with the transpose flag. Only other layouts are copied.
//
// Threads: OpenBLAS runs single-threaded; ember splits the products itself
// (run_gemms, below), so that every parallel op goes through parallel_for.
// Loading OpenBLAS and choosing its kernels is tensor/machine/blas_library.cpp.
//
// ember's own GEMM (tensor/gemm/, step 6) takes any strides as they are (its
// packing reads them), so no operand is copied for it. It runs the
// bfloat16 products: matmul_bf16 (float32 inputs rounded to bfloat16 while
// packed: autocast's product) and matmul of two bfloat16 tensors, both
// accumulating in float32 and returning float32; and the float32 products
// when EMBER_GEMM=ember (tensor/gemm/microkernels.h).
#include <algorithm>
#include <type_traits>

#include "base/hooks.h"
#include "tensor/blas_operand.h"
#include "tensor/gemm/gemm.h"
#include "tensor/gemm/microkernels.h"
#include "tensor/kernels.h"
#include "tensor/machine/blas_library.h"
#include "tensor/parallel.h"

namespace ember::kernel {

namespace {

// One product (or a block of its rows or columns), on the calling thread.
template <typename T>
void gemm(BlasOperand A, BlasOperand B, int64_t M, int64_t N, int64_t K, const T* a, const T* b, T* c, int64_t ldc) {
  blas_gemm<T>(A, B, M, N, K, T(1), a, b, T(0), c, ldc);
}

// Offsets of batch entry i in a and b (strides of the broadcast batch dims).
void batch_offsets(int64_t i, const Tensor& ta, const Tensor& tb, const Shape& batch, int64_t& oa, int64_t& ob) {
  oa = ob = 0;
  for (int64_t d = static_cast<int64_t>(batch.size()) - 1; d >= 0; --d) {
    const int64_t id = i % batch[d];
    i /= batch[d];
    oa += id * ta.stride()[d];
    ob += id * tb.stride()[d];
  }
}

// Below this many operations (2 M N K) a piece of a product stays on one
// thread: starting a parallel region costs a few microseconds, and one core
// does about 2 million operations in 20 of them.
constexpr double kGemmGrain = double(1 << 21);

// The threads: OpenBLAS runs single-threaded (see library()); ember splits the
// work itself with detail::parallel_for, whose pieces depend only on the
// shapes and the configured thread count, so the bits are the same however
// many threads run them (OpenBLAS's own split gives different bits at 1 and
// 2 threads on some shapes). A stack of products is split by whole products;
// one product by blocks of 16 rows of C (or columns, when it has more), each
// block a smaller gemm that packs its own copy of the other operand.
template <typename T>
void run_gemms(BlasOperand A, BlasOperand B, int64_t M, int64_t N, int64_t K, const T* a, const T* b, T* c,
               const Tensor& ta, const Tensor& tb, const Shape& batch) {
  const int64_t nb = numel_of(batch);
  const double flops = 2.0 * static_cast<double>(M) * static_cast<double>(N) * static_cast<double>(K);
  if (nb > 1) {
    const int64_t grain = static_cast<int64_t>(std::max(1.0, kGemmGrain / flops));
    detail::parallel_for(nb, grain, [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) {
        int64_t oa, ob;
        batch_offsets(i, ta, tb, batch, oa, ob);
        gemm(A, B, M, N, K, a + oa, b + ob, c + i * M * N, N);
      }
    });
    return;
  }
  constexpr int64_t kBlock = 16;
  const bool by_rows = M >= N;
  const int64_t L = by_rows ? M : N;
  const int64_t blocks = (L + kBlock - 1) / kBlock;
  const int64_t grain = static_cast<int64_t>(std::max(1.0, kGemmGrain / (flops / static_cast<double>(blocks))));
  detail::parallel_for(blocks, grain, [&](int64_t b0, int64_t b1) {
    const int64_t r0 = b0 * kBlock, r1 = std::min(L, b1 * kBlock);
    if (by_rows) {  // rows r0..r1 of A and C
      const T* pa = a + (A.trans ? r0 : r0 * A.ld);
      gemm(A, B, r1 - r0, N, K, pa, b, c + r0 * N, N);
    } else {  // columns r0..r1 of B and C
      const T* pb = b + (B.trans ? r0 * B.ld : r0);
      gemm(A, B, M, r1 - r0, K, a, pb, c + r0, N);
    }
  });
}

// Which GEMM runs a product.
enum class Engine { Blas, EmberF32, EmberBf16 };

// The (M, K) matrix of batch entry i of x, as the GEMM lesson's view.
template <typename T>
gemm::View<T> matrix_view(const Tensor& x, int64_t offset) {
  const int64_t d = x.dim();
  return {x.data_ptr<T>() + offset, x.size(-2), x.size(-1), x.stride()[d - 2], x.stride()[d - 1]};
}

// ember's GEMM on every product of the batch: a stack is split by whole
// products (each on one thread), one product by step 6's own tiles.
template <typename T>
void run_ember_gemms(Engine engine, const Tensor& a, const Tensor& b, Tensor& out, const Shape& batch) {
  const int64_t M = a.size(-2), N = b.size(-1), K = a.size(-1), nb = numel_of(batch);
  const gemm::Isa isa = gemm::default_isa();
  auto one = [&](int64_t i, bool parallel) {
    int64_t oa, ob;
    batch_offsets(i, a, b, batch, oa, ob);
    const gemm::Out c{out.data_ptr<float>() + i * M * N, M, N, N};
    if constexpr (std::is_same_v<T, float>) {
      if (engine == Engine::EmberF32) return gemm::threaded(matrix_view<T>(a, oa), matrix_view<T>(b, ob), c, isa, parallel);
    }
    gemm::bf16_product(matrix_view<T>(a, oa), matrix_view<T>(b, ob), c, isa, gemm::bf16_native(), parallel);
  };
  if (nb == 1) return one(0, true);
  const double flops = 2.0 * static_cast<double>(M) * static_cast<double>(N) * static_cast<double>(K);
  const int64_t grain = static_cast<int64_t>(std::max(1.0, kGemmGrain / flops));
  detail::parallel_for(nb, grain, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) one(i, false);
  });
}

// a: (..., M, K) b: (..., K, N) with equal batch shapes (already broadcast) -> (..., M, N)
Tensor batched_matmul(Tensor a, Tensor b, const Shape& batch, Engine engine) {
  const int64_t M = a.size(-2), K = a.size(-1), N = b.size(-1);
  constexpr int64_t kBlasInt = 2147483647;  // OpenBLAS's int is 32 bits (an LP64 build); ember's GEMM has no such limit
  EMBER_CHECK(engine != Engine::Blas || (M <= kBlasInt && N <= kBlasInt && K <= kBlasInt), "matmul",
              "a product of (" << M << ", " << K << ") and (" << K << ", " << N << ") exceeds BLAS's 32-bit sizes");
  Shape out_shape = batch;
  out_shape.push_back(M);
  out_shape.push_back(N);
  Tensor out = empty(out_shape, engine == Engine::Blas ? a.dtype() : kFloat32);
  if (out.numel() == 0) return out;
  if (K == 0) {
    fill_(out, 0.0);
    return out;
  }
  const int64_t nb = numel_of(batch);
  const double item = static_cast<double>(dtype_size(a.dtype()));
  // 2 M N K per product: a multiply and an add for every (m, n, k).
  const double flops = 2.0 * nb * M * N * K;
  if (engine != Engine::Blas) {
    note_work(flops, item * nb * (M * K + K * N), 4.0 * nb * M * N);
    if (a.dtype() == kBFloat16) run_ember_gemms<bfloat16>(engine, a, b, out, batch);
    else run_ember_gemms<float>(engine, a, b, out, batch);
    return out;
  }
  BlasOperand opa{false, 1}, opb{false, 1};
  if (!blas_layout(M, K, a.stride()[a.dim() - 2], a.stride()[a.dim() - 1], opa)) {
    a = contiguous(a);
    blas_layout(M, K, a.stride()[a.dim() - 2], a.stride()[a.dim() - 1], opa);
  }
  if (!blas_layout(K, N, b.stride()[b.dim() - 2], b.stride()[b.dim() - 1], opb)) {
    b = contiguous(b);
    blas_layout(K, N, b.stride()[b.dim() - 2], b.stride()[b.dim() - 1], opb);
  }
  note_work(flops, item * nb * (M * K + K * N), item * nb * M * N);
  EMBER_DISPATCH_FLOAT(a.dtype(), "matmul", [&]<typename T>() {
    run_gemms<T>(opa, opb, M, N, K, a.data_ptr<T>(), b.data_ptr<T>(), out.data_ptr<T>(), a, b, batch);
  });
  return out;
}

}  // namespace

namespace {
Tensor matmul_with(const Tensor& a, const Tensor& b, Engine engine, const char* op) {
  EMBER_CHECK(a.dim() >= 1 && b.dim() >= 1, op,
              "both arguments need at least 1 dim, got shapes " << shape_str(a.shape()) << " and " << shape_str(b.shape()));
  EMBER_CHECK(a.dtype() == b.dtype(), op,
              "dtype mismatch: " << dtype_name(a.dtype()) << " " << shape_str(a.shape()) << " vs "
                                 << dtype_name(b.dtype()) << " " << shape_str(b.shape()));
  const bool takes = engine == Engine::EmberBf16 ? a.dtype() == kFloat32 || a.dtype() == kBFloat16 : is_floating(a.dtype());
  EMBER_CHECK(takes, op,
              "expected " << (engine == Engine::EmberBf16 ? "float32 or bfloat16" : "floating") << " tensors, got "
                          << dtype_name(a.dtype()) << " of shapes " << shape_str(a.shape()) << " and "
                          << shape_str(b.shape()));
  const int64_t ka = a.size(-1), kb = b.dim() == 1 ? b.size(0) : b.size(-2);
  EMBER_CHECK(ka == kb, op,
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
      return reshape(batched_matmul(flat, b, {}, engine), out_shape);
    }
  }
  // Two matrices, the common case: nothing to promote or broadcast (and no
  // views to make, which cost more than a small product itself).
  if (a.dim() == 2 && b.dim() == 2) return batched_matmul(a, b, {}, engine);
  // Promote 1-D operands to matrices, remember to drop the dim at the end.
  Tensor A = a.dim() == 1 ? unsqueeze(a, 0) : a;
  Tensor B = b.dim() == 1 ? unsqueeze(b, 1) : b;
  Shape ba(A.shape().begin(), A.shape().end() - 2), bb(B.shape().begin(), B.shape().end() - 2);
  Shape batch;
  try {
    batch = broadcast_shapes(ba, bb, op);
  } catch (const Error&) {
    EMBER_FAIL(op, "batch dims of a " << shape_str(a.shape()) << " and b " << shape_str(b.shape())
                                            << " cannot be broadcast: " << shape_str(ba) << " vs " << shape_str(bb));
  }
  Shape ta = batch, tb = batch;
  ta.push_back(A.size(-2));
  ta.push_back(A.size(-1));
  tb.push_back(B.size(-2));
  tb.push_back(B.size(-1));
  Tensor out = batched_matmul(expand(A, ta), expand(B, tb), batch, engine);
  if (a.dim() == 1) out = squeeze(out, out.dim() - 2);
  if (b.dim() == 1) out = squeeze(out, out.dim() - 1);
  return out;
}
}  // namespace

Tensor matmul(const Tensor& a, const Tensor& b) {
  Engine engine = Engine::Blas;
  if (a.dtype() == kBFloat16 && b.dtype() == kBFloat16) engine = Engine::EmberBf16;
  else if (a.dtype() == kFloat32 && b.dtype() == kFloat32 && gemm::f32_matmul_uses_ember()) engine = Engine::EmberF32;
  return matmul_with(a, b, engine, "matmul");
}

Tensor matmul_bf16(const Tensor& a, const Tensor& b) { return matmul_with(a, b, Engine::EmberBf16, "matmul_bf16"); }

}  // namespace ember::kernel
