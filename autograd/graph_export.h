// to_dot: the backward graph of a tensor as Graphviz DOT text, to see what
// autograd recorded: one box per Node (with the shapes of the tensors it
// saved), one ellipse per leaf (name and shape), edges pointing from each
// node to the inputs its gradient flows to; a leaf's edge means "accumulate
// into .grad".
#pragma once

#include <string>

#include "tensor/tensor.h"

namespace ember {

std::string to_dot(const Tensor& root);
// Writes to_dot(root) to path; error naming the path if it cannot be written.
void write_dot(const Tensor& root, const std::string& path);

}  // namespace ember
