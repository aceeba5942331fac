/// @file
/// Passes over a graph, each small: a graph in, an equal graph out.
///
///   dead_code      drops the calls whose results nothing reads
///   identities     drops the calls that give back their input's values:
///                  sum_to, expand, reshape or view to its own shape, to()
///                  its own dtype, contiguous (the engine's sum_to of every
///                  gradient is one); readers read the input instead
///   common_subexpressions   a call equal to an earlier one (same op, same
///                  arguments) reads the earlier one's results instead
///   fuse_elementwise   elementwise chains as one kernel (compile/fusion.h)
///   optimize       dead_code, identities, common_subexpressions, dead_code, then
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
int common_subexpressions(Graph& g);
void optimize(Graph& g, bool fuse = true);

}  // namespace ember::compiler
