// distributed/ under MPI: this program is every rank of the job. ctest starts it as
//   mpirun --oversubscribe -np 2 distributed_tests
// (tests/distributed/CMakeLists.txt). Every rank runs every test, so a test is a
// collective: each rank makes the same calls in the same order and checks
// its own values; the job passes when every rank passed (main, below).
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>

#include "../test_util.h"
#include "distributed/data_parallel.h"
#include "distributed/zero.h"
#include "inspect/memory.h"
#include "train/resume.h"
#include "train/train_state.h"

using namespace ember;
using ember::test::expect_error;

namespace {

int me() { return distributed::rank(); }
int ranks() { return distributed::world_size(); }

// ---- the collectives, against closed forms ----

TEST(DistCollectives, AllReduceSumsRankPlusOneOverTheRanks) {
  const double n = ranks();
  for (DType dt : {kFloat32, kFloat64}) {
    SCOPED_TRACE(dtype_name(dt));
    Tensor t = full({7}, me() + 1, dt);  // (rank + 1) * ones
    distributed::all_reduce(t, distributed::ReduceOp::Sum);
    test::expect_values(t, std::vector<double>(7, n * (n + 1) / 2), 0);  // 1 + 2 + ... + N, exactly
    Tensor m = full({7}, me() + 1, dt);
    distributed::all_reduce(m, distributed::ReduceOp::Mean);
    test::expect_values(m, std::vector<double>(7, (n + 1) / 2), 0);
  }
}

TEST(DistCollectives, AllReduceOfAnEmptyTensorAndOfAScalar) {
  Tensor e = zeros({0}, kFloat32);
  distributed::all_reduce(e);
  EXPECT_EQ(e.numel(), 0);
  Tensor s = full({}, 2.5 * (me() + 1), kFloat64);
  distributed::all_reduce(s);
  EXPECT_EQ(s.item<double>(), 2.5 * ranks() * (ranks() + 1) / 2);
}

TEST(DistCollectives, BroadcastFromEveryRoot) {
  for (int root = 0; root < ranks(); ++root) {
    SCOPED_TRACE("root " + std::to_string(root));
    Tensor f = tensor(std::vector<double>{10.0 * me(), 10.0 * me() + 1}).to(kFloat32);
    distributed::broadcast(f, root);
    test::expect_values(f, {10.0 * root, 10.0 * root + 1}, 0);
    Tensor i = tensor(std::vector<int64_t>{me(), -me()});  // any dtype is broadcast
    distributed::broadcast(i, root);
    EXPECT_EQ(i.to_vector<int64_t>(), (std::vector<int64_t>{root, -root}));
  }
}

TEST(DistCollectives, AReductionBumpsTheVersionAndABarrierReturns) {
  Tensor t = ones({3});
  const uint64_t v = t.version();
  distributed::all_reduce(t);
  EXPECT_GT(t.version(), v);
  distributed::barrier();
  EXPECT_EQ(distributed::where(), "rank " + std::to_string(me()) + " of " + std::to_string(ranks()));
}

// The unchecked reduction (DataParallel's, every step) skips only the
// agreement round trip: the same bits.
TEST(DistCollectives, TheUncheckedAllReduceGivesTheSameBits) {
  Generator g(40 + static_cast<uint64_t>(me()));
  Tensor a = randn({1000}, g, kFloat32), b = a.clone();
  distributed::all_reduce(a, distributed::ReduceOp::Mean);
  distributed::all_reduce_unchecked(b, distributed::ReduceOp::Mean);
  EXPECT_TRUE(equal_bits(a, b));
}

// ---- bad input: the same ember::Error on every rank, never a hang ----

TEST(DistErrors, AnInt64AllReduceIsRefused) {
  expect_error([] { distributed::all_reduce(tensor(std::vector<int64_t>{1, 2})); }, "distributed::all_reduce",
               {"int64", "only float32 and float64"});
}

// The check is collective: the ranks that passed a good tensor learn that
// another did not, and throw too, instead of waiting for it in the reduction.
TEST(DistErrors, ARefusalOnOneRankIsAnErrorOnEveryRank) {
  Tensor t = me() == 1 ? tensor(std::vector<int64_t>{1, 2}) : ones({2});
  expect_error([&] { distributed::all_reduce(t); }, "distributed::all_reduce", {"rank 1", "int64"});
  Tensor nc = zeros({3, 2}, kFloat32);
  Tensor u = me() == 0 ? nc.t() : zeros({2, 3}, kFloat32);
  const std::string msg = expect_error([&] { distributed::all_reduce(u); }, "distributed::all_reduce", {"rank 0", "not contiguous"});
  if (me() == 0) {
    EXPECT_NE(msg.find("strides (1, 2)"), std::string::npos) << msg;
  }
}

TEST(DistErrors, DifferentSizesOnTheRanksNameEveryRanksSize) {
  Tensor t = zeros({3 + me()}, kFloat32);  // rank 0: 3 elements, rank 1: 4
  expect_error([&] { distributed::all_reduce(t); }, "distributed::all_reduce",
               {"the ranks' calls differ", "rank 0", "3 elements", "rank 1", "4 elements"});
  Tensor d = zeros({3}, me() == 0 ? kFloat32 : kFloat64);
  expect_error([&] { distributed::all_reduce(d); }, "distributed::all_reduce", {"float32", "float64"});
  Tensor b = zeros({3 + me()}, kInt64);
  expect_error([&] { distributed::broadcast(b, 0); }, "distributed::broadcast", {"3 elements", "4 elements"});
}

TEST(DistErrors, DifferentOpsOrRootsOnTheRanks) {
  Tensor t = ones({2});
  expect_error([&] { distributed::all_reduce(t, me() == 0 ? distributed::ReduceOp::Sum : distributed::ReduceOp::Mean); }, "distributed::all_reduce",
               {"op sum", "op mean"});
  expect_error([&] { distributed::broadcast(t, me()); }, "distributed::broadcast", {"root 0", "root 1"});
  expect_error([&] { distributed::broadcast(t, ranks()); }, "distributed::broadcast",
               {"root " + std::to_string(ranks()), "outside the job's ranks"});
  test::expect_values(t, {1, 1}, 0);  // a refused call changed nothing
}

TEST(DistErrors, InitTwiceAndAnUndefinedTensor) {
  expect_error([] { distributed::init(); }, "distributed::init", {"called twice"});
  expect_error([] { distributed::all_reduce(Tensor()); }, "distributed::all_reduce", {"undefined"});
  expect_error([] { distributed::all_reduce_unchecked(tensor(std::vector<int64_t>{1})); }, "distributed::all_reduce_unchecked",
               {"int64"});
}

// ---- data parallelism ----

// A small parameter list of several sizes and both float dtypes, with
// gradients made by a real backward: d/dp sum(p * c) = c, where c differs
// on every rank.
struct ToyParams {
  std::vector<Tensor> params;
  explicit ToyParams(uint64_t seed) {
    Generator g(seed);
    for (Shape s : {Shape{300}, Shape{17, 5}, Shape{1000}, Shape{4}, Shape{64, 9}})
      params.push_back(randn(s, g, kFloat32).requires_grad_());
    params.push_back(randn({33}, g, kFloat64).requires_grad_());
  }
  // This rank's "gradients": one c per parameter, seeded by rank and round.
  std::vector<Tensor> grads(int round) const {
    Generator g(1000 + 10 * static_cast<uint64_t>(me()) + static_cast<uint64_t>(round));
    std::vector<Tensor> out;
    for (const Tensor& p : params) out.push_back(randn(p.shape(), g, p.dtype()));
    return out;
  }
  void backward(const std::vector<Tensor>& c) const {
    Tensor loss;
    for (size_t i = 0; i < params.size(); ++i) {
      Tensor term = (params[i] * c[i]).sum().to(kFloat64);
      loss = loss.defined() ? loss + term : term;
    }
    loss.backward();
  }
};

TEST(DistDataParallel, BucketsFollowReverseRegistrationOrderAndTheByteLimit) {
  ToyParams toy(1);
  distributed::DataParallel ddp(toy.params, {.bucket_bytes = 4096});
  // float32: 1000*4 = 4000 bytes fills a bucket; 64*9*4 = 2304, then 4*4;
  // 17*5*4 = 340 and 300*4 = 1200 share one; the float64 one is alone.
  std::vector<std::vector<size_t>> expected = {{5}, {4, 3}, {2}, {1, 0}};
  ASSERT_EQ(ddp.buckets().size(), expected.size());
  for (size_t b = 0; b < expected.size(); ++b) EXPECT_EQ(ddp.buckets()[b].params, expected[b]) << "bucket " << b;
  int64_t bytes = 0;
  for (const Tensor& p : toy.params) bytes += p.numel() * static_cast<int64_t>(dtype_size(p.dtype()));
  EXPECT_EQ(ddp.stats().bytes, bytes);
}

// The parameters of every rank start as rank 0's.
TEST(DistDataParallel, RankZerosParametersAreBroadcastAtTheStart) {
  ToyParams mine(7 + static_cast<uint64_t>(me())), rank0(7);
  distributed::DataParallel ddp(mine.params);
  for (size_t i = 0; i < mine.params.size(); ++i) EXPECT_TRUE(equal_bits(mine.params[i], rank0.params[i])) << i;
}

TEST(DistDataParallel, DifferentModelsOnTheRanksAreAnErrorOnEveryRank) {
  if (ranks() != 2) GTEST_SKIP() << "the expected messages name the ranks of a job of 2";
  ToyParams toy(1);
  if (me() == 1) toy.params.pop_back();
  expect_error([&] { distributed::DataParallel ddp(toy.params); }, "DataParallel",
               {"the ranks disagree: parameters is 6 on rank 0 and 5 on rank 1", "parameter elements is 1998 on rank 0 and 1965 on rank 1"});
  ToyParams shaped(1);
  if (me() == 1) shaped.params[1] = randn({5, 17}).requires_grad_();  // same count and size, other shape
  const std::string msg = expect_error([&] { distributed::DataParallel ddp(shaped.params); }, "DataParallel",
                                       {"parameter dtypes and shapes (hash) is "});
  EXPECT_EQ(msg.find("parameter elements"), std::string::npos) << "only what differs is named: " << msg;
  // The bucket size decides how the gradients are cut into messages.
  expect_error([&] { distributed::DataParallel ddp(toy.params, {.bucket_bytes = me() == 0 ? 4096 : 8192}); }, "DataParallel",
               {"bucket bytes is 4096 on rank 0 and 8192 on rank 1"});
}

using Settings = std::vector<std::pair<std::string, std::string>>;

// Every setting that must agree is compared collectively: the same error on
// every rank, naming each value that differs and the ranks that have it.
TEST(DistAgreement, EverySettingThatDiffersIsNamedOnEveryRank) {
  if (ranks() != 2) GTEST_SKIP() << "the expected messages name the ranks of a job of 2";
  distributed::check_agreement("test", {{"lr", "0.003"}, {"seed", "1"}});  // equal: nothing happens
  const std::string mine = me() == 0 ? "0.003" : "0.001";
  const std::string msg = expect_error(
      [&] { distributed::check_agreement("test", {{"lr", mine}, {"seed", "1"}, {"data", me() == 0 ? "ab" : "cd"}}); }, "test",
      {"the ranks disagree: lr is 0.003 on rank 0 and 0.001 on rank 1; data is ab on rank 0 and cd on rank 1",
       "every rank must be given the same settings"});
  EXPECT_EQ(msg.find("seed"), std::string::npos) << msg;
  // A value may hold any byte, separators and digits and colons included.
  const std::string odd = std::string("a\x1f" "b\x1e" "3:c") + '\0' + "d";
  distributed::check_agreement("test", {{"3:x", odd}, {"", ""}, {"seed", "1"}});
  expect_error([&] { distributed::check_agreement("test", {{"3:x", me() == 0 ? odd : odd + "e"}, {"", ""}}); }, "test",
               {"the ranks disagree: 3:x is"});
  // Texts of other lengths, and one empty, travel whole.
  const std::vector<std::string> all = distributed::all_gather_text(me() == 0 ? "" : std::string(1000, 'x'));
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0], "");
  EXPECT_EQ(all[1], std::string(1000, 'x'));
  // A different list of settings is a different program.
  expect_error([&] { distributed::check_agreement("test", me() == 0 ? Settings{{"a", "1"}} : Settings{{"b", "1"}}); },
               "test", {"the ranks compare different settings (rank 1"});
}

