// Exercise 10.1: The shards of a batch (chapter 10, docs/book/10_several_processes.md)
//
// With N processes training one model, each takes its own rows of every
// batch: rank r of N takes rows [r * B / N, (r + 1) * B / N) (train/data.h,
// struct Shard). Write shard_rows(batch, rank, world): that range, as {begin,
// end}. train_gpt refuses a batch that does not split into equal shards:
// refuse it too (an ember::Error naming the batch and the number of
// processes), and a rank outside [0, world).
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
  TODO("check batch % world == 0 and 0 <= rank < world, then return {rank * batch / world, (rank + 1) * batch / world}");
}

}  // namespace ex10_1
