// Exercise 4.3: Why a tied table's unused rows move (chapter 4, docs/book/04_embeddings.md)
//
// model is a TinyLM (exercises/tiny_lm.h): an embedding "embed" and an LM
// head "head", maybe tied to one (V, D) matrix. ids uses only a few of the V
// rows. After one backward pass, rows that were never looked up can still
// have gradient. Find out who sends it.
//
// Run one forward and backward under an inspect::BackwardTrace (chapter 8,
// inspect/trace.h), any loss will do (sum(logits * logits), say). Then
// trace.provenance(model.embed->weight) splits the table's gradient into the
// parts each node sent; each part has a label (where the node was recorded,
// "module.op") and the rows it touched. Return the label of a part that
// touches a row whose id is not in ids, or "" when no part does.
//
// Before you run it, guess: the lookup reads only the rows of the ids in the
// batch; which other op reads the table, and which of its rows? What
// changes when the model is not tied?
//
// Check it:  bash scripts/exercise.sh 4.3
#include "exercises/exercise.h"
#include "exercises/tiny_lm.h"
#include "inspect/trace.h"

using namespace ember;

namespace ex4_3 {

std::string sender_of_unused_rows(exercise::TinyLM& model, const Tensor& ids) {
  (void)model;
  (void)ids;
  TODO("trace one forward and backward; which part of the table's gradient touches a row that ids never names?");
}

}  // namespace ex4_3
