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
  // rank 0 chooses the directory; every rank reads the checkpoint from it.
  std::string dir;
  if (me() == 0) {
    std::string tmpl = (std::filesystem::temp_directory_path() / "ember_dist_resume_XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir = tmpl;
  }
  Tensor len = full({}, static_cast<double>(dir.size()), kFloat64);
  distributed::broadcast(len, 0);
  Tensor bytes = zeros({static_cast<int64_t>(len.item<double>())}, kInt64);
  for (size_t i = 0; i < dir.size(); ++i) bytes.data_ptr<int64_t>()[i] = dir[i];
  distributed::broadcast(bytes, 0);
  dir.clear();
  for (int64_t c : bytes.to_vector<int64_t>()) dir += static_cast<char>(c);

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
    if (me() == 0) b.save(dir, {{"config", run.config().to_string()}});
    else expect_error([&] { b.save(dir, {}); }, "save", {"only rank 0 saves"});
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
