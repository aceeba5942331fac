// Threads: the same inputs and thread count give bitwise-identical results;
// elementwise ops (no reduction order involved) and ember's reductions (fixed
// blocks, partials added in order) do not depend on the thread count at all.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "ember.h"
#include "tensor/kernels.h"
#include "test_util.h"

namespace {

using namespace ember;
using namespace ember::test;


class TensorThreads : public ::testing::Test {
 protected:
  void SetUp() override { saved_ = get_num_threads(); }
  void TearDown() override { set_num_threads(saved_); }
  int saved_ = 1;
};

// Big enough (> 100k elements) that every op takes its parallel path.
struct Inputs {
  Tensor v;     // (300000)
  Tensor m;     // (400, 500)
  Tensor a, b;  // (300, 200), (200, 250)
};
Inputs make_inputs(DType dt) {
  Generator g(99);
  return {randn({300000}, g, dt), randn({400, 500}, g, dt), randn({300, 200}, g, dt), randn({200, 250}, g, dt)};
}

struct Results {
  std::vector<double> sum_all, sum_rows, sum_cols, mean_all, softmax_rows, softmax_cols, log_softmax, matmul, var;
  std::vector<double> exp, gelu, add_bcast, mul_strided, where_, max_vals;
  // One long row cut into pieces, and runs of a strided tensor at the SIMD width.
  std::vector<double> where_scalar, converted, exp_narrow, copied, filled, added_in_place;
  std::vector<int64_t> max_idx;
};
Results run(const Inputs& in) {
  Results r;
  r.sum_all = vals(in.v.sum());
  r.sum_rows = vals(in.m.sum({1}));
  r.sum_cols = vals(in.m.sum({0}));
  r.mean_all = vals(in.m.mean());
  r.softmax_rows = vals(softmax(in.m, 1));
  r.softmax_cols = vals(softmax(in.m, 0));
  r.log_softmax = vals(log_softmax(in.m, -1));
  r.matmul = vals(matmul(in.a, in.b));
  r.var = vals(var(in.m, {1}));
  r.exp = vals(exp(in.v));
  r.gelu = vals(gelu(in.m.t()));
  r.add_bcast = vals(in.m + in.m.select(0, 3));
  r.mul_strided = vals(in.m.t() * in.m.t().contiguous());
  r.where_ = vals(where(gt(in.m, 0.0), in.m, in.m * 0.01));
  r.where_scalar = vals(where(gt(in.v, 0.0), in.v, zeros({1}, in.v.dtype())));
  r.converted = vals(kernel::to(in.v, in.v.dtype() == kFloat32 ? kFloat64 : kFloat32));
  r.exp_narrow = vals(exp(in.m.narrow(1, 3, 450)));
  r.copied = vals(in.v.clone());
  r.filled = vals(full({300000}, 0.25, in.v.dtype()));
  Tensor w = in.v.clone();
  {
    NoGradGuard no_grad;
    w.add_(in.v).mul_(0.5);
  }
  r.added_in_place = vals(w);
  auto [mv, mi] = max(in.m, 1);
  r.max_vals = vals(mv);
  r.max_idx = mi.to_vector<int64_t>();
  return r;
}

void expect_same(const Results& x, const Results& y, bool include_blas) {
  EXPECT_EQ(x.sum_all, y.sum_all);
  EXPECT_EQ(x.sum_rows, y.sum_rows);
  EXPECT_EQ(x.sum_cols, y.sum_cols);
  EXPECT_EQ(x.mean_all, y.mean_all);
  EXPECT_EQ(x.softmax_rows, y.softmax_rows);
  EXPECT_EQ(x.softmax_cols, y.softmax_cols);
  EXPECT_EQ(x.log_softmax, y.log_softmax);
  if (include_blas) {
    EXPECT_EQ(x.matmul, y.matmul);
  }
  EXPECT_EQ(x.var, y.var);
  EXPECT_EQ(x.exp, y.exp);
  EXPECT_EQ(x.gelu, y.gelu);
  EXPECT_EQ(x.add_bcast, y.add_bcast);
  EXPECT_EQ(x.mul_strided, y.mul_strided);
  EXPECT_EQ(x.where_, y.where_);
  EXPECT_EQ(x.where_scalar, y.where_scalar);
  EXPECT_EQ(x.converted, y.converted);
  EXPECT_EQ(x.exp_narrow, y.exp_narrow);
  EXPECT_EQ(x.copied, y.copied);
  EXPECT_EQ(x.filled, y.filled);
  EXPECT_EQ(x.added_in_place, y.added_in_place);
  EXPECT_EQ(x.max_vals, y.max_vals);
  EXPECT_EQ(x.max_idx, y.max_idx);
}

TEST_F(TensorThreads, SetAndGet) {
  set_num_threads(1);
  EXPECT_EQ(get_num_threads(), 1);
  set_num_threads(2);
  EXPECT_EQ(get_num_threads(), 2);
  try {
    set_num_threads(0);
    ADD_FAILURE() << "set_num_threads(0) did not throw";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("set_num_threads: ", 0), 0u) << e.what();
    EXPECT_NE(std::string(e.what()).find("0"), std::string::npos);
  }
  EXPECT_EQ(get_num_threads(), 2);  // unchanged by the refused call
}

