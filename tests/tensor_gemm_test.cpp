// ember's own GEMM (tensor/gemm/): every step of the lesson against a
// float64 reference, on odd shapes (1, 7, 33, 257 ...), row-major,
// transposed and strided operands, at every SIMD width this CPU runs, held
// to the float32 rounding bound; the bits that must not move (steps 5 and 6
// at every width, 1 and 2 threads); and matmul's EMBER_GEMM=ember path.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "ember.h"
#include "tensor/gemm/gemm.h"
#include "tensor/gemm/microkernels.h"
#include "tensor/kernels.h"
#include "test_util.h"

namespace {

using namespace ember;
using gemm::Isa;

// A matrix stored in one of three layouts, and its view.
enum class Layout { RowMajor, Transposed, Strided };
const char* layout_name(Layout l) {
  return l == Layout::RowMajor ? "row-major" : l == Layout::Transposed ? "transposed view" : "strided slice";
}

struct Matrix {
  int64_t rows = 0, cols = 0;
  std::vector<float> store;
  gemm::View<float> view;
  float at(int64_t i, int64_t j) const { return view.at(i, j); }
};

// rows x cols values from g; Transposed stores the transpose row-major and
// views it with swapped strides; Strided leaves a gap of 3 floats after each
// row and uses every other column of a twice-as-wide row.
Matrix make(int64_t rows, int64_t cols, Layout layout, std::mt19937& g) {
  std::normal_distribution<float> d(0.0f, 1.0f);
  Matrix m{rows, cols, {}, {}};
  if (layout == Layout::RowMajor) {
    m.store.resize(static_cast<size_t>(rows * cols));
    for (float& x : m.store) x = d(g);
    m.view = {m.store.data(), rows, cols, cols, 1};
  } else if (layout == Layout::Transposed) {
    m.store.resize(static_cast<size_t>(rows * cols));
    for (float& x : m.store) x = d(g);
    m.view = {m.store.data(), rows, cols, 1, rows};
  } else {
    const int64_t ld = 2 * cols + 3;
    m.store.assign(static_cast<size_t>(std::max<int64_t>(rows * ld, 1)), NAN);  // the gaps must never be read
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j) m.store[static_cast<size_t>(i * ld + 2 * j)] = d(g);
    m.view = {m.store.data(), rows, cols, ld, 2};
  }
  return m;
}

// The float64 product and, per element, sum_k |a_ik| |b_kj|.
struct Reference {
  std::vector<double> value, scale;
};
Reference reference(const Matrix& a, const Matrix& b, bool round_bf16 = false) {
  Reference r;
  for (int64_t i = 0; i < a.rows; ++i)
    for (int64_t j = 0; j < b.cols; ++j) {
      double s = 0, sc = 0;
      for (int64_t k = 0; k < a.cols; ++k) {
        const double x = round_bf16 ? round_to_bf16(a.at(i, k)) : a.at(i, k);
        const double y = round_bf16 ? round_to_bf16(b.at(k, j)) : b.at(k, j);
        s += x * y;
        sc += std::fabs(x) * std::fabs(y);
      }
      r.value.push_back(s);
      r.scale.push_back(sc);
    }
  return r;
}

// gamma_K = K v / (1 - K v), v = 2^-24: the relative bound of any float32
// summation of K terms against the sum of their magnitudes (Higham 3.1);
// the products are exact in double, so this bounds every step's error.
double gamma(int64_t K) {
  const double v = std::ldexp(1.0, -24), kv = static_cast<double>(K) * v;
  return kv / (1 - kv);
}

using Step = std::function<void(gemm::View<float>, gemm::View<float>, gemm::Out)>;
struct NamedStep {
  std::string name;
  Step run;
};
std::vector<NamedStep> steps() {
  std::vector<NamedStep> out = {{"step1 naive", gemm::naive},
                                {"step2 loop order", gemm::loop_order},
                                {"step3 blocked", gemm::blocked},
                                {"step4 packed", gemm::packed}};
  for (Isa isa : gemm::isas_for_this_cpu()) {
    const std::string w = gemm::isa_name(isa);
    out.push_back({"step5 microkernel " + w, [isa](auto a, auto b, auto c) { gemm::microkernel(a, b, c, isa); }});
    out.push_back({"step6 threads " + w, [isa](auto a, auto b, auto c) { gemm::threaded(a, b, c, isa); }});
    out.push_back({"step6 one thread " + w, [isa](auto a, auto b, auto c) { gemm::threaded(a, b, c, isa, false); }});
  }
  return out;
}

// (M, K, N): odd sizes around every kernel's MR and NR and the block sizes.
const std::vector<std::array<int64_t, 3>> kShapes = {
    {1, 1, 1},      {1, 7, 1},       {7, 1, 7},         {7, 7, 7},       {1, 33, 257},  {257, 33, 1}, {33, 257, 7},
    {13, 300, 33},  {257, 257, 257}, {145, 513, 65},
    {4100, 20, 3},  {3, 20, 2100}};  // more rows than step 6 packs at once, more columns than a B block

