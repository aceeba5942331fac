// Step 8 of the GEMM lesson (tensor/gemm/int8.h): group-wise quantization
// in closed form, the int8 and bfloat16 weight products against a float64
// product of the original values, held to the rounding bound of
// tensor/gemm/step8_int8.cpp (and the bound nearly reached), the same bits
// at every width this CPU runs and at 1 and 2 threads, and int8 as a
// storage dtype (conversions refused out of range, saved as I8).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "ember.h"
#include "tensor/gemm/int8.h"
#include "tensor/gemm/microkernels.h"
#include "test_util.h"
#include "train/safetensors.h"

namespace {

using namespace ember;
using gemm::Int8Mode;
using gemm::Isa;

std::vector<float> randn(int64_t n, uint64_t seed, float scale = 1.0f) {
  std::mt19937 g(static_cast<uint32_t>(seed));
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = scale * (d(g) + d(g) + d(g));
  return v;
}

struct Quantized {
  std::vector<int8_t> q;
  std::vector<float> s;
};
Quantized quantize(const std::vector<float>& w, int64_t rows, int64_t cols, int64_t group) {
  const int64_t groups = (cols + group - 1) / group;
  Quantized out{std::vector<int8_t>(static_cast<size_t>(rows * cols)), std::vector<float>(static_cast<size_t>(rows * groups))};
  for (int64_t j = 0; j < rows; ++j)
    gemm::quantize_row(w.data() + j * cols, cols, group, out.q.data() + j * cols, out.s.data() + j * groups);
  return out;
}

// C = A Wᵀ through the packed weight at `isa` on `threads` threads.
std::vector<float> product(const std::vector<float>& a, int64_t M, const gemm::PackedWeight& w, Isa isa, int threads) {
  set_num_threads(threads);
  std::vector<float> c(static_cast<size_t>(M * w.rows), NAN);
  gemm::weight_product(a.data(), M, w.cols, w, c.data(), w.rows, isa);
  set_num_threads(2);
  return c;
}

TEST(Int8Quantize, ScaleIsTheLargestMagnitudeOver127AndValuesRoundToNearestEven) {
  // one group of 32: the largest magnitude 127 * 2^-4 makes the scale exactly 2^-4
  std::vector<float> x(32, 0.0f);
  const float s = 0.0625f;
  x[0] = -127 * s;
  x[1] = 2.5f * s;   // a tie: to 2 (even)
  x[2] = 3.5f * s;   // a tie: to 4
  x[3] = -2.5f * s;  // to -2
  x[4] = 0.49f * s;  // to 0
  x[5] = 100.51f * s;
  std::vector<int8_t> q(32);
  float scale = 0;
  gemm::quantize_row(x.data(), 32, 32, q.data(), &scale);
  EXPECT_EQ(scale, s);
  EXPECT_EQ(q[0], -127);
  EXPECT_EQ(q[1], 2);
  EXPECT_EQ(q[2], 4);
  EXPECT_EQ(q[3], -2);
  EXPECT_EQ(q[4], 0);
  EXPECT_EQ(q[5], 101);
  for (int k = 6; k < 32; ++k) EXPECT_EQ(q[k], 0);
}

TEST(Int8Quantize, GroupsAreIndependentTheLastIsShorterAndZerosHaveScaleZero) {
  // 70 values in groups of 32: [0, 32) all zero, [32, 64) up to 2.54, [64, 70) up to 12.7
  std::vector<float> x(70, 0.0f);
  for (int k = 32; k < 64; ++k) x[k] = 0.02f * float(k - 32) * (k % 2 ? -1.0f : 1.0f);
  for (int k = 64; k < 70; ++k) x[k] = 12.7f * float(k - 63) / 6.0f;
  std::vector<int8_t> q(70);
  std::vector<float> s(3);
  gemm::quantize_row(x.data(), 70, 32, q.data(), s.data());
  EXPECT_EQ(s[0], 0.0f);
  EXPECT_FLOAT_EQ(s[1], 0.62f / 127.0f);
  EXPECT_FLOAT_EQ(s[2], 12.7f / 127.0f);
  for (int k = 0; k < 32; ++k) EXPECT_EQ(q[k], 0);
  EXPECT_EQ(q[63], -127);
  EXPECT_EQ(q[69], 127);
  for (int k = 0; k < 70; ++k) EXPECT_LE(std::fabs(x[k] - q[k] * s[k / 32]), 0.5f * s[k / 32] * 1.0001f) << k;
}

struct Case {
  int64_t M, N, K, group;
};

// Every kernel against the exact product, within the bound, and the same
// bits at every width and thread count.
void check_products(Int8Mode mode) {
  const std::vector<Case> cases = {{1, 1, 5, 32},    {1, 40, 100, 32}, {3, 17, 64, 64},  {7, 33, 257, 32},
                                   {5, 64, 128, 128}, {1, 768, 768, 32}, {33, 50, 300, 256}, {2, 16, 32, 32},
                                   {33, 64, 512, 32}};  // the last two large enough for both threads
  for (const Case& t : cases) {
    SCOPED_TRACE(testing::Message() << "M " << t.M << " N " << t.N << " K " << t.K << " group " << t.group << ", "
                                    << gemm::mode_name(mode));
    const std::vector<float> a = randn(t.M * t.K, 1 + t.K), w = randn(t.N * t.K, 2 + t.N, 0.1f);
    const Quantized qw = quantize(w, t.N, t.K, t.group);
    const gemm::PackedWeight packed = gemm::pack_int8(qw.q.data(), qw.s.data(), t.N, t.K, t.group, mode);
    std::vector<float> first;
    for (Isa isa : gemm::int8_isas_for_this_cpu()) {
      for (int threads : {1, 2}) {
        SCOPED_TRACE(testing::Message() << gemm::isa_name(isa) << " (" << gemm::int8_instructions(isa) << "), "
                                        << threads << " threads");
        const std::vector<float> c = product(a, t.M, packed, isa, threads);
        if (first.empty()) {
          first = c;
          double worst = 0;
          for (int64_t i = 0; i < t.M; ++i)
            for (int64_t j = 0; j < t.N; ++j) {
              double exact = 0;
              for (int64_t k = 0; k < t.K; ++k) exact += double(a[i * t.K + k]) * double(w[j * t.K + k]);
              const double bound = gemm::int8_error_bound(&a[i * t.K], &w[j * t.K], t.K, t.group, mode);
              const double err = std::fabs(double(c[i * t.N + j]) - exact);
              ASSERT_LE(err, bound) << "C[" << i << "][" << j << "]";
              worst = std::max(worst, err / bound);
            }
          EXPECT_GT(worst, 0.0);
        } else {
          ASSERT_EQ(0, std::memcmp(c.data(), first.data(), c.size() * sizeof(float)))
              << "the bits differ from " << gemm::isa_name(gemm::int8_isas_for_this_cpu()[0]) << " on 1 thread";
        }
      }
    }
  }
}

TEST(Int8Product, Int8ActivationsStayWithinTheBoundWithTheSameBitsAtEveryWidthAndThreadCount) {
  check_products(Int8Mode::Int8Activations);
}
TEST(Int8Product, FloatActivationsStayWithinTheBoundWithTheSameBitsAtEveryWidthAndThreadCount) {
  check_products(Int8Mode::FloatActivations);
}

// Every value just below a midpoint between two steps, all positive: all
// round down together, and the error comes near the bound. (Not all the way:
// each group's largest value is exact, a 32nd of the values here, and the
// bound does not know which.)
TEST(Int8Product, TheBoundIsNearlyReached) {
  const int64_t K = 256, group = 32;
  std::vector<float> a(K), w(K);
  const float sa = 1.0f / 64, sw = 1.0f / 128;
  for (int64_t k = 0; k < K; ++k) {
    const bool first = k % group == 0;  // each group's largest value: exactly 127 steps
    a[k] = first ? 127 * sa : (float(k % 100) + 0.4999f) * sa;
    w[k] = first ? 127 * sw : (float(k % 90) + 0.4999f) * sw;
  }
  for (Int8Mode mode : {Int8Mode::Int8Activations, Int8Mode::FloatActivations}) {
    SCOPED_TRACE(gemm::mode_name(mode));
    const Quantized qw = quantize(w, 1, K, group);
    const gemm::PackedWeight packed = gemm::pack_int8(qw.q.data(), qw.s.data(), 1, K, group, mode);
    double exact = 0;
    for (int64_t k = 0; k < K; ++k) exact += double(a[k]) * double(w[k]);
    for (Isa isa : gemm::int8_isas_for_this_cpu()) {
      const std::vector<float> c = product(a, 1, packed, isa, 1);
      const double ratio = std::fabs(double(c[0]) - exact) / gemm::int8_error_bound(a.data(), w.data(), K, group, mode);
      EXPECT_LE(ratio, 1.0) << gemm::isa_name(isa);
      EXPECT_GT(ratio, 0.9) << gemm::isa_name(isa);
    }
  }
}

TEST(Int8Product, BFloat16WeightsAreWithinTheirRoundingBoundWithTheSameBitsEverywhere) {
  const int64_t M = 5, N = 37, K = 150;
  const std::vector<float> a = randn(M * K, 3), w = randn(N * K, 4);
  std::vector<uint16_t> bits(w.size());
  for (size_t i = 0; i < w.size(); ++i) bits[i] = bfloat16(w[i]).bits;
  const gemm::PackedWeight packed = gemm::pack_bf16(bits.data(), N, K);
  std::vector<float> first;
  for (Isa isa : gemm::int8_isas_for_this_cpu())
    for (int threads : {1, 2}) {
      const std::vector<float> c = product(a, M, packed, isa, threads);
      if (!first.empty()) {
        EXPECT_EQ(0, std::memcmp(c.data(), first.data(), c.size() * 4)) << gemm::isa_name(isa) << " " << threads;
        continue;
      }
      first = c;
      // each weight off by at most 2^-8 of itself, the float32 sum adds gamma_K
      const double u = std::ldexp(1.0, -8), gamma = K * std::ldexp(1.0, -24) / (1 - K * std::ldexp(1.0, -24));
      for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) {
          double exact = 0, mags = 0;
          for (int64_t k = 0; k < K; ++k) {
            exact += double(a[i * K + k]) * double(w[j * K + k]);
            mags += std::fabs(double(a[i * K + k]) * double(w[j * K + k]));
          }
          EXPECT_LE(std::fabs(c[i * N + j] - exact), ((1 + u) * (1 + gamma) - 1) * mags) << i << " " << j;
        }
    }
}