TEST_F(TensorThreads, SameThreadCountIsBitwiseReproducible) {
  for (DType dt : {kFloat32, kFloat64}) {
    SCOPED_TRACE(dtype_name(dt));
    Inputs in = make_inputs(dt);
    for (int n : {1, 2}) {
      SCOPED_TRACE(n);
      set_num_threads(n);
      Results first = run(in);
      Results second = run(in);
      expect_same(first, second, /*include_blas=*/true);
    }
  }
}

TEST_F(TensorThreads, ResultsDoNotDependOnThreadCount) {
  // Elementwise results are per-element; ember's reductions use fixed blocks
  // summed in order. (matmul is left out: its pieces are blocks of rows,
  // each its own gemm, and OpenBLAS blocks a smaller gemm differently.)
  for (DType dt : {kFloat32, kFloat64}) {
    SCOPED_TRACE(dtype_name(dt));
    Inputs in = make_inputs(dt);
    set_num_threads(1);
    Results one = run(in);
    set_num_threads(2);
    Results two = run(in);
    expect_same(one, two, /*include_blas=*/false);
  }
}

TEST_F(TensorThreads, ParallelResultsAreCorrect) {
  // Not only reproducible but right: compare with plain loops.
  set_num_threads(2);
  Inputs in = make_inputs(kFloat64);
  std::vector<double> v = vals(in.v);
  double s = 0;
  for (double x : v) s += x;
  EXPECT_NEAR(in.v.sum().item<double>(), s, 1e-9);
  std::vector<double> e = vals(exp(in.v));
  for (size_t i = 0; i < v.size(); i += 997) EXPECT_EQ(e[i], std::exp(v[i])) << i;
  std::vector<double> m = vals(in.m), cols = vals(in.m.sum({0}));
  for (int j = 0; j < 500; j += 37) {
    double c = 0;
    for (int i = 0; i < 400; ++i) c += m[i * 500 + j];
    EXPECT_NEAR(cols[j], c, 1e-11) << j;
  }
  std::vector<double> sm = vals(softmax(in.m, 1));
  for (int i = 0; i < 400; i += 41) {
    double z = 0;
    for (int j = 0; j < 500; ++j) z += sm[i * 500 + j];
    EXPECT_NEAR(z, 1.0, 1e-13) << i;
  }
  // The long rows cut into pieces, element by element against plain loops.
  const Results r = run(in);
  ASSERT_EQ(r.where_scalar.size(), v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    ASSERT_EQ(r.where_scalar[i], v[i] > 0 ? v[i] : 0.0) << i;
    ASSERT_EQ(r.converted[i], static_cast<double>(static_cast<float>(v[i]))) << i;
    ASSERT_EQ(r.copied[i], v[i]) << i;
    ASSERT_EQ(r.filled[i], 0.25) << i;
    ASSERT_EQ(r.added_in_place[i], (v[i] + v[i]) * 0.5) << i;
  }
  for (int i = 0; i < 400; ++i)
    for (int j = 0; j < 450; ++j) ASSERT_EQ(r.exp_narrow[i * 450 + j], std::exp(m[i * 500 + 3 + j])) << i << " " << j;
  Tensor big = full({5000000}, 0.1);  // float32, several blocks per thread
  EXPECT_EQ(big.sum().item<float>(), static_cast<float>(5e6 * static_cast<double>(0.1f)));
}

}  // namespace

// ---- several threads of the caller's own ----

// The default generator is shared: each randn() call holds its lock, so the
// calls of four threads take unbroken runs of one stream. Which thread gets
// which run depends on timing, but the runs are exactly those that the same
// number of calls from one thread take.
TEST_F(TensorThreads, DefaultGeneratorGivesEachCallAnUnbrokenRunFromAnyThread) {
  constexpr int kThreads = 4, kCalls = 50;
  set_num_threads(1);
  manual_seed(5);
  std::vector<std::vector<std::vector<double>>> got(kThreads);
  std::vector<std::thread> pool;
  for (int t = 0; t < kThreads; ++t)
    pool.emplace_back([&got, t] {
      for (int c = 0; c < kCalls; ++c) got[t].push_back(vals(randn({64}, kFloat64)));
    });
  for (auto& th : pool) th.join();
  std::multiset<std::vector<double>> threaded;
  for (const auto& calls : got) threaded.insert(calls.begin(), calls.end());
  manual_seed(5);
  std::multiset<std::vector<double>> serial;
  for (int c = 0; c < kThreads * kCalls; ++c) serial.insert(vals(randn({64}, kFloat64)));
  EXPECT_TRUE(threaded == serial);
}