TEST(Gemm, EveryStepMatchesTheFloat64ProductWithinTheFloat32Bound) {
  std::mt19937 g(11);
  const std::vector<NamedStep> all = steps();
  for (const auto& [M, K, N] : kShapes) {
    for (Layout la : {Layout::RowMajor, Layout::Transposed, Layout::Strided}) {
      const Layout lb = la == Layout::RowMajor ? Layout::Transposed : la == Layout::Transposed ? Layout::Strided : Layout::RowMajor;
      const Matrix a = make(M, K, la, g), b = make(K, N, lb, g);
      const Reference r = reference(a, b);
      for (const NamedStep& step : all) {
        SCOPED_TRACE(step.name + ", M K N = " + std::to_string(M) + " " + std::to_string(K) + " " + std::to_string(N) +
                     ", A " + layout_name(la) + ", B " + layout_name(lb));
        const int64_t ld = N + 5;  // the 5 columns past N must stay NaN
        std::vector<float> c(static_cast<size_t>(M * ld), NAN);
        step.run(a.view, b.view, {c.data(), M, N, ld});
        double worst = 0;
        for (int64_t i = 0; i < M; ++i) {
          for (int64_t j = 0; j < N; ++j) {
            const size_t at = static_cast<size_t>(i * N + j);
            const double err = std::fabs(c[static_cast<size_t>(i * ld + j)] - r.value[at]);
            worst = std::max(worst, err / (gamma(K) * r.scale[at] + 1e-30));
          }
          for (int64_t j = N; j < ld; ++j) ASSERT_TRUE(std::isnan(c[static_cast<size_t>(i * ld + j)])) << "wrote past column N";
        }
        EXPECT_LE(worst, 1.0) << "error over the bound gamma_K sum|a||b|";
      }
    }
  }
}

TEST(Gemm, AnEmptySumGivesZerosAndEmptyMatricesAreFine) {
  for (const NamedStep& step : steps()) {
    SCOPED_TRACE(step.name);
    std::vector<float> c(12, NAN), none;
    step.run({none.data(), 3, 0, 0, 1}, {none.data(), 0, 4, 4, 1}, {c.data(), 3, 4, 4});
    for (float v : c) EXPECT_EQ(v, 0.0f);
    std::vector<float> a(5, 1.0f), untouched(1, 7.0f);
    step.run({a.data(), 0, 5, 5, 1}, {a.data(), 5, 1, 1, 1}, {untouched.data(), 0, 1, 1});
    step.run({a.data(), 1, 5, 5, 1}, {a.data(), 5, 0, 1, 1}, {untouched.data(), 1, 0, 1});
    EXPECT_EQ(untouched[0], 7.0f);
  }
}

// Each C element's sum runs over k in one order with one rounding per FMA,
// whatever the vector width, tile shape or thread split (microkernel.h): so
// steps 5 and 6 agree bit for bit at every FMA width and thread count.
TEST(Gemm, StepsFiveAndSixGiveTheSameBitsAtEveryWidthAndThreadCount) {
  std::mt19937 g(5);
  const Matrix a = make(300, 600, Layout::RowMajor, g), b = make(600, 290, Layout::Transposed, g);
  const std::vector<Isa> isas = gemm::isas_for_this_cpu();
  if (std::all_of(isas.begin(), isas.end(), [](Isa i) { return i == Isa::Portable; }))
    GTEST_SKIP() << "this CPU has no FMA width (AVX2 or AVX-512): only the plain C kernel runs";
  std::vector<float> first;
  const int threads = get_num_threads();
  for (Isa isa : isas) {
    if (isa == Isa::Portable) continue;  // plain C: separate multiply and add, other bits
    for (int t : {1, 2, 3}) {
      set_num_threads(t);
      for (int step = 5; step <= 6; ++step) {
        SCOPED_TRACE(std::string(gemm::isa_name(isa)) + ", step " + std::to_string(step) + ", " + std::to_string(t) + " threads");
        std::vector<float> c(300 * 290);
        if (step == 5) gemm::microkernel(a.view, b.view, {c.data(), 300, 290, 290}, isa);
        else gemm::threaded(a.view, b.view, {c.data(), 300, 290, 290}, isa);
        if (first.empty()) first = c;
        EXPECT_EQ(std::memcmp(c.data(), first.data(), c.size() * sizeof(float)), 0);
      }
    }
  }
  set_num_threads(threads);
  EXPECT_FALSE(first.empty());
}

