/// @file
/// Running a graph: each call, in order, through its op's rule.
///
/// run(g, inputs) is the graph's interpreter: the same ops the function
/// called, with the same arguments, on new inputs of the captured shapes and
/// dtypes. It gives eager's values bit for bit (the same kernels run), and
/// autograd records through it as through the function itself. A value is
/// let go right after its last reader, so its memory can serve a later one.
#pragma once

#include <functional>
#include <vector>

#include "compile/graph.h"

namespace ember::compiler {

/// The graph's outputs for these inputs; an ember::Error naming the input
/// whose shape or dtype differs from the capture's.
std::vector<Tensor> run(const Graph& g, const std::vector<Tensor>& inputs);

/// The last call that reads each value (-1: none; outputs are never let go).
std::vector<int> last_uses(const Graph& g);

}  // namespace ember::compiler