// set_num_threads from one thread while another computes: the computing
// thread's results stay exact (these ops do not depend on the thread count),
// and nothing races (the ThreadSanitizer build runs this test).
TEST_F(TensorThreads, SetNumThreadsWhileAnotherThreadComputes) {
  Generator g(3);
  Tensor x = randn({200000}, g, kFloat64);
  set_num_threads(1);
  const std::vector<double> want_sum = vals(x.sum()), want_exp = vals(exp(x));
  std::atomic<bool> done{false};
  std::thread toggler([&] {
    for (int i = 0; !done.load(); ++i) set_num_threads(1 + i % 2);
  });
  bool all_equal = true;
  for (int i = 0; i < 40; ++i) all_equal = all_equal && vals(x.sum()) == want_sum && vals(exp(x)) == want_exp;
  done = true;
  toggler.join();
  EXPECT_TRUE(all_equal);
  EXPECT_GE(get_num_threads(), 1);
}

// ---- the thread count that follows the machine's load ----

// An error in one piece of a parallel loop reaches the caller as the error it
// is (an exception leaving an OpenMP region would end the program), and the
// other pieces still run.
// A transposed operand runs in tiles (StridedLoop::run_in_tiles): sizes that
// are not multiples of a tile (partial tiles at the bottom and the right), a
// batch dim in front, and a row length of a power of two, each element
// where a plain index loop puts it, at one thread and two.
TEST_F(TensorThreads, TransposedCopiesPutEveryElementInItsPlace) {
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    for (const Shape& s : {Shape{3, 131, 77}, Shape{1, 256, 512}, Shape{2, 700, 9}}) {
      const Tensor x = arange(0, static_cast<double>(numel_of(s)), 1, kFloat32).reshape(s);
      const Tensor y = x.transpose(1, 2).contiguous();  // (B, C, R)
      const Tensor e = exp(x.transpose(1, 2) * 1e-6);
      ASSERT_EQ(y.shape(), (Shape{s[0], s[2], s[1]}));
      const std::vector<float> got = y.to_vector<float>(), ex = e.to_vector<float>();
      int64_t wrong = 0;
      for (int64_t b = 0; b < s[0]; ++b)
        for (int64_t c = 0; c < s[2]; ++c)
          for (int64_t r = 0; r < s[1]; ++r) {
            const size_t at = static_cast<size_t>((b * s[2] + c) * s[1] + r);
            const float v = static_cast<float>((b * s[1] + r) * s[2] + c);
            wrong += got[at] != v;
            wrong += ex[at] != exp(full({1}, v, kFloat32) * 1e-6).item<float>();
          }
      EXPECT_EQ(wrong, 0) << shape_str(s) << " at " << threads << " threads";
    }
  }
}

TEST_F(TensorThreads, AnErrorInOnePieceReachesTheCaller) {
  set_num_threads(2);
  set_adaptive_threads(false);
  std::atomic<int64_t> done{0};
  auto run = [&] {
    detail::parallel_for(1 << 20, 1024, [&](int64_t b, int64_t e) {
      if (b == 0) EMBER_FAIL("piece", "the first piece failed at " << b);
      done += e - b;
    });
  };
  try {
    run();
    ADD_FAILURE() << "no error";
  } catch (const Error& err) {
    EXPECT_NE(std::string(err.what()).find("piece: the first piece failed at 0"), std::string::npos) << err.what();
  }
  set_adaptive_threads(true);
  EXPECT_EQ(done.load(), (1 << 20) - (1 << 20) / 2) << "the second piece ran to its end";
}

TEST(ThreadGovernor, YieldsAfterTwoBusySamplesAndTakesBackAfterThree) {
  detail::ThreadGovernor g;  // down 2, up 3
  EXPECT_EQ(g.update(2, 2, 0), 2);  // idle: all of them
  EXPECT_EQ(g.update(2, 2, 1), 2);  // one busy sample: could be a blip
  EXPECT_EQ(g.update(2, 2, 1), 1);  // two in a row: a core is taken
  EXPECT_EQ(g.update(2, 2, 1), 1);
  EXPECT_EQ(g.update(2, 2, 0), 1);  // free again: wait for three samples
  EXPECT_EQ(g.update(2, 2, 0), 1);
  EXPECT_EQ(g.update(2, 2, 0), 2);
}