// The bucketed reduction (packed, one all-reduce per bucket, unpacked) gives
// exactly what one all-reduce per tensor gives. With 2 ranks every element is a0 + a1 whatever way MPI
// cuts the message, so equal means bit for bit (with 3 or more the order of
// the additions can depend on the message size).
TEST(DistDataParallel, ABucketedAllReduceEqualsAPerTensorOne) {
  for (int64_t bucket : {int64_t{1} << 10, int64_t{4096}, int64_t{1} << 20}) {
    SCOPED_TRACE("bucket " + std::to_string(bucket));
    ToyParams toy(3);
    distributed::DataParallel ddp(toy.params, {.bucket_bytes = bucket});
    for (int round = 0; round < 2; ++round) {
      std::vector<Tensor> c = toy.grads(round);
      for (const Tensor& p : toy.params) p.set_grad(Tensor());
      toy.backward(c);
      ddp.average_gradients();
      for (size_t i = 0; i < c.size(); ++i) {
        Tensor expected = c[i].clone();
        distributed::all_reduce(expected, distributed::ReduceOp::Mean);
        if (ranks() == 2) {
          EXPECT_TRUE(equal_bits(toy.params[i].grad(), expected)) << "parameter " << i << ", round " << round;
        } else {
          test::expect_close(toy.params[i].grad(), expected, 1e-6);
        }
      }
    }
    EXPECT_EQ(ddp.stats().steps, 2);
  }
}

