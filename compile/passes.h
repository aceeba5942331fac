/// @file
/// Passes over a graph, each small: a graph in, an equal graph out.
///
///   dead_code      drops the calls whose results nothing reads
///   identities     drops the calls that give back their input's values:
///                  sum_to, expand, reshape or view to its own shape, to()
///                  its own dtype, contiguous (the engine's sum_to of every
///                  gradient is one), and in a graph with a backward pass
///                  (run with autograd off) detach; readers read the input
///                  instead
///   fold_constants the calls that read only constants nothing but the graph
///                  holds (a mask the function made with ones() and triu):
///                  run once, here, their results become constants.
///                  Constants someone else holds (a module's weights) stay
///                  live, read when the graph runs: an optimizer changes them
///   common_subexpressions   a call equal to an earlier one (same op, same
///                  arguments) reads the earlier one's results instead
///   fuse_elementwise   elementwise chains as one kernel (compile/fusion.h)
///   optimize       dead_code, identities, fold_constants, common_subexpressions, dead_code, then
///                  (if fuse) fuse_elementwise, printing the graph before
///                  and after each one when EMBER_COMPILE_DEBUG is 2 or more
///
/// Every captured op is pure (in-place writes and random draws are refused
/// at capture, compile/capture.h), so dropping or merging calls changes no
/// value the function returns.
#pragma once

#include "compile/graph.h"

namespace ember::compiler {

/// Each returns how many calls it removed.
int dead_code(Graph& g);
int identities(Graph& g);
int fold_constants(Graph& g);
int common_subexpressions(Graph& g);
void optimize(Graph& g, bool fuse = true);

}  // namespace ember::compiler
