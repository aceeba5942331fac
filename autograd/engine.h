/// @file
/// The backward engine: reverse-mode automatic differentiation over the graph
/// of Nodes that the ops recorded.
#pragma once

#include "tensor/tensor.h"

namespace ember {

/// Computes d(root)/d(leaf) for every leaf that requires grad and accumulates
/// it into leaf.grad(). grad_output defaults to 1 for a one-element root.
/// Unless retain_graph, the saved tensors of every visited node are freed.
void backward(const Tensor& root, const Tensor& grad_output = Tensor(), bool retain_graph = false);

}  // namespace ember
