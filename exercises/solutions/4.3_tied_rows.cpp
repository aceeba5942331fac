// Exercise 4.3: Why a tied table's unused rows move, a reference solution.
//
// The lookup sends gradient only to the rows of the ids in the batch. A tied
// head reads the same matrix for every logit, so its part touches every row:
// with tying, every row moves at every step.
#include <algorithm>

#include "exercises/exercise.h"
#include "exercises/tiny_lm.h"
#include "inspect/trace.h"

using namespace ember;

namespace ex4_3 {

std::string sender_of_unused_rows(exercise::TinyLM& model, const Tensor& ids) {
  inspect::BackwardTrace trace;
  Tensor logits = model.forward(ids);
  sum(logits * logits).backward();
  trace.stop_watching();
  const std::vector<int64_t> used = ids.to_vector<int64_t>();
  for (const auto& part : trace.provenance(model.embed->weight))
    for (int64_t row : part.rows)
      if (std::find(used.begin(), used.end(), row) == used.end()) return part.label;
  return "";
}

}  // namespace ex4_3
