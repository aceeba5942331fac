/// @file
/// A fused op's mathematics, stated once more and only once: its composed
/// fallback.
///
/// A fused op (layer_norm, cross_entropy, softmax, gelu, tiled_attention) is
/// a kernel that does in one pass over memory what several ember ops would,
/// with a kernel for its first derivative beside it: that pair is for speed.
/// Everything else about the op's derivatives comes from one more function,
/// its *composed fallback*: the same function written with ember ops
/// ((x - mean) / sqrt(var + eps) * w + b for layer norm). Nothing is derived
/// by hand a second time:
///
///   * backward while it records (create_graph) or while tangents travel
///     through it (forward-over-reverse): the node runs the fallback on its
///     saved inputs and backpropagates through that (composed_vjp), so the
///     gradient has a graph and tangents of its own;
///   * the forward rule: the fallback run on the inputs, which carry their
///     tangents, gives the output's tangent (composed_forward_rule).
///
/// The tests hold the kernels to their fallbacks (tests/autograd_fused_test.cpp).
/// MLX gives its fast primitives such a fallback too.
#pragma once

#include <functional>
#include <vector>

#include "autograd/forward.h"
#include "autograd/grad_mode.h"
#include "autograd/node.h"
#include "tensor/tensor.h"

namespace ember {

/// The node of a fused op. It states its kernel backward and its fallback;
/// apply() picks: the kernel when nothing records and no tangent travels
/// (a training step), the fallback's derivative otherwise.
struct ComposedBackward : Node {
  /// The kernel's backward: one gradient per edge (input of record()).
  virtual std::vector<Tensor> fast_backward(const Tensor& grad_out) = 0;
  /// The op written in ember ops. Its inputs are the op's edges in order,
  /// then whatever else it reads that is not differentiated (targets, ids).
  virtual Tensor fallback(const std::vector<Tensor>& inputs) const = 0;
  /// Those inputs, from what the node saved.
  virtual std::vector<Tensor> fallback_inputs() = 0;
  /// The kernel's backward as one op (layer_norm_backward, ...), which
  /// compile/'s tracer writes down: what a captured backward pass calls when
  /// nothing records and no tangent travels, so that a compiled training step
  /// runs the same kernel as eager.
  virtual std::vector<Tensor> backward_as_op(const Tensor& grad_out) = 0;

  std::vector<Tensor> apply(const Tensor& grad_out) final;
};

/// For an op that is a backward kernel (layer_norm_backward, ...): it has no
/// derivative of its own, so it is an ember::Error, naming it, for it to
/// run while autograd would record through it (differentiate the forward op
/// with create_graph instead).
void refuse_to_record(const char* op, std::initializer_list<Tensor> inputs);

/// d <f(inputs), g> / d inputs by backpropagating through f: one partial
/// derivative per input (undefined for those that do not require grad). It
/// records when grad mode is on (create_graph); tangents of the inputs
/// travel into the result.
std::vector<Tensor> composed_vjp(const std::function<Tensor(const std::vector<Tensor>&)>& f,
                                 const std::vector<Tensor>& inputs, const Tensor& g);

namespace detail {
/// A new handle on x's memory recorded as x's identity: one input's own place
/// in a fallback's graph (two inputs that are one tensor, q = k = v, get two
/// places, and two partial derivatives). Defined in autograd/ops/view.cpp.
Tensor stand_in(const Tensor& x);

// composed_forward_rule's work, out of line and cold, as forward_rule's.
template <typename F, typename... Inputs>
[[gnu::noinline, gnu::cold]] void run_composed_rule(const Tensor& out, const F& f, const Inputs&... inputs) {
  ++rules_run;
  if (in_forward_rule || !(has_tangent(inputs) || ...)) return;
  Tensor y;
  {
    NoGradGuard values_only;  // tangents travel through the fallback's ops; nothing is recorded
    y = f();
  }
  Tensor t = tangent(y);
  set_tangent(out, t.defined() ? t : dx(y));
}
}  // namespace detail

/// A fused op's forward rule, from its fallback: `f()` computes the op with
/// ember ops from `inputs` (which carry their tangents), and the tangent of
/// what it returns is out's.
///   composed_forward_rule(out, [&] { return layer_norm_composed(x, w, b, eps); }, x, w, b);
template <typename F, typename... Inputs>
inline void composed_forward_rule(const Tensor& out, const F& f, const Inputs&... inputs) {
  if (detail::dual_level_depth != 0) [[unlikely]]
    detail::run_composed_rule(out, f, inputs...);
}

}  // namespace ember
