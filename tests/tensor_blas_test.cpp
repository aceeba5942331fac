// BLAS: the kernels ember chose for this CPU, and products split over
// ember's threads (by rows, by columns, by whole products of a stack)
// against plain loops.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <string>
#include <vector>

#include "ember.h"
#include "tensor/machine/blas_library.h"
#include "test_util.h"

namespace {

using namespace ember;

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

bool contains(const std::vector<std::string>& list, const std::string& core) {
  for (const std::string& c : list)
    if (lower(c) == lower(core)) return true;
  return false;
}

TEST(Blas, TheChosenCoreIsTheBestThisCpuRuns) {
  const BlasInfo info = blas_info();
  const std::vector<std::string> cores = blas_cores_for_this_cpu();
  SCOPED_TRACE(info.summary());
  if (const char* forced = std::getenv("EMBER_EXPECT_BLAS_CORE")) {
    // scripts/test_blas_cores.sh: OPENBLAS_CORETYPE was set, and it wins.
    EXPECT_FALSE(info.chosen_by_ember);
    EXPECT_EQ(lower(info.core), lower(forced));
    return;
  }
  if (!info.chosen_by_ember) GTEST_SKIP() << "OPENBLAS_CORETYPE was set by the user: " << info.core;
  ASSERT_FALSE(cores.empty()) << "ember chose a core on a CPU without AVX";
  EXPECT_EQ(lower(info.core), lower(cores.front()));
  EXPECT_EQ(lower(info.cpu_best), lower(cores.front()));
}

TEST(Blas, NotAFallbackOnACpuWithAvx2) {
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) GTEST_SKIP() << "no AVX2 on this CPU";
  const BlasInfo info = blas_info();
  const std::vector<std::string> cores = blas_cores_for_this_cpu();
  // Both AVX2 kernel sets run on any AVX2 + FMA CPU, whoever made it.
  EXPECT_TRUE(contains(cores, "Haswell")) << info.summary();
  EXPECT_TRUE(contains(cores, "Zen")) << info.summary();
  if (!info.user_core.empty()) {
    // The user's OPENBLAS_CORETYPE wins, whatever it names; when OpenBLAS
    // knows it, it is what runs.
    EXPECT_FALSE(info.chosen_by_ember);
    if (info.user_core_honoured) {
      EXPECT_EQ(lower(info.core), lower(info.user_core));
    }
    GTEST_SKIP() << "OPENBLAS_CORETYPE=" << info.user_core << " set by the user: " << info.summary();
  }
  if (!info.chosen_by_ember) GTEST_SKIP() << "OpenBLAS was loaded before ember: " << info.summary();
  for (const char* old : {"Prescott", "Core2", "Penryn", "Dunnington", "Nehalem", "Atom", "Katmai", "Northwood"})
    EXPECT_NE(lower(info.core), lower(old)) << info.summary();
  EXPECT_TRUE(contains(cores, info.core)) << info.summary();
#else
  GTEST_SKIP() << "not an x86-64 CPU";
#endif
}

TEST(Blas, InfoSaysWhatRuns) {
  set_num_threads(2);
  const BlasInfo info = blas_info();
  EXPECT_NE(info.library.find("libopenblas"), std::string::npos) << info.library;
  EXPECT_EQ(info.config.rfind("OpenBLAS ", 0), 0u) << info.config;
  EXPECT_EQ(info.threads, 2);
  EXPECT_EQ(info.blas_threads, 1);  // ember splits the products, not OpenBLAS
  const std::string s = info.summary();
  EXPECT_NE(s.find(info.core + " kernels"), std::string::npos) << s;
  EXPECT_NE(s.find("split over 2 threads"), std::string::npos) << s;
  EXPECT_EQ(s.find("chosen by ember") != std::string::npos, info.chosen_by_ember) << s;
  EXPECT_EQ(s.find("OPENBLAS_CORETYPE=" + info.user_core + ", set by the user") != std::string::npos,
            !info.user_core.empty())
      << s;
}

TEST(Blas, SetNumThreadsRefusesZero) {
  EXPECT_THROW(blas::set_num_threads(0), Error);
}

// C = A B in long double loops, A (M, K), B (K, N) given as row-major values.
std::vector<double> reference(const std::vector<double>& a, const std::vector<double>& b, int64_t M, int64_t N,
                              int64_t K) {
  std::vector<double> c(static_cast<size_t>(M * N));
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      long double s = 0;
      for (int64_t k = 0; k < K; ++k) s += static_cast<long double>(a[m * K + k]) * b[k * N + n];
      c[m * N + n] = static_cast<double>(s);
    }
  return c;
}

// Shapes that take each split: rows (M >= N), columns (N > M), a stack of
// products; M and N not multiples of the 16-row blocks; operands as
// row-major, transposed and sliced views.
TEST(Blas, SplitProductsEqualPlainLoops) {
  set_num_threads(2);
  struct Case {
    int64_t M, N, K;
  };
  for (DType dt : {kFloat32, kFloat64}) {
    for (Case s : {Case{301, 97, 130}, Case{45, 517, 111}, Case{1, 4099, 300}, Case{4099, 1, 300}}) {
      for (int layout = 0; layout < 3; ++layout) {
        SCOPED_TRACE(::testing::Message() << dtype_name(dt) << " " << s.M << "x" << s.N << "x" << s.K << " layout "
                                          << layout);
        Generator g(7);
        Tensor a, b;
        if (layout == 0) {
          a = randn({s.M, s.K}, g, dt);
          b = randn({s.K, s.N}, g, dt);
        } else if (layout == 1) {  // transposed views: BLAS's transpose flags
          a = randn({s.K, s.M}, g, dt).t();
          b = randn({s.N, s.K}, g, dt).t();
        } else {  // every other column: copied before the gemm
          a = randn({s.M, 2 * s.K}, g, dt).slice(1, 0, 2 * s.K, 2);
          b = randn({s.K, 2 * s.N}, g, dt).slice(1, 0, 2 * s.N, 2);
        }
        const std::vector<double> want = reference(test::vals(a), test::vals(b), s.M, s.N, s.K);
        const std::vector<double> got = test::vals(matmul(a, b));
        ASSERT_EQ(got.size(), want.size());
        const double tol = dt == kFloat32 ? 1e-4 * std::sqrt(double(s.K)) : 1e-12 * std::sqrt(double(s.K));
        double worst = 0;
        for (size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::abs(got[i] - want[i]));
        EXPECT_LT(worst, tol);
      }
    }
  }
}

TEST(Blas, AStackOfProductsSplitByWholeProducts) {
  set_num_threads(2);
  Generator g(11);
  for (DType dt : {kFloat32, kFloat64}) {
    Tensor a = randn({3, 5, 40, 33}, g, dt), b = randn({5, 33, 70}, g, dt);  // b broadcast over the 3
    Tensor c = matmul(a, b);
    ASSERT_EQ(c.shape(), (Shape{3, 5, 40, 70}));
    for (int64_t i : {0, 2})
      for (int64_t j : {0, 4}) {
        const std::vector<double> want =
            reference(test::vals(a.select(0, i).select(0, j)), test::vals(b.select(0, j)), 40, 70, 33);
        const std::vector<double> got = test::vals(c.select(0, i).select(0, j));
        const double tol = dt == kFloat32 ? 1e-4 : 1e-12;
        for (size_t k = 0; k < got.size(); ++k) ASSERT_NEAR(got[k], want[k], tol) << i << " " << j << " " << k;
      }
  }
}

}  // namespace
