// Exercise 10.1: The shards of a batch, a reference solution.
#include <utility>

#include "exercises/exercise.h"

using namespace ember;

namespace ex10_1 {

std::pair<int64_t, int64_t> shard_rows(int64_t batch, int64_t rank, int64_t world) {
  EMBER_CHECK(world > 0 && batch % world == 0, "shard_rows",
              "a batch of " << batch << " does not split into " << world << " equal shards");
  EMBER_CHECK(rank >= 0 && rank < world, "shard_rows", "rank " << rank << " is outside [0, " << world << ")");
  return {rank * batch / world, (rank + 1) * batch / world};
}

}  // namespace ex10_1
