/// @file
/// kernel::  — the numbers. Plain loops (and one call into OpenBLAS) that
/// compute an op's result without recording anything for autograd. The
/// differentiable ops in autograd/ops/ call these, then attach a backward node.
///
/// Every function validates its arguments first and throws ember::Error naming
/// the op, the value and the shapes; nothing is written before the checks pass.
#pragma once

#include <optional>
#include <utility>
#include <vector>

#include "tensor/tensor.h"

namespace ember::kernel {

// ---- conversion and copies (tensor/copy.cpp) ----
Tensor to(const Tensor& x, DType dt);  // always a new contiguous tensor
Tensor contiguous(const Tensor& x);    // x itself when already contiguous
void copy_(const Tensor& dst, const Tensor& src, const char* op = "copy_");  // src broadcast to dst, dtype converted
void fill_(const Tensor& dst, double value);

// ---- views: new TensorImpl, same storage (tensor/views.cpp) ----
/// True when x's elements may not all be at distinct memory locations (an
/// expand view, an overlapping as_strided): with the dims of size > 1 sorted
/// by stride, some stride does not step past what the smaller ones reach.
bool may_overlap_itself(const Tensor& x);
/// In-place writes must not depend on the order of the writes. Refuses
/// (ember::Error naming op) a destination that may_overlap_itself.
void check_no_internal_overlap(const Tensor& dst, const char* op);
/// Refuses a source (`what`: "source", "ids") that shares memory with the
/// destination; with allow_same, a source that is exactly the destination's
/// elements (same offset, shape and strides) is fine, as for copy_.
void check_no_overlap(const Tensor& dst, const Tensor& src, const char* op, const char* what, bool allow_same);

/// A view of x's storage. Every view is made here, and checked here: the
/// element count fits int64, strides are not negative, and every element
/// the view can address lies inside the storage (else an error naming op).
Tensor as_strided(const Tensor& x, const Shape& shape, const Shape& strides, int64_t offset,
                  const char* op = "as_strided");
Tensor view(const Tensor& x, const Shape& shape);     // error if strides do not allow it
Tensor reshape(const Tensor& x, const Shape& shape);  // view if possible, else a copy
Tensor transpose(const Tensor& x, int64_t d0, int64_t d1);
Tensor permute(const Tensor& x, const Shape& dims);
Tensor unsqueeze(const Tensor& x, int64_t d);
Tensor squeeze(const Tensor& x, std::optional<int64_t> d);
Tensor expand(const Tensor& x, const Shape& shape);
Tensor slice(const Tensor& x, int64_t d, int64_t start, int64_t end, int64_t step);
Tensor select(const Tensor& x, int64_t d, int64_t index);
Tensor flatten(const Tensor& x, int64_t start, int64_t end);

// ---- joining (a copy, in tensor/copy.cpp) ----
Tensor cat(const std::vector<Tensor>& xs, int64_t d);

// ---- elementwise ----
// Each enum's names and kernels are one table in tensor/elementwise.cpp, a
// row per entry in this order (a static_assert holds the two together).
enum class Unary { Neg, Exp, Log, Sqrt, Rsqrt, Abs, Sin, Cos, Tanh, Sigmoid, Relu, Gelu, GeluTanh, Sign, Erf, Count };
const char* unary_name(Unary op);
Tensor unary(Unary op, const Tensor& x);
/// The function unary(op, x) applies to each contiguous block of a float x
/// of dtype dt, for the ops that go a block at a time (exp, tanh, sigmoid,
/// erf, gelu, gelu_tanh); null for the rest (formulas on one number) and
/// for other dtypes. compile/'s generated kernels call it on their blocks,
/// so a fused exp gives eager's bits. y must not overlap x (sigmoid reads x
/// again after its first pass over y).
using UnaryBlock = void (*)(const void* x, void* y, int64_t n);
UnaryBlock unary_block(Unary op, DType dt);
/// g * gelu'(x) for the exact GELU: Phi(x) + x phi(x), one pass.
Tensor gelu_backward(const Tensor& x, const Tensor& g);
/// g * gelu'(x) for GELU's tanh form, one pass.
Tensor gelu_tanh_backward(const Tensor& x, const Tensor& g);

enum class Binary { Add, Sub, Mul, Div, Pow, Maximum, Minimum, Count };
const char* binary_name(Binary op);
Tensor binary(Binary op, const Tensor& a, const Tensor& b);  // broadcasting, same dtype
/// a (op) s, or s (op) a when scalar_first.
Tensor binary_scalar(Binary op, const Tensor& a, double s, bool scalar_first = false);
/// dst = dst (op) b in place, b broadcast to dst's shape (the caller checks
/// that it does), in one pass; the same bits as binary's. A b that shares
/// memory with dst (other than dst's own elements) is read before any write.
void binary_(Binary op, const Tensor& dst, const Tensor& b);
/// dst = dst (op) s in place.
void binary_scalar_(Binary op, const Tensor& dst, double s);

enum class Compare { Eq, Ne, Lt, Le, Gt, Ge, Count };
Tensor compare(Compare op, const Tensor& a, const Tensor& b);  // -> bool
Tensor compare_scalar(Compare op, const Tensor& a, double s);   // -> bool

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);
Tensor masked_fill(const Tensor& x, const Tensor& mask, double value);
Tensor clamp(const Tensor& x, std::optional<double> lo, std::optional<double> hi);
Tensor tril(const Tensor& x, int64_t k);
Tensor triu(const Tensor& x, int64_t k);