// A NaN (or an infinity) among the activations gives NaN, as float32 would,
// not a finite number; the other rows are untouched.
TEST(Int8Product, ANonFiniteActivationGivesNaNNotAFiniteNumber) {
  const int64_t M = 3, N = 20, K = 64;
  std::vector<float> a = randn(M * K, 5);
  const std::vector<float> w = randn(N * K, 6);
  a[1 * K + 40] = NAN;
  a[2 * K + 3] = INFINITY;
  const Quantized qw = quantize(w, N, K, 32);
  for (Int8Mode mode : {Int8Mode::Int8Activations, Int8Mode::FloatActivations}) {
    const gemm::PackedWeight packed = gemm::pack_int8(qw.q.data(), qw.s.data(), N, K, 32, mode);
    for (Isa isa : gemm::int8_isas_for_this_cpu()) {
      const std::vector<float> c = product(a, M, packed, isa, 1);
      for (int64_t j = 0; j < N; ++j) {
        EXPECT_TRUE(std::isfinite(c[j])) << gemm::isa_name(isa) << " row 0";
        EXPECT_TRUE(std::isnan(c[N + j])) << gemm::isa_name(isa) << " " << gemm::mode_name(mode) << " row 1 col " << j;
        EXPECT_FALSE(std::isfinite(c[2 * N + j])) << gemm::isa_name(isa) << " row 2 col " << j;
      }
    }
  }
}

