// distributed/ in one process, without mpirun: what needs no other rank (the bucket
// plan, the batch shards, the checks before init). The collectives under
// MPI are tested by tests/distributed/distributed_test.cpp, started by mpirun.
#include <gtest/gtest.h>

#include "distributed/data_parallel.h"
#include "test_util.h"

using namespace ember;
using ember::test::expect_error;

namespace {

TEST(DistWithoutInit, EveryCallNamesItselfAndInit) {
  ASSERT_FALSE(distributed::is_initialized());
  expect_error([] { distributed::rank(); }, "distributed::rank", {"before distributed::init()"});
  expect_error([] { distributed::world_size(); }, "distributed::world_size", {"before distributed::init()"});
  expect_error([] { distributed::all_reduce(ones({2})); }, "distributed::all_reduce", {"before distributed::init()"});
  expect_error([] { distributed::broadcast(ones({2})); }, "distributed::broadcast", {"before distributed::init()"});
  expect_error([] { distributed::barrier(); }, "distributed::barrier", {"before distributed::init()"});
  expect_error([] { distributed::finalize(); }, "distributed::finalize", {"before distributed::init()"});
  expect_error([] { distributed::DataParallel ddp({ones({2}).requires_grad_()}); }, "distributed::rank", {"before distributed::init()"});
  EXPECT_EQ(distributed::where(), "");
  EXPECT_STREQ(distributed::reduce_op_name(distributed::ReduceOp::Mean), "mean");
}

std::vector<Tensor> params(const std::vector<std::pair<int64_t, DType>>& sizes) {
  std::vector<Tensor> out;
  for (auto [n, dt] : sizes) out.push_back(zeros({n}, dt));
  return out;
}

TEST(DistBuckets, ReverseRegistrationOrderAtMostTheByteLimit) {
  // 4-byte floats: 100 + 200 + 50 + 300 elements, limit 1600 bytes = 400 elements.
  auto p = params({{100, kFloat32}, {200, kFloat32}, {50, kFloat32}, {300, kFloat32}});
  std::vector<distributed::Bucket> b = distributed::plan_buckets(p, 1600);
  ASSERT_EQ(b.size(), 2u);
  EXPECT_EQ(b[0].params, (std::vector<size_t>{3, 2}));  // 300 + 50; 200 more would not fit
  EXPECT_EQ(b[0].offsets, (std::vector<int64_t>{0, 300}));
  EXPECT_EQ(b[0].bytes(), 1400);
  EXPECT_EQ(b[1].params, (std::vector<size_t>{1, 0}));
  EXPECT_EQ(b[1].numel, 300);
}

TEST(DistBuckets, ALargeParameterGetsABucketOfItsOwnAndDtypesDoNotMix) {
  auto p = params({{10, kFloat32}, {1000, kFloat32}, {10, kFloat64}, {10, kFloat32}});
  std::vector<distributed::Bucket> b = distributed::plan_buckets(p, 400);
  ASSERT_EQ(b.size(), 4u);
  EXPECT_EQ(b[0].params, (std::vector<size_t>{3}));  // float32, 40 bytes
  EXPECT_EQ(b[1].params, (std::vector<size_t>{2}));  // float64: a bucket of its dtype
  EXPECT_EQ(b[1].dtype, kFloat64);
  EXPECT_EQ(b[2].params, (std::vector<size_t>{1}));  // 4000 bytes, more than the limit: alone
  EXPECT_EQ(b[2].bytes(), 4000);
  EXPECT_EQ(b[3].params, (std::vector<size_t>{0}));  // would not fit beside it
}

TEST(DistBuckets, BadSizesAndDtypesAreErrors) {
  expect_error([] { distributed::plan_buckets(params({{3, kFloat32}}), 0); }, "plan_buckets", {"bucket_bytes", "0"});
  expect_error([] { distributed::plan_buckets(params({{3, kFloat32}, {2, kInt64}}), 1024); }, "plan_buckets",
               {"parameter 1", "int64"});
}

// The shards of a batch, put side by side, are the batch one process draws,
// and the generator ends where it ends for the whole batch.
TEST(DistShards, TheShardsTogetherAreTheWholeBatch) {
  std::vector<int64_t> tokens(500);
  for (size_t i = 0; i < tokens.size(); ++i) tokens[i] = static_cast<int64_t>(i % 37);
  train::BatchSampler whole(tokens, 6, 8, 0.1, 3), sharded(tokens, 6, 8, 0.1, 3);
  for (int round = 0; round < 3; ++round) {
    auto [x, y] = whole.sample();
    std::vector<int64_t> xs, ys;
    for (int64_t k = 0; k < 3; ++k) {
      Generator g = sharded.generator();  // each shard draws from the same state
      auto [sx, sy] = sharded.sample(false, g, train::Shard{k, 3});
      EXPECT_EQ(sx.shape(), (Shape{2, 8}));
      for (int64_t v : sx.to_vector<int64_t>()) xs.push_back(v);
      for (int64_t v : sy.to_vector<int64_t>()) ys.push_back(v);
      if (k == 2) sharded.generator() = g;
    }
    EXPECT_EQ(xs, x.to_vector<int64_t>()) << "round " << round;
    EXPECT_EQ(ys, y.to_vector<int64_t>());
    EXPECT_EQ(whole.generator().get_state().state, sharded.generator().get_state().state);
  }
  expect_error([&] { sharded.sample(false, sharded.generator(), train::Shard{0, 4}); }, "BatchSampler",
               {"batch of 6", "4"});
  expect_error([&] { sharded.sample(false, sharded.generator(), train::Shard{3, 3}); }, "BatchSampler", {"shard 3 of 3"});
}

}  // namespace
