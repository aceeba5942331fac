/// @file
/// A linear op's rules, from the op and its transpose.
///
/// A selection y = L x (index_select, embedding, gather, slice, select, the
/// winners of max) is linear in x. Its forward rule is the op itself applied
/// to the tangent, L dx. Its backward is the transpose, g -> Lᵀ g: the
/// selected gradients scattered into zeros of x's shape, which a kernel does
/// in one pass. When backward records (create_graph) or tangents travel
/// through it, Lᵀ g must itself be differentiable in g, and it is linear too,
/// with transpose L. So the node states L (`linear`, the op) and Lᵀ
/// (`transposed`, the kernel), and apply() records Lᵀ g with a
/// TransposedBackward whose rule is L: the scatter is written once, and its
/// derivative is the op that was there already.
#pragma once

#include <memory>
#include <vector>

#include "autograd/node.h"
#include "tensor/tensor.h"

namespace ember {

struct LinearBackward : Node, std::enable_shared_from_this<LinearBackward> {
  /// L v: the op applied to v (differentiable: an ember op).
  virtual Tensor linear(const Tensor& v) const = 0;
  /// Lᵀ g: the scatter back into the input's shape (a kernel).
  virtual Tensor transposed(const Tensor& g) const = 0;
  /// Lᵀ g written with ember ops (zeros, then index_add or scatter_add),
  /// for compile/'s capture of a backward pass: a graph can remake it from
  /// the values it reads (the ids among them). Undefined if there is none.
  virtual Tensor transposed_by_ops(const Tensor& /*g*/) const { return Tensor(); }

  std::vector<Tensor> apply(const Tensor& grad_out) final;
};

}  // namespace ember