TEST(ThreadGovernor, ABlipDoesNotCountAndAStreakMustBeUnbroken) {
  detail::ThreadGovernor g;
  EXPECT_EQ(g.update(4, 4, 2), 4);
  EXPECT_EQ(g.update(4, 4, 0), 4);  // the streak is broken
  EXPECT_EQ(g.update(4, 4, 2), 4);
  EXPECT_EQ(g.update(4, 4, 1), 4);  // a different target starts a new streak
  EXPECT_EQ(g.update(4, 4, 1), 3);
}

TEST(ThreadGovernor, NeverBelowOneNorAboveWantedOrTheCores) {
  detail::ThreadGovernor g;
  EXPECT_EQ(g.update(2, 2, 7), 2);
  EXPECT_EQ(g.update(2, 2, 7), 1);  // 2 cores, 7 other threads: still one
  detail::ThreadGovernor h;
  EXPECT_EQ(h.update(8, 2, 0), 8);  // the first sample starts a streak
  EXPECT_EQ(h.update(8, 2, 0), 2);  // 8 wanted on 2 cores: 2 run the 8 pieces
  EXPECT_EQ(h.update(1, 2, 0), 1);  // the configured count lowered: at most that
  EXPECT_EQ(h.running(1), 1);
}

namespace {
detail::LoadSample busy_machine() { return {2, 1}; }
detail::LoadSample idle_machine() { return {2, 0}; }

// Restores the real sensor and the thread settings however the test ends.
struct FakeLoad {
  int saved_threads = get_num_threads();
  bool saved_adaptive = adaptive_threads();
  explicit FakeLoad(detail::LoadSensor s) {
    set_adaptive_threads(true);
    detail::set_load_sensor(s);
  }
  ~FakeLoad() {
    detail::set_load_sensor(nullptr);
    set_adaptive_threads(saved_adaptive);
    set_num_threads(saved_threads);
  }
  // Feeds the governor enough samples to settle (one every 50 ms).
  static void settle() {
    for (int i = 0; i < 4; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(55));
      detail::threads_to_run(2);
    }
  }
};

// The OpenMP threads that ran the pieces of one parallel_for (the
// ThreadSanitizer build compiles without OpenMP: one thread runs them all,
// and the tests that count OS threads skip there).
#if defined(_OPENMP)
constexpr bool kOpenMP = true;
#else
constexpr bool kOpenMP = false;
#endif
int threads_that_ran(int64_t n) {
  std::mutex m;
  std::set<int> ids;
  detail::parallel_for(n, 1, [&](int64_t, int64_t) {
    std::lock_guard<std::mutex> lock(m);
    ids.insert(omp_get_thread_num());
  });
  return static_cast<int>(ids.size());
}
}  // namespace

TEST(AdaptiveThreads, OneThreadRunsThePiecesWhileACoreIsTaken) {
  FakeLoad load(busy_machine);
  set_num_threads(2);
  FakeLoad::settle();
  EXPECT_EQ(threads_in_use(), 1);
  EXPECT_EQ(threads_that_ran(1000), 1);
  detail::set_load_sensor(idle_machine);
  FakeLoad::settle();
  EXPECT_EQ(threads_in_use(), 2);
  if (kOpenMP) {
    EXPECT_EQ(threads_that_ran(1000), 2);
  }
}

TEST(AdaptiveThreads, TheSameBitsWhicheverNumberOfThreadsRuns) {
  // The pieces depend on the configured count only, so a busy machine (one
  // thread runs both pieces) gives the idle machine's bits, matmul included.
  for (DType dt : {kFloat32, kFloat64}) {
    SCOPED_TRACE(dtype_name(dt));
    Inputs in = make_inputs(dt);
    Results idle, busy;
    {
      FakeLoad load(idle_machine);
      set_num_threads(2);
      FakeLoad::settle();
      ASSERT_EQ(threads_in_use(), 2);
      idle = run(in);
    }
    {
      FakeLoad load(busy_machine);
      set_num_threads(2);
      FakeLoad::settle();
      ASSERT_EQ(threads_in_use(), 1);
      busy = run(in);
    }
    expect_same(idle, busy, /*include_blas=*/true);
  }
}

TEST(AdaptiveThreads, OffMeansTheConfiguredCount) {
  FakeLoad load(busy_machine);
  set_num_threads(2);
  set_adaptive_threads(false);
  FakeLoad::settle();
  EXPECT_EQ(threads_in_use(), 2);
  if (kOpenMP) {
    EXPECT_EQ(threads_that_ran(1000), 2);
  }
}

TEST(AdaptiveThreads, TheRealSensorReadsThisMachine) {
  // /proc/loadavg and /proc/self/task: whatever the load, the answer is a
  // count between 1 and the configured threads.
  FakeLoad load(nullptr);
  set_num_threads(2);
  FakeLoad::settle();
  EXPECT_GE(threads_in_use(), 1);
  EXPECT_LE(threads_in_use(), 2);
}
