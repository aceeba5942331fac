// matmul. For C = A B:  dA = dC Bᵀ,  dB = Aᵀ dC (written with ember ops:
// with create_graph they record, for a second derivative). Batch dims that were
// broadcast are summed back by the engine; 1-D operands are re-inserted as
// the row/column they stood for, then removed again. Chapter 3 derives it.
//
// Three things here belong to later chapters and can be skipped on a first
// reading: the precision (chapter 13: under autocast, autograd/autocast.h, a
// float32 product runs in bfloat16 with float32 sums, kernel::matmul_bf16,
// and its node runs the two backward products the same way: the precision
// is the forward's, recorded in the node), a copy for BLAS (chapter 11), and
// the forward rule (chapter 14).
#include "autograd/autocast.h"
#include "autograd/batching.h"
#include "autograd/forward.h"
#include "autograd/node.h"
#include "autograd/op_scope.h"
#include "autograd/ops.h"
#include "tensor/gemm/microkernels.h"
#include "tensor/kernels.h"

namespace ember {

namespace {

// (chapter 11) A gradient BLAS cannot take as it is (e.g. sum's backward: one
// value expanded, strides 0) would be copied by each of the two products:
// copy it once. ember's own GEMM (autocast's products, EMBER_GEMM=ember)
// packs any strides as they are: no copy for it.
Tensor once_for_blas(const Tensor& G, bool bf16, bool two_products) {
  const int64_t gd = G.dim();
  const bool to_blas = !bf16 && !(G.dtype() == kFloat32 && gemm::f32_matmul_uses_ember());
  if (to_blas && two_products && gd >= 2 && G.stride()[gd - 1] != 1 && G.stride()[gd - 2] != 1) return G.contiguous();
  return G;
}

}  // namespace

struct MatmulBackward final : Node {
  EMBER_NODE_NAME(MatmulBackward)
  SavedTensor a, b;  // a is needed only for dB, b only for dA
  int64_t a_dim, b_dim;
  bool bf16;         // (chapter 13) the forward ran under autocast: so do the two products here
  MatmulBackward(const Tensor& a_, const Tensor& b_, int64_t ad, int64_t bd, bool bf)
      : a(a_), b(b_), a_dim(ad), b_dim(bd), bf16(bf) {}
  std::vector<SavedRef> saved() override { return {{"a", &a}, {"b", &b}}; }
  std::vector<Tensor> apply(const Tensor& g) override {
    AutocastGuard precision(bf16);  // (chapter 13)
    // Work with matrices: (…, M, K) @ (…, K, N) -> (…, M, N).
    Tensor G = g;
    if (a_dim == 1) G = unsqueeze(G, G.dim() - (b_dim == 1 ? 0 : 1));
    if (b_dim == 1) G = unsqueeze(G, G.dim());
    G = once_for_blas(G, bf16, a.defined() && b.defined());  // (chapter 11)
    Tensor grad_a, grad_b;
    if (b.defined()) {
      Tensor B = b_dim == 1 ? unsqueeze(b.get(*this), 1) : b.get(*this);
      grad_a = matmul(G, transpose(B, -1, -2));  // (…, M, K)
      if (a_dim == 1) grad_a = squeeze(grad_a, grad_a.dim() - 2);
    }
    if (a.defined()) {
      Tensor A = a_dim == 1 ? unsqueeze(a.get(*this), 0) : a.get(*this);
      if (b_dim == 2 && A.dim() > 2) {
        // b was shared by every batch entry: fold the batch into one gemm,
        // (K, B·M) @ (B·M, N), instead of B gemms and a sum.
        // (The rows counted, not -1: with K or N of 0 a -1 would be ambiguous.)
        int64_t rows = 1;
        for (int64_t d = 0; d + 1 < A.dim(); ++d) rows *= A.size(d);
        grad_b = matmul(transpose(reshape(A, {rows, A.size(-1)}), 0, 1), reshape(G, {rows, G.size(-1)}));
      } else {
        grad_b = matmul(transpose(A, -1, -2), G);  // (…, K, N)
      }
      if (b_dim == 1) grad_b = squeeze(grad_b, grad_b.dim() - 1);
    }
    return {grad_a, grad_b};
  }
};
Tensor matmul(const Tensor& a, const Tensor& b) {
  const bool bf16 = is_autocast_enabled() && a.dtype() == kFloat32 && b.dtype() == kFloat32;
  OpScope scope(bf16 ? "matmul_bf16" : "matmul", a, b);
  Tensor out = bf16 ? kernel::matmul_bf16(a, b) : kernel::matmul(a, b);
  if (needs_grad({a, b})) {
    auto node = std::make_shared<MatmulBackward>(b.requires_grad() ? a : Tensor(), a.requires_grad() ? b : Tensor(),
                                                 a.dim(), b.dim(), bf16);
    record(out, node, {a, b});
  }
  // (chapter 14) forward mode: d(A B) = dA B + A dB, on the tangents
  forward_rule(out, [&] { return plus(term(a, [&](const Tensor& da) { return matmul(da, b); }),
                                      term(b, [&](const Tensor& db) { return matmul(a, db); })); }, a, b);
  return scope.out(out);
}

// ---- vmap (autograd/batching.h): a batched product ----
// A vector operand becomes a one-row (or one-column) matrix, the batched
// operands are padded to one rank, and matmul's broadcasting over the
// leading dims pairs sample b of one with sample b of the other (or with
// the one matrix that is not batched). The result is then reshaped to the
// sample's result shape, which drops the vector's dim again. Two cases get
// one big product instead of B small ones: a batch of matrices times one
// matrix is one (B n, k) x (k, m) product (and one matrix times a batch, by
// its transpose), and products over k = 1 (outer products: a per-sample
// weight gradient xᵀ g) are a broadcast multiply, exact as the product is.
namespace {
Tensor stacked_times(const Tensor& a, const Tensor& b) {  // a (..., n, k) batched, b (k, m): one product
  Shape out = a.shape();
  out.back() = b.size(1);
  return matmul(a.reshape({-1, a.size(-1)}), b).reshape(out);
}
batching::Result matmul_batched(const batching::Call& c) {
  Tensor a = c.tensor(0), b = c.tensor(1);
  int64_t ra = c.rank(0), rb = c.rank(1);
  if (ra == 1) a = a.unsqueeze(c.batched[0] ? 1 : 0), ra = 2;
  if (rb == 1) b = b.unsqueeze(-1), rb = 2;
  const int64_t rank = std::max(ra, rb);
  a = batching::pad(a, c.batched[0], rank);
  b = batching::pad(b, c.batched[1], rank);
  Tensor out;
  if (c.op == "matmul" && a.size(-1) == 1)
    out = a * b;  // (…, n, 1) (…, 1, m): each element one product
  else if (c.op == "matmul" && !c.batched[1] && b.dim() == 2 && a.numel() && b.numel())
    out = stacked_times(a, b);
  else if (c.op == "matmul" && !c.batched[0] && a.dim() == 2 && a.numel() && b.numel())
    out = stacked_times(b.transpose(-1, -2), a.transpose(0, 1)).transpose(-1, -2);
  else
    out = c.run({a, b}).at(0);
  return batching::batched({out.reshape(batching::with_batch(c.sample_shapes.at(0), c.size))});
}
}  // namespace
void batching::detail::add_matmul_batching_rules(Rules& r) { r.add({"matmul", "matmul_bf16"}, &matmul_batched); }

}  // namespace ember