TEST(DistDataParallel, AParameterWithoutAGradientCountsAsZeros) {
  ToyParams toy(3);
  distributed::DataParallel ddp(toy.params, {.bucket_bytes = 4096});
  std::vector<Tensor> c = toy.grads(0);
  for (size_t i = 0; i < c.size(); ++i) toy.params[i].set_grad(i == 1 && me() == 1 ? Tensor() : c[i].clone());
  ddp.average_gradients();
  Tensor expected = me() == 1 ? zeros(c[1].shape()) : c[1].clone();
  distributed::all_reduce(expected, distributed::ReduceOp::Mean);
  ASSERT_TRUE(toy.params[1].grad().defined());
  EXPECT_TRUE(equal_bits(toy.params[1].grad(), expected));
}

// ---- training a tiny GPT on 2 ranks ----

std::string corpus() {
  std::string s;
  for (int i = 0; i < 40; ++i) s += "the quick brown fox jumps over the lazy dog; ";
  return s;
}
struct TinyRun {
  train::CharTokenizer tok = train::CharTokenizer::from_text(corpus());
  nn::GPTConfig config(uint64_t seed = 11) const {
    nn::GPTConfig c;
    c.vocab_size = tok.vocab_size();
    c.context_length = 16;
    c.dim = 32;
    c.heads = 2;
    c.layers = 2;
    c.seed = seed;
    return c;
  }
  train::TrainOptions options(int64_t batch = 16) const {
    train::TrainOptions o;
    o.steps = 12;
    o.batch = batch;
    o.warmup = 3;
    o.eval_every = 6;
    o.eval_batches = 2;
    o.seed = 5;
    return o;
  }
  std::vector<int64_t> tokens() const { return tok.encode(corpus()); }
};

// How many parameter values differ from rank 0's, bit for bit, summed over
// the ranks (0: every rank holds exactly rank 0's parameters).
int64_t parameters_unlike_rank_zero(const nn::Module& m) {
  NoGradGuard no_grad;
  std::vector<Tensor> flat;
  for (const Tensor& p : m.parameters()) flat.push_back(p.detach().reshape({-1}));
  Tensor mine = cat(flat, 0), root = mine.clone();  // one broadcast for the whole model
  distributed::broadcast(root, 0);
  const float *a = mine.data_ptr<float>(), *b = root.data_ptr<float>();
  double differ = 0;
  for (int64_t i = 0; i < mine.numel(); ++i) differ += std::memcmp(a + i, b + i, sizeof(float)) != 0;
  Tensor t = full({}, differ, kFloat64);
  distributed::all_reduce(t);
  return static_cast<int64_t>(t.item<double>());
}

std::vector<double> losses(const train::Trainer& t) {
  std::vector<double> out;
  for (const train::StepLog& s : t.history())
    if (s.step > 0) out.push_back(s.loss);
  return out;
}

// A new directory that rank 0 chooses, its name on every rank.
std::string shared_temp_dir() {
  std::string dir;
  if (me() == 0) {
    std::string tmpl = (std::filesystem::temp_directory_path() / "ember_dist_resume_XXXXXX").string();
    EXPECT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir = tmpl;
  }
  return distributed::all_gather_text(dir)[0];
}