// ---- reductions ----
/// dims empty = all dims. Float sums accumulate in double.
Tensor sum(const Tensor& x, const Shape& dims, bool keepdim);
Tensor mean(const Tensor& x, const Shape& dims, bool keepdim);
Tensor var(const Tensor& x, const Shape& dims, int64_t correction, bool keepdim);
Tensor norm(const Tensor& x, double p, const Shape& dims, bool keepdim);
/// Values and int64 indices of the max/min along d (the first one on ties).
std::pair<Tensor, Tensor> max(const Tensor& x, int64_t d, bool keepdim);
std::pair<Tensor, Tensor> min(const Tensor& x, int64_t d, bool keepdim);
Tensor argmax(const Tensor& x, std::optional<int64_t> d, bool keepdim);
Tensor softmax(const Tensor& x, int64_t d);
Tensor log_softmax(const Tensor& x, int64_t d);
/// softmax(scale * x) over the last dim; causal: row i of each (Tq, Tk)
/// block sees keys 0..i only (the others get 0). Attention's scores in one pass.
Tensor scaled_softmax(const Tensor& x, double scale, bool causal);
/// The gradient of softmax (log = false) or log_softmax (log = true) given the
/// op's output y and grad_out g, fused into one pass over each row.
/// (scale: of scaled_softmax, whose gradient is the softmax one times it.)
/// causal > 0 (scaled_softmax's mask, rows of `causal` queries): the keys
/// a row does not see get gradient 0 and leave its sum alone.
Tensor softmax_backward(const Tensor& y, const Tensor& g, int64_t d, bool log, double scale = 1.0, int64_t causal = 0);
/// Sums a broadcast gradient back to `shape` (the inverse of broadcasting).
Tensor sum_to(const Tensor& x, const Shape& shape);

// ---- fused forward/backward pairs, one pass over each row (tensor/fused.cpp) ----
// Legend: N rows (all leading dims), D the normalized dim, C classes.
// A forward returns what its backward needs beside the inputs.

/// layer_norm over the last dim: out = (x - mean) * rstd * weight + bias, with
/// rstd = 1 / sqrt(var + eps) (biased var). x (*, D), weight and bias (D) ->
/// out (*, D); mean and rstd (N), one per row, for the backward.
struct LayerNormForward {
  Tensor out, mean, rstd;
};
LayerNormForward layer_norm_forward(const Tensor& x, const Tensor& weight, const Tensor& bias, double eps);
/// The gradients of x, weight and bias given grad_out (*, D).
struct LayerNormGrads {
  Tensor x, weight, bias;
};
LayerNormGrads layer_norm_backward(const Tensor& x, const Tensor& weight, const Tensor& mean, const Tensor& rstd,
                                   const Tensor& grad_out);

