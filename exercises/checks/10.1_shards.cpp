// Checks exercise 10.1: the shards cover the batch once, in order, equal to
// the rows the BatchSampler gives each rank (a wrong range is named: a size
// where the end belongs, an end inside the block, blocks of `world` rows),
// and the refusals.
#include <utility>

#include "exercises/checks/check.h"

namespace ex10_1 {
std::pair<int64_t, int64_t> shard_rows(int64_t batch, int64_t rank, int64_t world);
}

namespace {

using namespace ember;
using Range = std::pair<int64_t, int64_t>;

std::string show(const Range& r) {
  std::string s = "[";  // (appended: GCC 12 warns falsely on "literal" + std::string)
  return s.append(std::to_string(r.first)).append(", ").append(std::to_string(r.second)).append(")");
}

std::string range_mistake(int64_t batch, int64_t rank, int64_t world, const Range& got) {
  const int64_t rows = batch / world, begin = rank * rows;
  if (got == Range{begin, rows})
    return "the second number is the block's size: the pair is {begin, end}, end the first row after the block";
  if (got == Range{begin, begin + rows - 1})
    return "the range ends one row early: end is the first row the rank does not take (half-open, [begin, end))";
  if (got == Range{rank * world, (rank + 1) * world})
    return "each block has world rows: a rank takes its share of the batch, batch / world rows";
  if (got.second - got.first == rows)
    return "the size is right, the start is not: rank r's block comes after the r blocks of the ranks before it";
  return "each rank takes batch / world rows, its block after the blocks of the ranks before it";
}

void expect_rows(int64_t batch, int64_t rank, int64_t world) {
  const int64_t rows = batch / world;
  const Range want{rank * rows, (rank + 1) * rows}, got = ex10_1::shard_rows(batch, rank, world);
  check::expect(got == want,
                "shard_rows(" + std::to_string(batch) + ", " + std::to_string(rank) + ", " + std::to_string(world) +
                    ") is " + show(got) + ", but rank " + std::to_string(rank) + " of " + std::to_string(world) +
                    " takes rows " + show(want),
                range_mistake(batch, rank, world, got));
}

}  // namespace

check::Exercise check::exercise() {
  return {"10.1", "The shards of a batch", "docs/book/10_several_processes.md", {
    {"16 rows over 2 ranks: 0..8 and 8..16", [] {
       expect_rows(16, 0, 2);
       expect_rows(16, 1, 2);
     }},
    {"every batch and world: the shards cover each row once, in rank order", [] {
       for (int64_t world : {1, 2, 3, 4, 8})
         for (int64_t batch = world; batch <= 48; batch += world)
           for (int64_t r = 0; r < world; ++r) expect_rows(batch, r, world);
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
       expect_error([] { (void)ex10_1::shard_rows(10, 0, 3); }, {"10", "3"}, "shard_rows(10, 0, 3)",
                      "10 rows do not split into 3 equal shards (3 each would leave a row to no rank): which "
                      "batches does your check let through?",
                      "the message names the batch and the number of processes: both are needed to see why they "
                      "do not split");
       expect_error([] { (void)ex10_1::shard_rows(8, 2, 2); }, {"2"}, "shard_rows(8, 2, 2): rank 2 of 2",
                      "rank 2 of 2 does not exist: the ranks of 2 processes are 0 and 1");
     }},
  }};
}
