// Checks exercise 10.1: the shards cover the batch once, in order, equal to
// the rows the BatchSampler gives each rank, and the refusals.
#include <utility>

#include "exercises/checks/check.h"

namespace ex10_1 {
std::pair<int64_t, int64_t> shard_rows(int64_t batch, int64_t rank, int64_t world);
}

namespace {
using namespace ember;
}  // namespace

check::Exercise check::exercise() {
  return {"10.1", "The shards of a batch", "docs/book/10_several_processes.md", {
    {"16 rows over 2 ranks: 0..8 and 8..16", [] {
       expect(ex10_1::shard_rows(16, 0, 2) == std::pair<int64_t, int64_t>{0, 8}, "rank 0 of 2 should take rows [0, 8)");
       expect(ex10_1::shard_rows(16, 1, 2) == std::pair<int64_t, int64_t>{8, 16}, "rank 1 of 2 should take rows [8, 16)");
     }},
    {"every batch and world: the shards cover each row once, in rank order", [] {
       for (int64_t world : {1, 2, 3, 4, 8})
         for (int64_t batch = world; batch <= 48; batch += world) {
           int64_t next = 0;
           for (int64_t r = 0; r < world; ++r) {
             auto [b, e] = ex10_1::shard_rows(batch, r, world);
             expect(b == next && e - b == batch / world,
                    "batch " + std::to_string(batch) + ", rank " + std::to_string(r) + " of " + std::to_string(world) +
                        ": rows [" + std::to_string(b) + ", " + std::to_string(e) + ")");
             next = e;
           }
         }
     }},
    {"the same rows as train::BatchSampler gives each rank", [] {
       std::vector<int64_t> tokens(500);
       for (size_t i = 0; i < tokens.size(); ++i) tokens[i] = static_cast<int64_t>(i % 17);
       train::BatchSampler all(tokens, 12, 8, 0.1, 3), mine(tokens, 12, 8, 0.1, 3);
       Generator g1(5), g2(5);
       Tensor whole = all.sample(false, g1).first;                        // (12, 8)
       Tensor part = mine.sample(false, g2, train::Shard{2, 3}).first;    // rank 2 of 3
       auto [b, e] = ex10_1::shard_rows(12, 2, 3);
       expect_close(part.to(kFloat64), whole.narrow(0, b, e - b).to(kFloat64), "rank 2 of 3's rows", 0.0);
     }},
    {"a batch that does not split, and a bad rank, are ember::Errors", [] {
       expect_error([] { (void)ex10_1::shard_rows(10, 0, 3); }, {"10", "3"}, "shard_rows(10, 0, 3)");
       expect_error([] { (void)ex10_1::shard_rows(8, 2, 2); }, {"2"}, "shard_rows(8, 2, 2): rank 2 of 2");
     }},
  }};
}