TEST(DistTraining, AfterEveryStepEveryRankHoldsTheSameParameters) {
  if (16 % ranks() != 0) GTEST_SKIP() << "the batch of 16 does not split into " << ranks() << " shards";
  TinyRun run;
  std::vector<std::vector<double>> curves;
  for (int64_t bucket : {int64_t{16} << 10, distributed::DataParallelOptions{}.bucket_bytes}) {
    SCOPED_TRACE("bucket " + std::to_string(bucket));
    nn::GPT model(run.config(/*seed=*/11 + static_cast<uint64_t>(me())));  // different until the broadcast
    distributed::DataParallel ddp(model.parameters(), {.bucket_bytes = bucket});
    if (bucket == int64_t{16} << 10) {
      EXPECT_GT(ddp.buckets().size(), 2u);
    }
    train::Trainer trainer(model, run.tokens(), run.options());
    trainer.set_replicas(ddp);
    EXPECT_EQ(parameters_unlike_rank_zero(model), 0);
    while (!trainer.done()) {
      trainer.step();
      ASSERT_EQ(parameters_unlike_rank_zero(model), 0) << "after step " << trainer.steps_done();
    }
    curves.push_back(losses(trainer));
    // Only rank 0 evaluates.
    EXPECT_EQ(trainer.history().back().val_loss.has_value(), me() == 0);
  }
  // The bucket size changes how the numbers travel, not what they are (bit
  // for bit with 2 ranks, see ABucketedAllReduceEqualsAPerTensorOne).
  ASSERT_EQ(curves[0].size(), curves[1].size());
  for (size_t i = 0; i < curves[0].size(); ++i) {
    if (ranks() == 2) {
      EXPECT_EQ(curves[0][i], curves[1][i]) << "step " << i + 1;
    } else {
      EXPECT_NEAR(curves[0][i], curves[1][i], 1e-6 * curves[1][i]) << "step " << i + 1;
    }
  }
}

// The run is defined by --batch, not by the number of ranks: N ranks with
// batch/N rows each follow the loss curve of one process with the whole
// batch. Not bit for bit: float addition is not associative, and the two
// add in different orders. The whole batch sums the loss over its 16 x 16
// positions at once, the ranks over 8 x 16 each and then average the two
// means; every weight gradient is a sum over the rows (a matmul X^T G: BLAS
// adds 256 rows in its own blocking order, here two sums of 128 are added
// by the all-reduce), and so are LayerNorm's and the embedding's. The
// results differ in the last bits of float32, and AdamW carries that on.
// Measured over these 12 steps: the losses differ by at most one float32 ulp
// (1.2e-7 at a loss of 3; half of them are equal), the gradient norms (a sum
// of squares of every gradient, which rounds more) by 2.2e-7 relative.
// The curves keep drifting apart slowly, since each step starts from
// weights that differ in their last bits: in a 400-step run of this setup
// the loss differs by 1e-6 relative at step 100 and 1.5e-6 at step 400 (at
// losses near 0.08), the gradient norm by 1.7e-5. So the tolerance is for
// this short run: 1e-6 relative for the loss (about 12 ulps at 3), 1e-5 for
// the gradient norm, both well above what its 12 steps show.
TEST(DistTraining, NRanksOfAShardFollowOneProcessWithTheWholeBatch) {
  if (16 % ranks() != 0) GTEST_SKIP() << "the batch of 16 does not split into " << ranks() << " shards";
  TinyRun run;
  nn::GPT shared_model(run.config());
  distributed::DataParallel ddp(shared_model.parameters());
  train::Trainer shared(shared_model, run.tokens(), run.options(16));
  shared.set_replicas(ddp);
  nn::GPT alone_model(run.config());  // on every rank: one process, the whole batch
  train::Trainer alone(alone_model, run.tokens(), run.options(16));
  double worst = 0;
  for (int s = 1; !shared.done(); ++s) {
    const train::StepLog a = shared.step(), b = alone.step();
    worst = std::max(worst, std::fabs(a.loss - b.loss));
    EXPECT_NEAR(a.loss, b.loss, 1e-6 * std::fabs(b.loss)) << "step " << s;
    EXPECT_NEAR(a.grad_norm, b.grad_norm, 1e-5 * b.grad_norm) << "step " << s;
  }
  std::printf("[ rank %d ] %d ranks x batch %lld vs 1 x batch 16: largest loss difference %.3g over %lld steps\n", me(),
              ranks(), static_cast<long long>(16 / ranks()), worst, static_cast<long long>(shared.steps_done()));
  if (me() == 0) {  // the validation losses (rank 0 evaluates) agree as closely
    ASSERT_TRUE(shared.history().back().val_loss && alone.history().back().val_loss);
    EXPECT_NEAR(*shared.history().back().val_loss, *alone.history().back().val_loss,
                1e-6 * *alone.history().back().val_loss);
  }
}

TEST(DistTraining, ResumingWithTheSameRanksContinuesBitForBit) {
  if (16 % ranks() != 0) GTEST_SKIP() << "the batch of 16 does not split into " << ranks() << " shards";
  TinyRun run;
  const std::string dir = shared_temp_dir();

  nn::GPT straight(run.config());
  distributed::DataParallel ddp_a(straight.parameters());
  train::Trainer a(straight, run.tokens(), run.options());
  a.set_replicas(ddp_a);
  while (!a.done()) a.step();
  {
    nn::GPT first(run.config());
    distributed::DataParallel ddp_b(first.parameters());
    train::Trainer b(first, run.tokens(), run.options());
    b.set_replicas(ddp_b);
    for (int i = 0; i < 5; ++i) b.step();
    b.save(dir, {{"config", run.config().to_string()}});  // every rank calls it; rank 0 writes
    distributed::barrier();  // the files are complete before any rank reads them
  }
  nn::GPT second(run.config(/*seed=*/99));
  train::Trainer c(second, run.tokens(), run.options());
  c.resume(dir);
  EXPECT_EQ(c.resumed_world_size(), ranks());
  distributed::DataParallel ddp_c(second.parameters());
  c.set_replicas(ddp_c);
  while (!c.done()) c.step();
  std::vector<Tensor> pa = straight.parameters(), pc = second.parameters();
  for (size_t i = 0; i < pa.size(); ++i) EXPECT_TRUE(equal_bits(pa[i], pc[i])) << "parameter " << i;
  EXPECT_EQ(losses(a), losses(c));
  distributed::barrier();
  if (me() == 0) std::filesystem::remove_all(dir);
}

