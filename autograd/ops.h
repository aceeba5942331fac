/// @file
/// The differentiable operations: what users call. Each one checks its
/// arguments, computes with tensor/kernels.h, and — when grad mode is on and an
/// input requires grad — records a backward node. The implementations live in
/// `autograd/ops/<family>.cpp`, each op's Node (its backward rule) directly
/// above its forward.
#pragma once

#include <optional>
#include <utility>
#include <vector>

#include "tensor/tensor.h"

namespace ember {

// ---- views (autograd/ops/view.cpp) ----
Tensor reshape(const Tensor& x, const Shape& shape);  // a view when strides allow, else a copy
Tensor view(const Tensor& x, const Shape& shape);     // always a view; error if impossible
Tensor transpose(const Tensor& x, int64_t d0, int64_t d1);
Tensor permute(const Tensor& x, const Shape& dims);
Tensor unsqueeze(const Tensor& x, int64_t d);
Tensor squeeze(const Tensor& x);             // all size-1 dims
Tensor squeeze(const Tensor& x, int64_t d);  // that dim if it has size 1
Tensor expand(const Tensor& x, const Shape& shape);  // -1 keeps a size; new dims get stride 0
Tensor narrow(const Tensor& x, int64_t d, int64_t start, int64_t length);
Tensor slice(const Tensor& x, int64_t d, int64_t start, int64_t end, int64_t step = 1);
Tensor select(const Tensor& x, int64_t d, int64_t index);
Tensor flatten(const Tensor& x, int64_t start = 0, int64_t end = -1);
Tensor contiguous(const Tensor& x);
Tensor clone(const Tensor& x);
Tensor to(const Tensor& x, DType dt);  // differentiable between float32 and float64; bfloat16: storage only

// ---- joining (autograd/ops/join.cpp) ----
Tensor cat(const std::vector<Tensor>& xs, int64_t d = 0);
Tensor stack(const std::vector<Tensor>& xs, int64_t d = 0);

// ---- elementwise (autograd/ops/binary.cpp, autograd/ops/unary.cpp) ----
Tensor add(const Tensor& a, const Tensor& b);
Tensor sub(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, const Tensor& b);
Tensor pow(const Tensor& a, const Tensor& b);
Tensor pow(const Tensor& a, double e);
Tensor maximum(const Tensor& a, const Tensor& b);
Tensor minimum(const Tensor& a, const Tensor& b);
Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator+(const Tensor& a, double s);
Tensor operator-(const Tensor& a, double s);
Tensor operator*(const Tensor& a, double s);
Tensor operator/(const Tensor& a, double s);
Tensor operator+(double s, const Tensor& a);
Tensor operator-(double s, const Tensor& a);
Tensor operator*(double s, const Tensor& a);
Tensor operator/(double s, const Tensor& a);
Tensor operator-(const Tensor& a);

Tensor neg(const Tensor& x);
Tensor exp(const Tensor& x);
Tensor log(const Tensor& x);
Tensor sqrt(const Tensor& x);
Tensor rsqrt(const Tensor& x);
Tensor abs(const Tensor& x);
Tensor sin(const Tensor& x);
Tensor cos(const Tensor& x);
Tensor tanh(const Tensor& x);
Tensor sigmoid(const Tensor& x);
Tensor relu(const Tensor& x);
Tensor erf(const Tensor& x);  // the error function, 2/sqrt(pi) * integral of exp(-t^2) from 0 to x
enum class GeluApprox { None, Tanh };
Tensor gelu(const Tensor& x, GeluApprox approx = GeluApprox::None);
Tensor clamp(const Tensor& x, std::optional<double> lo, std::optional<double> hi);

/// Comparisons return bool tensors and are not differentiable.
Tensor eq(const Tensor& a, const Tensor& b);
Tensor ne(const Tensor& a, const Tensor& b);
Tensor lt(const Tensor& a, const Tensor& b);
Tensor le(const Tensor& a, const Tensor& b);
Tensor gt(const Tensor& a, const Tensor& b);
Tensor ge(const Tensor& a, const Tensor& b);
Tensor eq(const Tensor& a, double s);
Tensor ne(const Tensor& a, double s);
Tensor lt(const Tensor& a, double s);
Tensor le(const Tensor& a, double s);
Tensor gt(const Tensor& a, double s);
Tensor ge(const Tensor& a, double s);

// ---- selection (autograd/ops/select.cpp) ----
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);
Tensor masked_fill(const Tensor& x, const Tensor& mask, double value);
Tensor tril(const Tensor& x, int64_t k = 0);
Tensor triu(const Tensor& x, int64_t k = 0);

