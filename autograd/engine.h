/// @file
/// The backward engine: reverse-mode automatic differentiation over the graph
/// of Nodes that the ops recorded.
///
/// Two entry points share one walk of the graph:
///   * backward(root) accumulates d root / d leaf into every leaf's .grad;
///   * grad(outputs, inputs) returns d outputs / d inputs and touches no
///     .grad (PyTorch's torch.autograd.grad), for inputs that may be leaves or
///     intermediate tensors.
/// With create_graph, the backward rules run with grad mode on, so the
/// gradients they return are recorded too: they have a grad_fn and can be
/// differentiated again (second derivatives, Hessian-vector products,
/// gradient penalties). Without it nothing is recorded and nothing changes.
#pragma once

#include <vector>

#include "tensor/tensor.h"

namespace ember {

/// Computes d(root)/d(leaf) for every leaf that requires grad and accumulates
/// it into leaf.grad(). grad_output defaults to 1 for a one-element root.
/// Unless retain_graph (or create_graph), each node frees its saved tensors
/// as soon as its rule has run. With create_graph the .grad written is itself
/// differentiable (and is added out of place, so an earlier .grad is not
/// modified). Its graph then refers to the leaf whose .grad it is (the rules
/// saved the leaf): a cycle that keeps both in memory until the .grad is
/// reset (zero_grad, set_grad(Tensor())) or the leaf's nn::Module is
/// destroyed, which breaks it (a warning says so, once). grad() with
/// create_graph returns the gradient instead and makes no cycle.
void backward(const Tensor& root, const Tensor& grad_output = Tensor(), bool retain_graph = false,
              bool create_graph = false);

struct GradOptions {
  bool retain_graph = false;  // keep the saved tensors (implied by create_graph)
  bool create_graph = false;  // record the gradient computation, for a derivative of it
  bool allow_unused = false;  // an input the outputs do not depend on gets an undefined tensor (else an error)
};

/// d(sum_i <outputs[i], grad_outputs[i]>) / d inputs[j], one tensor per
/// input, without touching any .grad. grad_outputs may be empty when every
/// output has one element (1 is used), or give one tensor per output of its
/// shape. Only the part of the graph between the outputs and the inputs runs.
std::vector<Tensor> grad(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& grad_outputs = {}, const GradOptions& options = {});

namespace detail {
/// grad() for a backward rule that differentiates a function of its own (a
/// fused op's composed fallback, a checkpoint's recomputation): the walk
/// ends at each input and never enters what lies behind it, so each input
/// gets its partial derivative, as if it were a leaf, and the nodes of the
/// caller's graph are neither run nor freed (the engine that called the
/// rule does that). Unused inputs get undefined tensors.
std::vector<Tensor> partial_grad(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                                 const std::vector<Tensor>& grad_outputs, bool create_graph);
}  // namespace detail

}  // namespace ember