TEST(DistTraining, TheTrainerRefusesABatchThatDoesNotSplitAndDropout) {
  TinyRun run;
  nn::GPT model(run.config());
  distributed::DataParallel ddp(model.parameters());
  train::Trainer odd(model, run.tokens(), run.options(/*batch=*/2 * ranks() + 1));
  expect_error([&] { odd.set_replicas(ddp); }, "Trainer", {"does not split into " + std::to_string(ranks())});
  nn::GPTConfig c = run.config();
  c.dropout = 0.1;
  nn::GPT dropped(c);
  distributed::DataParallel ddp2(dropped.parameters());
  train::Trainer t(dropped, run.tokens(), run.options(/*batch=*/4 * ranks()));
  expect_error([&] { t.set_replicas(ddp2); }, "Trainer", {"dropout 0.1", "same dropout masks"});
}

// Ranks given different training options are refused by the Trainer, which
// compares them, under its own name: what differs is an option, not the
// parameters DataParallel lays out.
TEST(DistTraining, RanksWithOtherOptionsAreRefusedByTheTrainer) {
  if (ranks() < 2) GTEST_SKIP() << "needs two ranks";
  TinyRun run;
  nn::GPT model(run.config());
  distributed::DataParallel ddp(model.parameters());
  train::TrainOptions o = run.options(4 * ranks());
  if (me() == 1) o.lr *= 2;
  train::Trainer t(model, run.tokens(), o);
  expect_error([&] { t.set_replicas(ddp); }, "Trainer", {"the ranks disagree: lr is"});
}

// ---- sharding: the collectives of ZeRO, and stages 1 and 2 ----

// Rank s's part has s + 1 elements (rank 0 one, the last N), so the parts
// are uneven at every rank count.
std::vector<int64_t> uneven_counts() {
  std::vector<int64_t> c;
  for (int s = 0; s < ranks(); ++s) c.push_back(s + 1);
  return c;
}

TEST(DistCollectives, ReduceScatterAllGatherAndGatherOfUnevenParts) {
  const int n = ranks(), r = me();
  const std::vector<int64_t> counts = uneven_counts();
  const int64_t total = static_cast<int64_t>(n) * (n + 1) / 2, at = static_cast<int64_t>(r) * (r + 1) / 2;
  // in[i] = (r + 1)(i + 1) on rank r: the sum over the ranks is n(n+1)/2 (i + 1).
  Tensor in = empty({total});
  for (int64_t i = 0; i < total; ++i) in.data_ptr<float>()[i] = static_cast<float>((r + 1) * (i + 1));
  for (distributed::ReduceOp op : {distributed::ReduceOp::Sum, distributed::ReduceOp::Mean}) {
    Tensor out = full({r + 1}, -1.0);
    distributed::reduce_scatter_unchecked(in, out, counts, op);
    for (int64_t j = 0; j <= r; ++j) {
      const double sum = static_cast<double>(total) * static_cast<double>(at + j + 1);
      EXPECT_EQ(out.data_ptr<float>()[j], static_cast<float>(op == distributed::ReduceOp::Sum ? sum : sum / n))
          << distributed::reduce_op_name(op) << " element " << j;
    }
  }
  // All-gather in place: each rank fills its part with 100 r + j.
  Tensor t = zeros({total}, kFloat64);
  for (int64_t j = 0; j <= r; ++j) t.data_ptr<double>()[at + j] = 100.0 * r + static_cast<double>(j);
  distributed::all_gather_unchecked(t, counts);
  for (int s = 0, i = 0; s < n; ++s)
    for (int j = 0; j <= s; ++j, ++i) EXPECT_EQ(t.data_ptr<double>()[i], 100.0 * s + j) << "part " << s;
  // Gather to the last rank: int64 parts, rank s sends s + 1 copies of s.
  const int root = n - 1;
  Tensor mine = full({r + 1}, static_cast<double>(r), kInt64);
  Tensor all = r == root ? zeros({total}, kInt64) : Tensor();
  distributed::gather_unchecked(mine, all, counts, root);
  if (r == root) {
    for (int s = 0, i = 0; s < n; ++s)
      for (int j = 0; j <= s; ++j, ++i) EXPECT_EQ(all.data_ptr<int64_t>()[i], s);
  }
  // A rank with an empty part takes part all the same.
  std::vector<int64_t> some(static_cast<size_t>(n), 2);
  some[0] = 0;
  Tensor in2 = ones({2 * (n - 1)}), out2 = zeros({some[static_cast<size_t>(r)]});
  distributed::reduce_scatter_unchecked(in2, out2, some);
  for (int64_t j = 0; j < out2.numel(); ++j) EXPECT_EQ(out2.data_ptr<float>()[j], static_cast<float>(n));
}

TEST(DistErrors, TheShardingCollectivesNameTheCountsAndSizes) {
  const std::vector<int64_t> counts = uneven_counts();
  const int64_t total = static_cast<int64_t>(ranks()) * (ranks() + 1) / 2;
  Tensor in = ones({total}), out = ones({me() + 1});
  expect_error([&] { distributed::reduce_scatter_unchecked(in, out, {1}); }, "distributed::reduce_scatter_unchecked",
               {"1 counts for a job of " + std::to_string(ranks()) + " ranks"});
  std::vector<int64_t> more = counts;
  more.back() += 1;
  expect_error([&] { distributed::reduce_scatter_unchecked(in, out, more); }, "distributed::reduce_scatter_unchecked",
               {"add up to " + std::to_string(total + 1), std::to_string(total) + " elements"});
  Tensor wrong = ones({me() + 2});
  expect_error([&] { distributed::reduce_scatter_unchecked(in, wrong, counts); }, "distributed::reduce_scatter_unchecked",
               {"out has " + std::to_string(me() + 2) + " elements"});
  expect_error([&] { distributed::all_gather_unchecked(ones({total}, kInt64), counts); }, "distributed::all_gather_unchecked",
               {"int64", "only float32 and float64"});
  std::vector<int64_t> negative = counts;
  negative[0] = -1;
  expect_error([&] { distributed::all_gather_unchecked(in, negative); }, "distributed::all_gather_unchecked", {"count -1 for rank 0"});
  expect_error([&] { distributed::gather_unchecked(ones({me() + 1}), Tensor(), counts, ranks()); }, "distributed::gather_unchecked",
               {"root " + std::to_string(ranks())});
  // Every tensor as it was.
  EXPECT_EQ(in.to_vector<float>(), std::vector<float>(static_cast<size_t>(total), 1.0f));
}

