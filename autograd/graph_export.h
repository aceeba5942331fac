/// @file
/// to_dot: the backward graph of a tensor as Graphviz DOT text, to see what
/// autograd recorded. One box per Node, labelled with its name and the tensor
/// it computed (its name if set, and its shape; "scalar" for shape ()), plus
/// the shapes of the tensors it saved; one ellipse per leaf (name and shape).
/// Edges point from each node to the inputs its gradient flows to; a leaf's
/// edge means "accumulate into .grad".
#pragma once

#include <string>

#include "tensor/tensor.h"

namespace ember {

struct DotOptions {
  bool values = false;  // the value of each tensor that is still alive (up to 4 numbers)
  bool grads = false;   // each leaf's .grad (and a retained non-leaf's), when there is one
};

std::string to_dot(const Tensor& root, const DotOptions& options = {});
/// Writes to_dot(root) to path; error naming the path if it cannot be written.
void write_dot(const Tensor& root, const std::string& path, const DotOptions& options = {});

/// "scalar" for shape (), else "(2, 3)": how the graph writes a shape.
std::string shape_label(const Shape& s);

}  // namespace ember
