// Exercise 17.1: Predict a fused kernel's memory traffic, a reference solution.
//
// Eager: every call moves what it reads and what it writes. Fused: the same
// sum, because a fused call's arguments are exactly the values its group
// reads from outside and its results the values read after it: the values
// that stay inside the group never reach memory.
#include "exercises/exercise.h"

namespace ex17_1 {

using namespace ember;
using namespace ember::compiler;

namespace {
int64_t bytes_of(const Graph& g, int id) {
  const Value& v = g.values[static_cast<size_t>(id)];
  int64_t n = 1;
  for (int64_t d : v.shape) n *= d;
  return n * static_cast<int64_t>(dtype_size(v.dtype));
}
int64_t moved(const Graph& g) {
  int64_t total = 0;
  for (const Call& c : g.calls) {
    for (int id : Graph::reads(c)) total += bytes_of(g, id);
    for (int id : c.results) total += bytes_of(g, id);
  }
  return total;
}
}  // namespace

int64_t eager_bytes(const Graph& g) { return moved(g); }

int64_t fused_bytes(const Graph& g) { return moved(g); }

}  // namespace ex17_1