TEST(Int8Product, RefusesBadArgumentsByName) {
  std::vector<int8_t> q(64, 1);
  std::vector<float> s(2, 0.5f), x(64, 1.0f), c(1);
  q[37] = -128;
  test::expect_error([&] { gemm::pack_int8(q.data(), s.data(), 1, 64, 32, Int8Mode::Int8Activations); }, "pack_int8",
                     {"the value -128 at element 37", "[-127, 127]"});
  test::expect_error([&] { gemm::quantize_row(x.data(), 64, 0, q.data(), s.data()); }, "quantize_row", {"group 0"});
  test::expect_error([&] { (void)gemm::int8_error_bound(x.data(), x.data(), 64, 0, Int8Mode::Int8Activations); },
                     "int8_error_bound", {"group 0"});
  q[37] = 3;
  const gemm::PackedWeight w = gemm::pack_int8(q.data(), s.data(), 1, 64, 32, Int8Mode::Int8Activations);
  test::expect_error([&] { gemm::weight_product(x.data(), 1, 10, w, c.data(), 1, gemm::Isa::Portable); }, "weight_product",
                     {"lda >= 64"});
  test::expect_error([&] { gemm::weight_product(x.data(), -1, 64, w, c.data(), 1, gemm::Isa::Portable); }, "weight_product",
                     {"-1 rows"});
}