// Packing's transpose (register tiles of 16 or 8, a partial tile of fewer
// rows, the columns past the last tile) and its bfloat16 rounding, at every
// width, against the plain loops.
TEST(Gemm, PackingTransposesAndRoundsAlikeAtEveryWidth) {
  std::mt19937 g(8);
  std::vector<uint32_t> src(64 * 70), dst(70 * 66), want(70 * 66);  // dst: cols rows of 66
  for (uint32_t& v : src) v = g();
  std::vector<float> f(1000);
  for (float& v : f) v = std::ldexp(float(g() % 100000) - 50000, int(g() % 60) - 30);
  f[7] = NAN;
  for (Isa isa : gemm::isas_for_this_cpu()) {
    for (int64_t rows : {1, 5, 8, 12, 16, 17, 33, 64})
      for (int64_t cols : {1, 7, 16, 31, 48, 70}) {
        SCOPED_TRACE(std::string(gemm::isa_name(isa)) + " " + std::to_string(rows) + " x " + std::to_string(cols));
        std::fill(dst.begin(), dst.end(), 0xDEADBEEFu);
        want = dst;
        for (int64_t r = 0; r < rows; ++r)
          for (int64_t c = 0; c < cols; ++c) want[size_t(c * 66 + r)] = src[size_t(r * 70 + c)];
        gemm::transpose32_at(isa, src.data(), 70, rows, cols, dst.data(), 66);  // a destination wider than rows
        ASSERT_EQ(dst, want);
      }
    std::vector<uint16_t> bits(f.size());
    gemm::to_bf16_bits_at(isa, f.data(), bits.data(), int64_t(f.size()));
    for (size_t i = 0; i < f.size(); ++i) ASSERT_EQ(bits[i], bf16_bits_from_float(f[i])) << gemm::isa_name(isa) << " " << f[i];
  }
}

// Step 7's packing of float32 lines straight into bfloat16 pair panels, at
// every width, against the definition: pair q of row r in panel r / unit at
// place r % unit, the bfloat16 of line 2q low and of line 2q + 1 high; the
// rows past the edge and the missing line of an odd depth zero. Units 12
// and 32 (the vdpbf16ps kernel's) and one other, whole and partial panels.
TEST(Gemm, PairPanelsRoundAndPlaceAsTheLayoutSaysAtEveryWidth) {
  std::mt19937 g(5);
  const int64_t ks = 53;  // lines 53 floats apart, at most 50 used
  std::vector<float> src(size_t(ks * 9));
  for (float& v : src) v = std::ldexp(float(g() % 100000) - 50000, int(g() % 60) - 30);
  src[3] = NAN;
  src[ks + 4] = 1.0f + 0x1p-8f;  // a tie: to even, 1
  for (Isa isa : gemm::isas_for_this_cpu())
    for (int unit : {12, 32, 6})
      for (int64_t rows : {1, 12, 31, 50})
        for (int64_t kc : {1, 2, 7, 9}) {
          SCOPED_TRACE(std::string(gemm::isa_name(isa)) + " unit " + std::to_string(unit) + ", " + std::to_string(rows) +
                       " rows, depth " + std::to_string(kc));
          const int64_t panels = (rows + unit - 1) / unit, pairs = (kc + 1) / 2;
          std::vector<uint32_t> got(size_t(panels * unit * pairs), 0xDEADBEEFu), want(got.size());
          for (int64_t r = 0; r < panels * unit; ++r)
            for (int64_t q = 0; q < pairs; ++q) {
              auto bits = [&](int64_t k) -> uint32_t { return r < rows && k < kc ? bf16_bits_from_float(src[size_t(k * ks + r)]) : 0; };
              want[size_t((r / unit) * unit * pairs + q * unit + r % unit)] = bits(2 * q) | bits(2 * q + 1) << 16;
            }
          gemm::to_bf16_pair_panels_at(isa, src.data(), ks, rows, kc, unit, got.data());
          ASSERT_EQ(got, want);
        }
}

// EMBER_GEMM=ember routes float32 matmul to step 6 (read once per process:
// tests/tools/env_values.sh checks the variable itself; CTest runs this test
// a second time with it set, gemm_matmul_on_embers_gemm). Under that choice
// matmul's float32 result is step 6's, bit for bit. Under OpenBLAS it is
// only close: OpenBLAS's AVX-512 kernels may sum in step 6's very order, so
// equal bits there would prove nothing either way.
TEST(Gemm, Float32MatmulRunsOnTheGemmTheEnvironmentChose) {
  Generator gen(3);
  Tensor a = randn({70, 90}, gen), b = randn({90, 40}, gen).t().contiguous().t();  // b: a transposed layout
  Tensor c = kernel::matmul(a, b);
  Tensor mine = empty({70, 40});
  const int64_t d = b.dim();
  gemm::threaded({a.data_ptr<float>(), 70, 90, 90, 1}, {b.data_ptr<float>(), 90, 40, b.stride()[d - 2], b.stride()[d - 1]},
                 {mine.data_ptr<float>(), 70, 40, 40}, gemm::default_isa());
  const char* env = std::getenv("EMBER_GEMM");
  EXPECT_EQ(gemm::f32_matmul_uses_ember(), env != nullptr && std::string(env) == "ember");
  if (gemm::f32_matmul_uses_ember()) {
    EXPECT_TRUE(equal_bits(c, mine));
  }
  test::expect_close(c, mine, 1e-4);
}

}  // namespace