/// Attention without its weights (tensor/attention.cpp): q (…, Tq, d),
/// k (…, Tk, d), v (…, Tk, dv), the same leading dims -> out (…, Tq, dv)
/// = softmax(scale q kᵀ) v (causal: query i sees keys 0..i), and
/// lse (…, Tq), the log of each row's softmax denominator, for the backward,
/// which recomputes the weights tile by tile from it. A row with no key
/// (Tk = 0) gives 0 and lse = -inf. out keeps q's layout when q is dense
/// (a (B, h, T, d) head view of a (B, T, D) buffer: out's heads merge back
/// into (B, T, D) as a view). offset places the queries after a cache:
/// query i sits at position offset + i, so (causal) it sees keys
/// 0..offset+i; Tk = offset + Tq when the keys are a KV cache's
/// (nn/kv_cache.h).
struct TiledAttention {
  Tensor out, lse;
};
TiledAttention tiled_attention_forward(const Tensor& q, const Tensor& k, const Tensor& v, double scale, bool causal,
                                       int64_t offset = 0);
struct TiledAttentionGrads {
  Tensor q, k, v;
};
TiledAttentionGrads tiled_attention_backward(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out,
                                             const Tensor& lse, const Tensor& grad_out, double scale, bool causal);

/// cross_entropy per row: logits (*, C), targets (*) int64 in [0, C) or
/// ignore_index -> losses (N), -log softmax(logits)[target] (0 where ignored);
/// lse (N), log Σ exp(logits), for the backward; counted, the targets not ignored.
struct CrossEntropyForward {
  Tensor losses, lse;
  int64_t counted;
};
CrossEntropyForward cross_entropy_forward(const Tensor& logits, const Tensor& targets, int64_t ignore_index);
/// d/d logits of Σ_n g_n losses_n, with g_n = scale * grad_losses[n] (or its
/// one value, for every row): g_n (softmax(logits_n) - one_hot(target_n)), 0 where ignored.
Tensor cross_entropy_backward(const Tensor& logits, const Tensor& targets, const Tensor& lse, const Tensor& grad_losses,
                              double scale, int64_t ignore_index);

// ---- linear algebra (tensor/matmul.cpp, over OpenBLAS or tensor/gemm/) ----
/// float32/float64 -> the same (OpenBLAS; ember's GEMM when EMBER_GEMM=ember);
/// bfloat16 x bfloat16 -> float32 (ember's bfloat16 GEMM, float32 sums).
Tensor matmul(const Tensor& a, const Tensor& b);
/// autocast's product: float32 (or bfloat16) inputs, each value rounded to
/// bfloat16 as it is packed, products and sums in float32 -> float32.
Tensor matmul_bf16(const Tensor& a, const Tensor& b);

// ---- indexing ----
/// Checks that every id is in [0, n); error names op, id, its position, range.
void check_ids(const Tensor& ids, int64_t n, const char* op, const char* what = "index",
               const char* range = "the valid range");
Tensor index_select(const Tensor& x, int64_t d, const Tensor& ids);
void index_add_(const Tensor& x, int64_t d, const Tensor& ids, const Tensor& src);
/// Rows of a gradient along dim 0 (ids (N), rows (N, D...)) summed per id:
/// the distinct ids in the order they first appear, each with the sum of its
/// rows added in order into 0 (the very sums index_add_ makes into zeros).
/// Rows at `skip` (an embedding's padding id) are left out. Ids in [0, n).
RowGrad coalesce_rows(const Tensor& ids, const Tensor& rows, int64_t n, std::optional<int64_t> skip = std::nullopt);
/// Chunks of rows (each of distinct ids) as one: each row the sum of the
/// chunks' rows, added in the chunks' order into 0.
RowGrad coalesce_rows(const std::vector<RowGrad>& chunks, int64_t n);
Tensor gather(const Tensor& x, int64_t d, const Tensor& ids);
/// out = zeros(shape) with src scatter-added at ids along d (gather's adjoint).
Tensor scatter_add(const Shape& shape, int64_t d, const Tensor& ids, const Tensor& src);
Tensor one_hot(const Tensor& ids, int64_t num_classes);

}  // namespace ember::kernel