TEST(Int8Product, RefusesAGroupSizeItDoesNotTake) {
  std::vector<int8_t> q(48, 1);
  std::vector<float> s(2, 1.0f);
  for (int64_t group : {0, 16, 48, 512}) {
    test::expect_error([&] { gemm::pack_int8(q.data(), s.data(), 1, 48, group, Int8Mode::Int8Activations); }, "pack_int8",
                       {"group size must be 32, 64, 128 or 256, got " + std::to_string(group)});
  }
}

TEST(Int8DType, ConvertsInRangeAndRefusesOutOfRangeOrNaNNamingTheValue) {
  Tensor x = tensor({-128.0f, -1.6f, 0.4f, 127.0f}, {4});
  Tensor q = x.to(kInt8);
  EXPECT_EQ(q.dtype(), kInt8);
  EXPECT_EQ(q.to(kInt64).to_vector<int64_t>(), (std::vector<int64_t>{-128, -1, 0, 127}));  // toward zero, as a C cast
  Tensor big = tensor({1.0f, 128.0f}, {2});
  test::expect_error([&] { big.to(kInt8); }, "to", {"the value 128 at element 1 of a float32 tensor of shape (2)", "does not fit int8"});
  test::expect_error([&] { tensor({NAN}, {1}).to(kInt8); }, "to", {"does not fit int8"});
  Tensor dst = zeros({2}, kInt8);
  test::expect_error([&] { dst.fill_(300); }, "fill_", {"the value 300 does not fit int8"});
  EXPECT_EQ(dst.to(kInt64).to_vector<int64_t>(), (std::vector<int64_t>{0, 0}));
  test::expect_error([&] { add(q, q); }, "add", {"int8", "storage type"});
}

TEST(Int8DType, IsSavedAsI8AndReadBack) {
  test::TempDir dir;
  const std::string path = dir.path() + "/q.safetensors";
  Tensor q = tensor({-127.0, 5.0, 0.0, 127.0, -3.0, 9.0}, {2, 3}).to(kInt8);
  train::write_safetensors(path, {{"q", q}});
  const auto back = train::read_safetensors(path);
  ASSERT_EQ(back.tensors.size(), 1u);
  EXPECT_EQ(back.tensors[0].second.dtype(), kInt8);
  EXPECT_EQ(back.tensors[0].second.shape(), (Shape{2, 3}));
  EXPECT_EQ(back.tensors[0].second.to(kInt64).to_vector<int64_t>(), (std::vector<int64_t>{-127, 5, 0, 127, -3, 9}));
}

}  // namespace