TEST(DistZero, ShardsStartOnNormBlocksAreEvenAndCoverEveryElement) {
  // Worked by hand: 300 + 200 + 12 = 512 elements.
  std::vector<Tensor> toy{zeros({300}), zeros({20, 10}), zeros({3, 4})};
  distributed::ShardPlan two = distributed::plan_shards(toy, 2);
  EXPECT_EQ(two.begin, (std::vector<int64_t>{0, 256, 512}));
  EXPECT_EQ(two.first, (std::vector<int64_t>{0, 300, 500}));
  EXPECT_EQ(two.tensors(0), 1);  // the first 256 of tensor 0
  EXPECT_EQ(two.tensors(1), 3);  // its last 44, and the two others
  // Three shards of 512 on blocks of 256: 170.7 and 341.3 round to 256 and
  // 256: the middle shard is empty.
  EXPECT_EQ(distributed::plan_shards(toy, 3).begin, (std::vector<int64_t>{0, 256, 256, 512}));
  TinyRun run;
  nn::GPT model(run.config());
  const std::vector<Tensor> params = model.parameters();
  for (int world = 1; world <= 5; ++world) {
    const distributed::ShardPlan plan = distributed::plan_shards(params, world);
    ASSERT_EQ(plan.begin.size(), static_cast<size_t>(world) + 1);
    EXPECT_EQ(plan.begin.front(), 0);
    EXPECT_EQ(plan.begin.back(), plan.numel);
    int64_t tensors = 0;
    for (int r = 0; r < world; ++r) {
      if (r > 0) {
        EXPECT_EQ(plan.begin[static_cast<size_t>(r)] % optim::kNormBlock, 0) << world << " ranks, cut " << r;
      }
      const double ideal = static_cast<double>(plan.numel) / world;
      EXPECT_LE(std::fabs(static_cast<double>(plan.size(r)) - ideal), optim::kNormBlock) << world << " ranks, shard " << r;
      tensors += plan.tensors(r);
    }
    EXPECT_GE(tensors, static_cast<int64_t>(params.size()));  // each tensor in one shard at least
    EXPECT_LE(tensors, static_cast<int64_t>(params.size()) + world - 1);  // each cut splits at most one
  }
}

// The largest difference between two models' parameters (0: the same bits).
double largest_difference(const nn::Module& a, const nn::Module& b, bool* same_bits) {
  const std::vector<Tensor> pa = a.parameters(), pb = b.parameters();
  double worst = 0;
  *same_bits = true;
  for (size_t i = 0; i < pa.size(); ++i) {
    *same_bits = *same_bits && equal_bits(pa[i], pb[i]);
    const std::vector<float> x = pa[i].contiguous().to_vector<float>(), y = pb[i].contiguous().to_vector<float>();
    for (size_t k = 0; k < x.size(); ++k) worst = std::max(worst, static_cast<double>(std::fabs(x[k] - y[k])));
  }
  return worst;
}

// With clipping at 0.5 (below the tiny GPT's early gradient norms, so the
// clipping scales them), 12 steps.
train::TrainOptions zero_options() {
  train::TrainOptions o = TinyRun{}.options(12);
  o.grad_clip = 0.5;
  return o;
}

// Stage 1 all-reduces DataParallel's buckets with the same calls, and the
// norm and the AdamW update are the same arithmetic on every element: the
// same bits at any number of ranks. Stage 2's reduce-scatter (here in
// buckets of 16 KiB, several per step) adds the ranks' gradients in an order
// MPI chooses: with 2 ranks every order adds the same two numbers; with 3 or
// more it may associate them otherwise than the all-reduce. The bound for
// that case: measured with 3 and with 4 ranks, the parameters differ by at
// most 1.9e-6 over these 12 steps (the printed line); the test allows 1e-4,
// 50 times that, where one AdamW step moves an element by up to lr = 3e-3.
TEST(DistZero, StagesOneAndTwoTakeDataParallelsSteps) {
  if (12 % ranks() != 0) GTEST_SKIP() << "the batch of 12 does not split into " << ranks() << " shards";
  TinyRun run;
  nn::GPT ref_model(run.config()), m1(run.config()), m2(run.config());
  distributed::DataParallel ddp(ref_model.parameters());
  distributed::Zero z1(m1.parameters(), {.stage = 1});
  distributed::Zero z2(m2.parameters(), {.stage = 2, .bucket_bytes = 16 << 10});
  train::Trainer ref(ref_model, run.tokens(), zero_options()), t1(m1, run.tokens(), zero_options()),
      t2(m2, run.tokens(), zero_options());
  ref.set_replicas(ddp);
  t1.set_replicas(z1);
  t2.set_replicas(z2);
  int clipped = 0;
  double worst2 = 0;
  while (!ref.done()) {
    const train::StepLog a = ref.step(), b = t1.step(), c = t2.step();
    clipped += a.grad_norm > 0.5;
    bool same1 = false, same2 = false;
    EXPECT_EQ(largest_difference(ref_model, m1, &same1), 0.0) << "stage 1, step " << a.step;
    EXPECT_TRUE(same1) << "stage 1, step " << a.step;
    EXPECT_EQ(a.loss, b.loss) << "step " << a.step;
    EXPECT_EQ(a.grad_norm, b.grad_norm) << "step " << a.step;
    const double d2 = largest_difference(ref_model, m2, &same2);
    worst2 = std::max(worst2, d2);
    if (ranks() <= 2) {
      EXPECT_TRUE(same2) << "stage 2, step " << a.step << ": parameters differ by " << d2;
      EXPECT_EQ(a.loss, c.loss) << "step " << a.step;
      EXPECT_EQ(a.grad_norm, c.grad_norm) << "step " << a.step;
    } else {
      EXPECT_LE(d2, 1e-4) << "stage 2, step " << a.step;
      EXPECT_NEAR(a.loss, c.loss, 1e-6 * a.loss) << "step " << a.step;
    }
    ASSERT_EQ(parameters_unlike_rank_zero(m1), 0) << "step " << a.step;
    ASSERT_EQ(parameters_unlike_rank_zero(m2), 0) << "step " << a.step;
  }
  EXPECT_GT(clipped, 0);  // the norm across shards did clip
  EXPECT_GT(z2.spans(), 2u);
  if (me() == 0)
    std::printf("[ rank 0 ] %d ranks: stage 2 parameters within %.3g of DataParallel's over 12 steps\n", ranks(), worst2);
}

