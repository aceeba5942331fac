/// @file
/// The differentiable operations: what users call. Each one checks its
/// arguments, computes with tensor/kernels.h, and — when grad mode is on and an
/// input requires grad — records a backward node. The implementations live in
/// `autograd/ops/<family>.cpp`, each op's Node (its backward rule) directly
/// above its forward.
///
/// The ops on one tensor are listed once, in tensor/op_list.h, which declares
/// them here as functions (`ember::exp(x)`) and in tensor/tensor.h as methods
/// (`x.exp()`). Below them: the operators, the ops over several tensors and the
/// layers' building blocks, which are functions only (torch.nn.functional's
/// habit).
#pragma once

#include <optional>
#include <utility>
#include <vector>

#include "autograd/op_args.h"
#include "tensor/tensor.h"

namespace ember {

// ---- every op of tensor/op_list.h, as a function of its tensor ----
#define EMBER_DEFAULT(v) = v
#define EMBER_AFTER_X(...) (const Tensor& x __VA_OPT__(, ) __VA_ARGS__)
#define EMBER_OP(R, name, params, args) R name EMBER_AFTER_X params;
#include "tensor/op_list.h"
#undef EMBER_OP
#undef EMBER_AFTER_X
#undef EMBER_DEFAULT

// ---- joining (autograd/ops/join.cpp) ----
Tensor cat(const std::vector<Tensor>& xs, int64_t d = 0);
Tensor stack(const std::vector<Tensor>& xs, int64_t d = 0);

// ---- operators (autograd/ops/binary.cpp, unary.cpp) ----
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

// ---- selection (autograd/ops/select.cpp) ----
/// a where cond, else b (the method is a.where(cond, b), PyTorch's order).
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);

// ---- the layers' building blocks ----
Tensor gelu(const Tensor& x, GeluApprox approx = GeluApprox::None);  // autograd/ops/unary.cpp
/// softmax(scale * x, -1), and with causal row i of each trailing (Tq, Tk)
/// block sees keys 0..i only: attention's weights in one op, the same as
/// softmax(masked_fill(x * scale, triu(ones(Tq, Tk), 1), -inf), -1) (tested).
/// A row of only -inf (every key masked) is all 0, with gradient 0, as for
/// softmax: ember's rule, where PyTorch's softmax gives NaN (a row that may
/// attend to nothing weighs nothing, and no NaN reaches the weights).
Tensor scaled_softmax(const Tensor& x, double scale, bool causal = false);  // autograd/ops/reduce.cpp

/// softmax(q kᵀ / sqrt(d)) v, and with causal query i sees keys 0..i (as
/// scaled_softmax), for q (…, Tq, d), k (…, Tk, d), v (…, Tk, dv) with the
/// same leading dims. Equal to matmul(scaled_softmax(matmul(q, kᵀ), 1 /
/// sqrt(d), causal), v) up to rounding, but it never holds the (…, Tq, Tk)
/// weights: it saves its output and one log-sum-exp per query row, and its
/// backward recomputes the weights tile by tile (autograd/ops/attention.cpp,
/// tensor/attention.cpp). The two agree on the edge rows too: a row whose
/// scores are all -inf gives 0 (scaled_softmax's rule), a NaN score a NaN row.
Tensor tiled_attention(const Tensor& q, const Tensor& k, const Tensor& v, bool causal = false);

// (autograd/ops/index.cpp; ids are int64 and bounds-checked)
/// The embedding lookup: weight (V, D), ids (*) -> (*, D), one row per id.
/// Rows never looked up get exactly zero gradient; the padding_idx row (if
/// any; negative counts from the end) gets none at all. With sparse, a
/// backward() into weight's .grad leaves the rows looked up as rows
/// (Tensor::row_grad(), summed per id) instead of a dense (V, D) gradient;
/// .grad() adds them into one when read. The values are the dense ones.
Tensor embedding(const Tensor& weight, const Tensor& ids, std::optional<int64_t> padding_idx = std::nullopt,
                 bool sparse = false);
/// padding_idx wrapped into [0, V) for a (V, D) weight; error naming op otherwise.
int64_t padding_index(int64_t padding_idx, const Shape& weight_shape, const char* op);
Tensor one_hot(const Tensor& ids, int64_t num_classes = -1);  // int64
/// In place: x.narrow(d, ids[i], 1) += src.narrow(d, i, 1); repeated ids accumulate.
Tensor& index_add_(Tensor& x, int64_t d, const Tensor& ids, const Tensor& src);

// ---- fused ops: one node instead of many (autograd/ops/layer_norm.cpp, cross_entropy.cpp) ----
/// (x - mean) / sqrt(var + eps) * weight + bias over the last dim (biased var);
/// x (*, D), weight and bias (D).
Tensor layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, double eps = 1e-5);

/// logits (N, C) or (B, T, C), targets (N) or (B, T) int64 in [0, C).
/// Targets equal to ignore_index contribute nothing (and are not counted by
/// Mean). Reduction::None returns the per-target losses (0 where ignored).
/// Mean over zero counted targets is NaN, as in PyTorch. A row of only -inf
/// logits has loss +inf (softmax's rule weighs its target 0; PyTorch: NaN),
/// with gradient -1 at the target.
Tensor cross_entropy(const Tensor& logits, const Tensor& targets, Reduction reduction = Reduction::Mean,
                     int64_t ignore_index = -100);

// ---- the fused ops' backward kernels, as ops ----
/// What a fused op's node runs in backward, callable as ops of their own:
/// a backward pass captured by compile/ calls them, so a compiled training
/// step runs eager's kernels. Each takes the gradient of the op's output,
/// the op's inputs and what its forward saved (the statistics that
/// detail::*_saving return), and gives the inputs' gradients. They have no
/// derivative: called while autograd would record through them, they are an
/// ember::Error (differentiate the forward op with create_graph).
/// (autograd/ops/layer_norm.cpp, unary.cpp, cross_entropy.cpp, attention.cpp)
std::vector<Tensor> layer_norm_backward(const Tensor& grad, const Tensor& x, const Tensor& weight, const Tensor& mean,
                                        const Tensor& rstd);  // {dx, dweight, dbias}
Tensor gelu_backward(const Tensor& grad, const Tensor& x, GeluApprox approx);
/// Mean's 1/count is counted from the targets (those not ignore_index).
Tensor cross_entropy_backward(const Tensor& grad, const Tensor& logits, const Tensor& targets, const Tensor& lse,
                              Reduction reduction, int64_t ignore_index);
std::vector<Tensor> tiled_attention_backward(const Tensor& grad, const Tensor& q, const Tensor& k, const Tensor& v,
                                             const Tensor& out, const Tensor& lse, bool causal);  // {dq, dk, dv}

namespace detail {
/// The fused ops with what their backward reads as results beside the
/// output: layer_norm's {out, mean, rstd} (one per row), cross_entropy's
/// {loss, lse} and tiled_attention's {out, lse} (one per row). The public
/// op is the first; compile/'s tracer sees all (a graph holds them).
std::vector<Tensor> layer_norm_saving(const Tensor& x, const Tensor& weight, const Tensor& bias, double eps);
std::vector<Tensor> cross_entropy_saving(const Tensor& logits, const Tensor& targets, Reduction reduction,
                                         int64_t ignore_index);
std::vector<Tensor> tiled_attention_saving(const Tensor& q, const Tensor& k, const Tensor& v, bool causal);
}  // namespace detail

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
