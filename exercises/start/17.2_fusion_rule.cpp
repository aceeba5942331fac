// Exercise 17.2: Write the fusion rule (chapter 17, docs/book/17_compile.md)
//
// compile/'s fusion pass walks a graph's calls in order and decides, call by
// call, which ones run together as one kernel. Write that decision:
//
//   groups(g)  the fused groups of g (a graph after the other passes), each
//              the indices into g.calls of its members, in order; groups in
//              the order they start.
//
// The rule: keep one group open.
//   * A call that fusible(c, g) says is elementwise (compile/codegen.h) and
//     whose result has the open group's shape and dtype joins it.
//   * Any other call that reads a value of the open group closes it first
//     (the value must be in memory before that call runs).
//   * A fusible call that cannot join (another shape or dtype) closes the
//     open group and opens a new one with itself.
//   * A call that neither joins nor reads the group leaves it open: the
//     group's members may sit on both sides of it.
//   * At the end the open group closes. A group of one call is no group (it
//     runs as that call): leave it out.
// (ember's pass also lets a sum of the group's values end it; the checker's
// graphs have no such sum.)
//
// A value's shape and dtype: g.values[id]. Graph::reads(call) lists the
// values a call reads; call.results[0] is an elementwise call's result.
//
// Think about:
//   * why may a call that does not read the group stay inside its span?
//   * in softmax's backward, y * (g - sum(g * y)): where does the sum cut?
//
// Compare with, after you try: fuse_elementwise in compile/fusion.cpp.
//
// Check it:  bash scripts/exercise.sh 17.2
#include "exercises/exercise.h"

namespace ex17_2 {

using namespace ember;
using namespace ember::compiler;

std::vector<std::vector<size_t>> groups(const Graph& g) {
  (void)g;
  TODO("walk g.calls with one open group: join, close, or leave it open");
}

}  // namespace ex17_2