TEST(DistZero, EachRankKeepsOnlyItsShardAsTheClosedFormSays) {
  if (12 % ranks() != 0) GTEST_SKIP() << "the batch of 12 does not split into " << ranks() << " shards";
  TinyRun run;
  for (int stage : {0, 1, 2}) {
    SCOPED_TRACE("stage " + std::to_string(stage));
    nn::GPT model(run.config());
    const std::vector<Tensor> params = model.parameters();
    inspect::MemoryTimeline mem;
    mem.track(params, MemoryKind::Parameters);
    std::unique_ptr<distributed::DataParallel> replicas =
        stage == 0 ? std::make_unique<distributed::DataParallel>(params)
                   : std::make_unique<distributed::Zero>(params, distributed::ZeroOptions{.stage = stage});
    train::Trainer t(model, run.tokens(), zero_options());
    t.set_replicas(*replicas);
    t.step();
    t.step();
    const distributed::ModelStateBytes cf = distributed::model_state_bytes(params, ranks(), me(), stage);
    const inspect::MemoryTimeline::Bytes live = mem.live();
    EXPECT_EQ(live[static_cast<size_t>(MemoryKind::Parameters)], cf.parameters);
    EXPECT_EQ(live[static_cast<size_t>(MemoryKind::Gradients)], cf.gradients);
    EXPECT_EQ(live[static_cast<size_t>(MemoryKind::OptimizerState)], cf.optimizer_state);
    // By hand: the shards' states add up to the whole one, plus one step
    // count per tensor that a cut splits.
    const distributed::ShardPlan plan = distributed::plan_shards(params, ranks());
    const int64_t P = plan.numel, n = static_cast<int64_t>(params.size());
    Tensor sum = full({}, static_cast<double>(cf.optimizer_state), kFloat64);
    distributed::all_reduce(sum);
    int64_t split = 0;
    for (int r = 0; r < ranks(); ++r) split += plan.tensors(r);
    EXPECT_EQ(static_cast<int64_t>(sum.item<double>()),
              stage == 0 ? ranks() * (8 * P + 8 * n) : 8 * P + 8 * split);
    if (stage == 2) {
      for (const Tensor& p : params) EXPECT_FALSE(p.grad().defined());  // sent, and dropped
      auto* z = dynamic_cast<distributed::Zero*>(replicas.get());
      EXPECT_EQ(z->shard_gradient().numel(), plan.size(me()));
    }
  }
}

