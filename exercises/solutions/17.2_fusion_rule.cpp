// Exercise 17.2: Write the fusion rule, a reference solution.
//
// One open group, its members' results in a set: a call joins if it is
// elementwise with the group's shape and dtype; otherwise it closes the
// group when it reads one of those results or is itself elementwise (then
// it opens the next one).
#include <set>

#include "exercises/exercise.h"

namespace ex17_2 {

using namespace ember;
using namespace ember::compiler;

std::vector<std::vector<size_t>> groups(const Graph& g) {
  std::vector<std::vector<size_t>> out;
  std::vector<size_t> open;
  std::set<int> values;  // the open group's results
  const Value* kind = nullptr;  // its shape and dtype
  auto close = [&] {
    if (open.size() > 1) out.push_back(open);
    open.clear();
    values.clear();
    kind = nullptr;
  };
  for (size_t i = 0; i < g.calls.size(); ++i) {
    const Call& c = g.calls[i];
    const bool elementwise = fusible(c, g);
    const Value* v = elementwise ? &g.values[static_cast<size_t>(c.results[0])] : nullptr;
    if (elementwise && kind && v->shape == kind->shape && v->dtype == kind->dtype) {
      open.push_back(i);
      values.insert(c.results[0]);
      continue;
    }
    bool reads_open = false;
    for (int id : Graph::reads(c)) reads_open = reads_open || values.count(id);
    if (elementwise || reads_open) close();
    if (elementwise) {
      open = {i};
      values = {c.results[0]};
      kind = v;
    }
  }
  close();
  return out;
}

}  // namespace ex17_2
