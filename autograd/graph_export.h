/// @file
/// to_dot: the backward graph of a tensor as Graphviz DOT text, to see what
/// autograd recorded. One box per Node, labelled with its name, the tensor it
/// computed (its name if set, and its shape; "scalar" for shape ()) and each
/// tensor it saved for backward, by its role in the op ("saved: x (float64
/// scalar)", "saved: a (o, float64 scalar)" when the saved tensor has a name
/// of its own); one ellipse per leaf (name and shape). Edges point from each
/// node to the inputs its gradient flows to; a leaf's edge means "accumulate
/// into .grad". The output is a box of its own whose bold arrow shows where
/// backward starts. A title sits on top and a legend beside the graph says
/// what the boxes, ellipses and arrows mean.
#pragma once

#include <string>

#include "tensor/tensor.h"

namespace ember {

struct DotOptions {
  bool values = false;    // the value of each tensor that is still alive (up to 4 numbers)
  bool grads = false;     // each leaf's .grad (and a retained non-leaf's), when there is one
  std::string title{};    // default: "The backward graph of <the output's name>"
  bool legend = true;     // the key to the boxes, ellipses and arrows, in the picture
};

std::string to_dot(const Tensor& root, const DotOptions& options = {});
/// Writes to_dot(root) to path; error naming the path if it cannot be written.
void write_dot(const Tensor& root, const std::string& path, const DotOptions& options = {});

/// "scalar" for shape (), else "(2, 3)": how the graph writes a shape.
std::string shape_label(const Shape& s);

}  // namespace ember