// A sharded save holds DataParallel's state, gathered onto rank 0; it
// resumes at the same stage bit for bit, at the other stage, and in one
// process.
TEST(DistZero, ACheckpointOfShardsResumesAtAnyStageAndInOneProcess) {
  if (12 % ranks() != 0) GTEST_SKIP() << "the batch of 12 does not split into " << ranks() << " shards";
  TinyRun run;
  const std::string dir = shared_temp_dir(), ddp_dir = shared_temp_dir();
  // The references: 12 steps of DataParallel and of stage 2, straight.
  nn::GPT ref_model(run.config()), straight2(run.config());
  distributed::DataParallel ddp(ref_model.parameters());
  distributed::Zero z_straight(straight2.parameters(), {.stage = 2});
  train::Trainer ref(ref_model, run.tokens(), zero_options()), s2(straight2, run.tokens(), zero_options());
  ref.set_replicas(ddp);
  s2.set_replicas(z_straight);
  while (!ref.done()) {
    ref.step();
    s2.step();
  }
  {  // 5 steps of stage 2, saved; 5 of DataParallel, saved elsewhere
    nn::GPT m(run.config()), d(run.config());
    distributed::Zero z(m.parameters(), {.stage = 2});
    distributed::DataParallel dd(d.parameters());
    train::Trainer t(m, run.tokens(), zero_options()), td(d, run.tokens(), zero_options());
    t.set_replicas(z);
    td.set_replicas(dd);
    for (int i = 0; i < 5; ++i) {
      t.step();
      td.step();
    }
    t.save(dir, {});  // every rank: the shards go to rank 0, which writes
    td.save(ddp_dir, {});
    distributed::barrier();
    if (me() == 0) {
      const train::TrainState a = train::read_train_state(train::latest_checkpoint(dir).train_state),
                              b = train::read_train_state(train::latest_checkpoint(ddp_dir).train_state);
      EXPECT_EQ(a.world_size, ranks());
      EXPECT_EQ(a.optimizer_steps, 5);
      ASSERT_EQ(a.optimizer.size(), b.optimizer.size());
      for (size_t i = 0; i < a.optimizer.size(); ++i) {
        EXPECT_EQ(a.optimizer[i].first, b.optimizer[i].first);
        EXPECT_EQ(a.optimizer[i].second.shape(), b.optimizer[i].second.shape()) << a.optimizer[i].first;
        if (ranks() <= 2) {
          EXPECT_TRUE(equal_bits(a.optimizer[i].second, b.optimizer[i].second)) << a.optimizer[i].first;
        }
      }
    }
  }
  // Resumed at stage 2 with as many ranks: the straight run, bit for bit.
  {
    nn::GPT m(run.config(/*seed=*/99));
    train::Trainer t(m, run.tokens(), zero_options());
    t.resume(dir);
    distributed::Zero z(m.parameters(), {.stage = 2});
    t.set_replicas(z);
    while (!t.done()) t.step();
    bool same = false;
    EXPECT_EQ(largest_difference(m, straight2, &same), 0.0);
    EXPECT_TRUE(same);
    EXPECT_EQ(losses(t), losses(s2));
  }
  // Resumed at stage 1 (the replicas attached first, then the resume): with
  // 2 ranks DataParallel's run bit for bit; with more, within the bound of
  // StagesOneAndTwoTakeDataParallelsSteps.
  {
    nn::GPT m(run.config(/*seed=*/98));
    distributed::Zero z(m.parameters(), {.stage = 1});
    train::Trainer t(m, run.tokens(), zero_options());
    t.set_replicas(z);
    t.resume(dir);
    while (!t.done()) t.step();
    bool same = false;
    const double d = largest_difference(m, ref_model, &same);
    if (ranks() <= 2) {
      EXPECT_TRUE(same) << d;
    } else {
      EXPECT_LE(d, 1e-4);
    }
  }
  // In one process (each rank alone, the whole batch): the same run within
  // float round-off (as NRanksOfAShardFollowOneProcessWithTheWholeBatch).
  {
    nn::GPT m(run.config(/*seed=*/97));
    train::Trainer t(m, run.tokens(), zero_options());
    t.resume(dir);
    EXPECT_EQ(t.resumed_world_size(), ranks());
    while (!t.done()) t.step();
    const std::vector<double> a = losses(t), b = losses(ref);
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 5; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-5 * b[i]) << "step " << i + 1;
  }
  distributed::barrier();
  if (me() == 0) {
    std::filesystem::remove_all(dir);
    std::filesystem::remove_all(ddp_dir);
  }
}

TEST(DistZero, BadInputIsTheSameErrorOnEveryRank) {
  TinyRun run;
  nn::GPT model(run.config());
  expect_error([&] { distributed::Zero z(model.parameters(), {.stage = 3}); }, "Zero", {"stage must be 1 or 2, got 3"});
  if (ranks() >= 2)
    expect_error([&] { distributed::Zero z(model.parameters(), {.stage = 1 + me() % 2}); }, "DataParallel",
                 {"the ranks disagree: ZeRO stage is 1 on rank", " and 2 on rank"});
  if (ranks() >= 2) {  // Zero on some ranks, DataParallel on the others
    expect_error(
        [&] {
          std::unique_ptr<distributed::DataParallel> r =
              me() == 0 ? std::make_unique<distributed::DataParallel>(model.parameters())
                        : std::make_unique<distributed::Zero>(model.parameters(), distributed::ZeroOptions{.stage = 2});
        },
        "DataParallel", {"ZeRO stage is 0 on rank 0 and 2 on rank"});
  }
  std::vector<Tensor> mixed{zeros({4}).requires_grad_(), zeros({4}, kFloat64).requires_grad_()};
  expect_error([&] { distributed::Zero z(mixed); }, "Zero", {"parameter 1 is float64 and parameter 0 float32"});
  // An optimizer over other parameters, or over fewer.
  std::vector<Tensor> params = model.parameters();
  distributed::Zero z(params, {.stage = 2});
  Tensor stranger = zeros({3}).requires_grad_();
  optim::AdamW other(std::vector<Tensor>{stranger});
  expect_error([&] { z.adopt(other); }, "Zero", {"shape (3)", "not one of the parameters Zero was given"});
  distributed::Zero z2(params, {.stage = 1});
  optim::AdamW fewer(std::vector<Tensor>(params.begin() + 1, params.end()));
  expect_error([&] { z2.adopt(fewer); }, "Zero", {"parameter 0", "not in the optimizer"});
  distributed::Zero z3(params, {.stage = 1});
  optim::AdamW all(params);
  expect_error([&] { z3.update(all, std::vector<Tensor>(params.begin(), params.end() - 1), 1.0); }, "Zero",
               {"update was given " + std::to_string(params.size() - 1) + " parameters"});
}

}  // namespace

// Every rank runs the tests; only rank 0 prints gtest's report, the others
// print their failures. The exit status is 1 on every rank if any rank failed.
int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  distributed::init();
  if (distributed::rank() != 0) {
    ::testing::TestEventListeners& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    struct Failures : ::testing::EmptyTestEventListener {
      void OnTestPartResult(const ::testing::TestPartResult& r) override {
        if (r.failed())
          std::fprintf(stderr, "[ rank %d ] %s:%d: %s\n", distributed::rank(), r.file_name() ? r.file_name() : "?",
                       r.line_number(), r.message());
      }
    };
    listeners.Append(new Failures);
  }
  const int status = RUN_ALL_TESTS();
  Tensor failed = full({}, status != 0 ? 1.0 : 0.0, kFloat64);
  distributed::all_reduce(failed);
  if (distributed::rank() == 0 && failed.item<double>() > 0 && status == 0)
    std::fprintf(stderr, "distributed_tests: another rank failed (see its messages above)\n");
  distributed::finalize();
  return failed.item<double>() > 0 ? 1 : 0;
}
