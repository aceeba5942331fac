// Exercise 10.1: The shards of a batch (chapter 10, docs/book/10_several_processes.md)
//
// With N processes (ranks 0 .. N-1) training one model, each takes its own
// rows of every batch: an equal, contiguous block of them, rank 0 the first
// block, rank 1 the next, and so on. Write shard_rows(batch, rank, world):
// rank's rows as {begin, end}, the first row it takes and the first one it
// does not (a half-open range, as everywhere in ember).
//
// train_gpt refuses a batch that does not split into equal shards: refuse it
// too, and a rank that does not exist, each with an ember::Error whose message
// names the numbers that disagree (EMBER_CHECK, base/error.h).
//
// Think about:
//   * how many rows does each rank take, and where does rank r's block start?
//   * which batches split into N equal blocks? which ranks exist?
//
// Compare with, after you try: struct Shard in train/data.h.
//
// Check it:  bash scripts/exercise.sh 10.1
#include <utility>

#include "exercises/exercise.h"

using namespace ember;

namespace ex10_1 {

std::pair<int64_t, int64_t> shard_rows(int64_t batch, int64_t rank, int64_t world) {
  (void)batch;
  (void)rank;
  (void)world;
  TODO("refuse what cannot be split or does not exist; then rank's block of rows as {begin, end}");
}

}  // namespace ex10_1
