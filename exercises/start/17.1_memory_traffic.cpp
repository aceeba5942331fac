// Exercise 17.1: Predict a fused kernel's memory traffic (chapter 17, docs/book/17_compile.md)
//
// Eager, every op reads its inputs from memory and writes its result back.
// Fused, a group of elementwise calls reads its inputs once and writes only
// the values read after it (compile/fusion.h). Predict both from the graph
// alone, in bytes: the checker runs the graph and counts what the kernels
// report to the instruments (base/hooks.h: TensorObserver::work).
//
//   eager_bytes(g)  g as captured, its calls run one by one: each call reads
//                   each of its tensor arguments whole, at its own size (a
//                   bias of 768 floats is read as 768 floats, however many
//                   rows it is added to), and writes its result.
//   fused_bytes(g)  g after the passes: a fused call (call.fused set) reads
//                   each of its inputs once and writes each of its results
//                   once; any other call as above.
//
// A value's size is g.values[id]: its shape's product times its dtype's
// size (dtype_size, tensor/dtype.h). Graph::reads(call) lists the values a
// call reads; call.results the values it writes.
//
// Think about:
//   * a value read by two calls: how many times does eager read it?
//   * the values inside a fused group: which of them reach memory?
//   * the bias+GELU chain of chapter 17: by how much should fusion cut the
//     traffic, before you run it?
//
// Compare with, after you try: run_fused in compile/fusion.cpp (the work it
// reports), and note_elementwise in tensor/elementwise.h.
//
// Check it:  bash scripts/exercise.sh 17.1
#include "exercises/exercise.h"

namespace ex17_1 {

using namespace ember;
using namespace ember::compiler;

int64_t eager_bytes(const Graph& g) {
  (void)g;
  TODO("each call: the bytes of the values it reads, plus those of its result");
}

int64_t fused_bytes(const Graph& g) {
  (void)g;
  TODO("a fused call reads its inputs and writes its results once; any other call as eager");
}

}  // namespace ex17_1
