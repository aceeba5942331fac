/// @file
/// Code generation: a fused group of elementwise calls as one C++ function.
///
/// The function computes elements [begin, end) of every output, a block of
/// 512 elements at a time. Each call of the group is one loop over the block
/// (the compiler vectorises it), reading and writing small arrays that stay
/// in L1; only the group's inputs are read from memory and only the values
/// read outside the group are written back. Each op's loop is its rule here:
/// the formula eager's kernel computes on one number (tensor/elementwise.cpp),
/// written the same way, so a fused add, mul or relu gives eager's bits. The
/// ops eager computes a block at a time (exp, tanh, sigmoid, erf, gelu) are
/// not written again: the kernel calls eager's own block function
/// (kernel::unary_block, handed over in `blocks`), so they give eager's bits
/// too.
///
///   for (int64_t j0 = begin; j0 < end; j0 += 512) {
///     const int64_t m = std::min<int64_t>(512, end - j0);
///     for (int64_t t = 0; t < m; ++t) b0[t] = in0[j0 + t] + in1[(j0 + t) % 768];  // %2 = add(%0, %1)
///     gelu_block(b0, b1, m);                                                      // %3 = gelu(%2)
///     for (int64_t t = 0; t < m; ++t) b0[t] = b1[t] * 0x1p-1f;                    // %4 = mul(%3, 0.5)
///     std::copy(b0, b0 + m, out0 + j0);
///   }
///
/// A group that ends in a sum (compile/fusion.h) runs over whole rows or
/// whole columns instead: [begin, end) are rows, each row's blocks summed
/// into eight partial sums in double, element i into partial i mod 8, as
/// eager's row sum adds (tensor/reduce.cpp); or [begin, end) are columns,
/// each a sum in double over the rows in order, as eager's column sweep
/// adds. So the sum gives eager's bits too.
///
/// Each loop over a block is marked `#pragma GCC ivdep`: the kernel's arrays
/// never overlap, and without being told, GCC checks every pair at run time
/// and, past about ten arrays, gives up and runs the loop one element at a
/// time.
#pragma once

#include <string>

#include "compile/graph.h"

namespace ember::compiler {

/// Whether the call is an elementwise op of float32 or float64 values that
/// a fused kernel can compute (codegen has its rule), given its values' types.
bool fusible(const Call& c, const Graph& g);

/// The C++ source of f's kernel (f's members, inputs, reads, shape and
/// dtype set; `outputs` the values the kernel writes, in order), a function
/// `extern "C" void ember_kernel(...)` of type KernelFn.
std::string generate(const Fused& f, const std::vector<int>& outputs, const Graph& g);

}  // namespace ember::compiler