// ---- reductions (autograd/ops/reduce.cpp) ----
/// Sums x down to `shape` (x's shape broadcast from it): the leading dims
/// and the dims where shape has 1. What the engine does to a broadcast
/// gradient, as a differentiable op.
Tensor sum_to(const Tensor& x, const Shape& shape);
Tensor sum(const Tensor& x);
Tensor sum(const Tensor& x, const Shape& dims, bool keepdim = false);
Tensor mean(const Tensor& x);
Tensor mean(const Tensor& x, const Shape& dims, bool keepdim = false);
/// Sample variance by default (correction = 1, like PyTorch).
Tensor var(const Tensor& x, const Shape& dims = {}, int64_t correction = 1, bool keepdim = false);
Tensor norm(const Tensor& x, double p = 2.0, const Shape& dims = {}, bool keepdim = false);
Tensor max(const Tensor& x);  // scalar
Tensor min(const Tensor& x);
std::pair<Tensor, Tensor> max(const Tensor& x, int64_t d, bool keepdim = false);  // values, indices
std::pair<Tensor, Tensor> min(const Tensor& x, int64_t d, bool keepdim = false);
Tensor argmax(const Tensor& x);  // index into the flattened tensor
Tensor argmax(const Tensor& x, int64_t d, bool keepdim = false);
/// Along dim d. A row of only -inf (a fully masked attention row) gives 0
/// everywhere (log_softmax: -inf), never NaN; a NaN in a row makes the row NaN.
Tensor softmax(const Tensor& x, int64_t d);
Tensor log_softmax(const Tensor& x, int64_t d);
/// softmax(scale * x, -1), and with causal row i of each trailing (Tq, Tk)
/// block sees keys 0..i only: attention's weights in one op, the same as
/// softmax(masked_fill(x * scale, triu(ones(Tq, Tk), 1), -inf), -1) (tested).
Tensor scaled_softmax(const Tensor& x, double scale, bool causal = false);

// ---- attention without its weights (autograd/ops/attention.cpp) ----
/// softmax(q kᵀ / sqrt(d)) v, and with causal query i sees keys 0..i (as
/// scaled_softmax), for q (…, Tq, d), k (…, Tk, d), v (…, Tk, dv) with the
/// same leading dims. Equal to matmul(scaled_softmax(matmul(q, kᵀ), 1 /
/// sqrt(d), causal), v) up to rounding, but it never holds the (…, Tq, Tk)
/// weights: it saves its output and one log-sum-exp per query row, and its
/// backward recomputes the weights tile by tile (tensor/attention.cpp).
Tensor tiled_attention(const Tensor& q, const Tensor& k, const Tensor& v, bool causal = false);

// ---- matmul (autograd/ops/matmul.cpp), PyTorch semantics ----
Tensor matmul(const Tensor& a, const Tensor& b);

// ---- indexing (autograd/ops/index.cpp); ids are int64 and bounds-checked ----
Tensor index_select(const Tensor& x, int64_t d, const Tensor& ids);
/// The embedding lookup: weight (V, D), ids (*) -> (*, D), one row per id.
/// Rows never looked up get exactly zero gradient; the padding_idx row (if
/// any; negative counts from the end) gets none at all.
Tensor embedding(const Tensor& weight, const Tensor& ids, std::optional<int64_t> padding_idx = std::nullopt);
/// padding_idx wrapped into [0, V) for a (V, D) weight; error naming op otherwise.
int64_t padding_index(int64_t padding_idx, const Shape& weight_shape, const char* op);
Tensor gather(const Tensor& x, int64_t d, const Tensor& ids);
Tensor one_hot(const Tensor& ids, int64_t num_classes = -1);  // int64
/// In place: x.narrow(d, ids[i], 1) += src.narrow(d, i, 1); repeated ids accumulate.
Tensor& index_add_(Tensor& x, int64_t d, const Tensor& ids, const Tensor& src);
/// Out of place and differentiable: x with src's slices added at ids along d
/// (index_select's adjoint), and x with src's elements added at ids along d
/// (gather's adjoint; ids and src have one shape). Repeated ids accumulate.
Tensor index_add(const Tensor& x, int64_t d, const Tensor& ids, const Tensor& src);
Tensor scatter_add(const Tensor& x, int64_t d, const Tensor& ids, const Tensor& src);

// ---- fused ops: one node instead of many (autograd/ops/layer_norm.cpp, cross_entropy.cpp) ----
/// (x - mean) / sqrt(var + eps) * weight + bias over the last dim (biased var);
/// x (*, D), weight and bias (D).
Tensor layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, double eps = 1e-5);

enum class Reduction { Mean, Sum, None };
/// logits (N, C) or (B, T, C), targets (N) or (B, T) int64 in [0, C).
/// Targets equal to ignore_index contribute nothing (and are not counted by
/// Mean). Reduction::None returns the per-target losses (0 where ignored).
/// Mean over zero counted targets is NaN, as in PyTorch.
Tensor cross_entropy(const Tensor& logits, const Tensor& targets, Reduction reduction = Reduction::Mean,
                     int64_t ignore_index = -100);

// ---- the fused ops' composed fallbacks (autograd/composed_rule.h) ----
/// Each fused op above, written with ember ops: its definition, and what
/// create_graph and forward mode differentiate. Equal to the op up to
/// rounding (tests/autograd_fused_test.cpp), slower, with more temporaries.
namespace composed {
Tensor layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, double eps);
/// scale is 1/count for Reduction::Mean (the op's own count of targets), else 1.
Tensor cross_entropy(const Tensor& logits, const Tensor& targets, Reduction reduction, int64_t ignore_index,
                     double scale);
Tensor gelu(const Tensor& x, GeluApprox approx);
Tensor tiled_attention(const Tensor& q, const Tensor& k, const Tensor& v, bool causal);
}  // namespace composed

}  // namespace ember
