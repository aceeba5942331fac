/// @file
/// Fusion: chains of elementwise calls, and a sum at their end, become one
/// generated kernel.
///
/// Eager, each elementwise op reads its inputs from memory and writes its
/// output back: x + b, then gelu, then * 0.5 moves the tensor through memory
/// six times. Fused, the three run on one block of elements at a time in L1
/// (compile/codegen.h), and memory sees the inputs read once and the result
/// written once.
///
/// The pass walks the calls in order and keeps one group open: an
/// elementwise call of the group's output shape and dtype joins it (reading
/// the group's values or not, and its inputs may broadcast); another call
/// that reads a value of the group closes it first, and the group is put
/// where it closed. A sum of one of the group's values (sum, or the sum_to
/// that backward passes end with: a bias's gradient) over its trailing dims
/// or over its leading dims ends the group and joins it: the kernel adds the
/// value up as it computes it, and never writes it unless it is read after.
/// A group of one call stays that call. Each group's outputs are the values
/// read after it (or returned).
///
/// prepare_kernels() writes each group's C++ and loads it (compile/toolchain.h).
/// When the graph runs, a group runs its kernel, or its calls one by one
/// (the eager ops) when autograd records: a kernel has no backward of its own.
#pragma once

#include <vector>

#include "compile/graph.h"

namespace ember::compiler {

/// Returns how many groups it made.
int fuse_elementwise(Graph& g);
/// Generates and loads the kernel of every fused call that has none yet.
void prepare_kernels(Graph& g);
/// A fused call's results (the values `results`, its Call's) for these
/// inputs (its arguments, in order).
std::vector<Tensor> run_fused(const Fused& f, const std::vector<Tensor>& inputs, const std::vector<int>& results);

}  // namespace ember::compiler
