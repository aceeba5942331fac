// bfloat16: the conversion (round to nearest, ties to even, against an exact
// reference on every high half), the dtype (storage, views, printing,
// safetensors, the ops that refuse it by name), and the bfloat16 product
// (tensor/gemm/step7_bfloat16.cpp) held to the bound of its rounding
// analysis at every SIMD width this CPU runs, with vdpbf16ps and without.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <random>
#include <vector>

#include "ember.h"
#include "tensor/gemm/gemm.h"
#include "tensor/gemm/microkernels.h"
#include "tensor/gemm/panels.h"
#include "tensor/kernels.h"
#include "test_util.h"

namespace {

using namespace ember;
using gemm::Isa;

float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}
uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

// The nearest bfloat16 by measuring both neighbours in double (exact for
// these values), ties to the even pattern; finite inputs only. Not the
// library's add-and-cut: an independent statement of the rule.
uint16_t nearest_bf16(float x) {
  const uint32_t u = bits_of(x);
  const uint16_t low = static_cast<uint16_t>(u >> 16);
  if ((u & 0xFFFF) == 0) return low;
  const double below = float_from_bf16_bits(low);
  const double above_f = float_from_bf16_bits(static_cast<uint16_t>(low + 1));
  // past the largest bfloat16 the next "value" is 2^128 (then rounding gives infinity)
  const double above = std::isinf(above_f) ? std::copysign(std::ldexp(1.0, 128), x) : above_f;
  const double dl = std::fabs(double(x) - below), dh = std::fabs(above - double(x));
  if (dl != dh) return dl < dh ? low : static_cast<uint16_t>(low + 1);
  return (low & 1) ? static_cast<uint16_t>(low + 1) : low;
}

TEST(BFloat16, RoundsToNearestWithTiesToEven) {
  EXPECT_EQ(bf16_bits_from_float(1.0f), 0x3F80);
  EXPECT_EQ(bf16_bits_from_float(1.0f + 0x1p-8f), 0x3F80);           // a tie: to the even 1.0
  EXPECT_EQ(bf16_bits_from_float(1.0f + 3 * 0x1p-8f), 0x3F82);       // a tie: to the even 1 + 2^-6
  EXPECT_EQ(bf16_bits_from_float(1.0f + 0x1p-8f + 0x1p-20f), 0x3F81);  // just past it: up
  EXPECT_EQ(bf16_bits_from_float(-(1.0f + 0x1p-8f + 0x1p-20f)), 0xBF81);
  EXPECT_EQ(bf16_bits_from_float(0.1f), 0x3DCD);
  EXPECT_EQ(bf16_bits_from_float(-0.0f), 0x8000);
  EXPECT_EQ(bf16_bits_from_float(std::numeric_limits<float>::max()), 0x7F80);  // past the largest: infinity
  EXPECT_EQ(bf16_bits_from_float(float_from_bf16_bits(0x7F7F)), 0x7F7F);        // the largest stays
  EXPECT_EQ(bf16_bits_from_float(-std::numeric_limits<float>::infinity()), 0xFF80);
  EXPECT_EQ(bf16_bits_from_float(1e-40f), 0x0001);  // subnormals round like the rest
  const uint16_t nan = bf16_bits_from_float(std::numeric_limits<float>::quiet_NaN());
  EXPECT_TRUE(std::isnan(float_from_bf16_bits(nan)));
  const uint16_t snan = bf16_bits_from_float(from_bits(0x7F800001u));  // a NaN whose payload is all in the cut bits
  EXPECT_TRUE(std::isnan(float_from_bf16_bits(snan))) << "a NaN must not round to infinity";
  EXPECT_EQ(float_from_bf16_bits(0x4049), 3.140625f);  // exact the other way
}

// Every one of the 65536 high halves with low halves that are 0, ties,
// either side of a tie and extremes: the scalar conversion, the loop the
// packing uses (gemm::bf16_bits_of, and at every width) and the exact
// reference agree.
TEST(BFloat16, EveryHighHalfRoundsAsTheExactReferenceSays) {
  const uint32_t lows[] = {0x0000, 0x0001, 0x7FFF, 0x8000, 0x8001, 0xC000, 0xFFFF};
  std::vector<float> in;
  for (uint32_t high = 0; high < 65536; ++high)
    for (uint32_t low : lows) in.push_back(from_bits(high << 16 | low));
  std::vector<uint16_t> batch(in.size());
  gemm::bf16_bits_of(in.data(), batch.data(), static_cast<int64_t>(in.size()));
  int64_t checked = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    const uint16_t scalar = bf16_bits_from_float(in[i]);
    ASSERT_EQ(batch[i], scalar) << std::hex << bits_of(in[i]);
    if (std::isnan(in[i])) {
      ASSERT_TRUE(std::isnan(float_from_bf16_bits(scalar))) << std::hex << bits_of(in[i]);
      continue;
    }
    ASSERT_EQ(scalar, nearest_bf16(in[i])) << std::hex << bits_of(in[i]);
    ++checked;
  }
  EXPECT_GT(checked, 450000);
  for (Isa isa : gemm::isas_for_this_cpu()) {  // the vectorized loop packing runs, at every width
    std::vector<uint16_t> wide(in.size());
    gemm::to_bf16_bits_at(isa, in.data(), wide.data(), static_cast<int64_t>(in.size()));
    ASSERT_EQ(wide, batch) << gemm::isa_name(isa);
  }
}

TEST(BFloat16, IsAStorageDtype) {
  Tensor t = tensor({1.0f, 0.1f, -2.5f, 1e30f}, {2, 2}).to(kBFloat16);
  const float big = float_from_bf16_bits(nearest_bf16(1e30f));
  EXPECT_EQ(t.dtype(), kBFloat16);
  EXPECT_EQ(dtype_size(kBFloat16), 2u);
  EXPECT_EQ(t.storage()->nbytes(), 8u);
  EXPECT_EQ(t.to_vector<float>(), (std::vector<float>{1.0f, 0.10009765625f, -2.5f, big}));
  Tensor back = t.to(kFloat32);  // exact
  EXPECT_EQ(back.to_vector<float>(), t.to_vector<float>());
  EXPECT_EQ(t.t().contiguous().to_vector<float>(), (std::vector<float>{1.0f, -2.5f, 0.10009765625f, big}));
  EXPECT_EQ(kernel::cat({t, t}, 0).shape(), (Shape{4, 2}));
  EXPECT_FLOAT_EQ(t.select(0, 1).select(0, 0).item<float>(), -2.5f);
  Tensor z = zeros({3}, kBFloat16);
  EXPECT_EQ(z.to_vector<double>(), (std::vector<double>{0, 0, 0}));
  EXPECT_EQ(full({2}, 0.1, kBFloat16).to_vector<float>(), (std::vector<float>{0.10009765625f, 0.10009765625f}));
  const std::string printed = t.to_string();
  EXPECT_NE(printed.find("dtype=bfloat16"), std::string::npos) << printed;
  EXPECT_NE(printed.find("1.0010e-01"), std::string::npos) << printed;
}

TEST(BFloat16, OpsThatDoNotComputeInItSayTheirNameAndTheDtype) {
  Tensor b = tensor({1.0f, 2.0f}).to(kBFloat16), f = tensor({1.0f, 2.0f});
  test::expect_error([&] { b + b; }, "add", {"bfloat16", "to(float32)"});
  test::expect_error([&] { b * 2.0; }, "mul", {"bfloat16"});
  test::expect_error([&] { exp(b); }, "exp", {"bfloat16"});
  test::expect_error([&] { b.sum(); }, "sum", {"bfloat16"});
  test::expect_error([&] { mean(b); }, "mean", {"bfloat16"});
  test::expect_error([&] { softmax(b, 0); }, "softmax", {"bfloat16"});
  test::expect_error([&] { gt(b, b); }, "gt", {"bfloat16"});
  test::expect_error([&] { layer_norm(b, b, b); }, "layer_norm", {"bfloat16"});
  test::expect_error([&] { randn({2}, kBFloat16); }, "normal", {"bfloat16"});
  test::expect_error([&] { b.requires_grad_(); }, "requires_grad_", {"bfloat16"});
  test::expect_error([&] { kernel::matmul(b, f); }, "matmul", {"bfloat16", "float32"});
  Tensor w = tensor({1.0f, 2.0f});
  w.requires_grad_();
  test::expect_error([&] { w.to(kBFloat16); }, "to", {"requires grad", "bfloat16", "AutocastGuard"});
  EXPECT_EQ(b.to_vector<float>(), (std::vector<float>{1.0f, 2.0f}));  // nothing was changed
}

TEST(BFloat16, SafetensorsKeepsTheBitsAsBF16) {
  const std::string path = (std::filesystem::temp_directory_path() / "ember_bf16_test.safetensors").string();
  Tensor t = tensor({0.1f, -3.0f, 65504.0f, 1e-39f, -0.0f, 7.0f}, {2, 3}).to(kBFloat16);
  train::write_safetensors(path, {{"w", t}});
  train::SafetensorsContents read = train::read_safetensors(path);
  ASSERT_EQ(read.tensors.size(), 1u);
  const Tensor& r = read.tensors[0].second;
  EXPECT_EQ(r.dtype(), kBFloat16);
  EXPECT_EQ(r.shape(), (Shape{2, 3}));
  EXPECT_TRUE(equal_bits(r, t));
  std::filesystem::remove(path);
}

// ---- the bfloat16 product ----

struct Case {
  std::vector<float> a, b;
  int64_t M, K, N;
};
Case random_case(int64_t M, int64_t K, int64_t N, uint32_t seed) {
  std::mt19937 g(seed);
  std::normal_distribution<float> d(0.0f, 1.0f);
  Case c{std::vector<float>(size_t(M * K)), std::vector<float>(size_t(K * N)), M, K, N};
  for (float& x : c.a) x = d(g);
  for (float& x : c.b) x = d(g);
  return c;
}

// The paths this CPU can run: vdpbf16ps (at AVX-512, with AVX512_BF16) and
// the rounded-float32 fallback at every width.
struct Path {
  Isa isa;
  bool native;
  std::string name() const { return std::string(gemm::isa_name(isa)) + (native ? " vdpbf16ps" : " fallback"); }
};
std::vector<Path> paths() {
  std::vector<Path> out;
  if (gemm::has_avx512_bf16()) out.push_back({Isa::AVX512, true});
  for (Isa isa : gemm::isas_for_this_cpu()) out.push_back({isa, false});
  return out;
}

std::vector<float> product(const Case& c, const Path& p, bool parallel = true) {
  std::vector<float> out(size_t(c.M * c.N));
  gemm::bf16_product(gemm::View<float>{c.a.data(), c.M, c.K, c.K, 1}, gemm::View<float>{c.b.data(), c.K, c.N, c.N, 1},
                     {out.data(), c.M, c.N, c.N}, p.isa, p.native, parallel);
  return out;
}

// The bound of step7_bfloat16.cpp: with u = 2^-8 (bfloat16) and
// gamma_K = K v / (1 - K v), v = 2^-24 (float32 sums),
//   |C_bf16 - A B| <= ((1 + u)^2 (1 + gamma_K) - 1) sum_k |a_ik| |b_kj|.
double bf16_bound_factor(int64_t K) {
  const double u = std::ldexp(1.0, -8), v = std::ldexp(1.0, -24), g = K * v / (1 - K * v);
  return (1 + u) * (1 + u) * (1 + g) - 1;
}

// Worst |error| / bound over C, against the float64 product of the inputs as given.
double worst_ratio(const Case& c, const std::vector<float>& got) {
  double worst = 0;
  for (int64_t i = 0; i < c.M; ++i)
    for (int64_t j = 0; j < c.N; ++j) {
      double exact = 0, scale = 0;
      for (int64_t k = 0; k < c.K; ++k) {
        const double x = c.a[size_t(i * c.K + k)], y = c.b[size_t(k * c.N + j)];
        exact += x * y;
        scale += std::fabs(x * y);
      }
      worst = std::max(worst, std::fabs(got[size_t(i * c.N + j)] - exact) / (bf16_bound_factor(c.K) * scale));
    }
  return worst;
}

TEST(BFloat16Product, ErrorAgainstFloat64IsWithinTheRoundingBound) {
  const std::vector<std::array<int64_t, 3>> shapes = {{1, 1, 1},     {7, 33, 7},   {33, 257, 65}, {13, 1024, 40},
                                                       {257, 513, 1}, {4100, 9, 5}, {5, 9, 2100}};
  for (const Path& p : paths())
    for (const auto& [M, K, N] : shapes) {
      SCOPED_TRACE(p.name() + ", M K N = " + std::to_string(M) + " " + std::to_string(K) + " " + std::to_string(N));
      const Case c = random_case(M, K, N, 7);
      const double r = worst_ratio(c, product(c, p));
      EXPECT_LE(r, 1.0);
      if (K >= 33) {
        EXPECT_GT(r, 0.01) << "not rounded at all? (float32 would be ~100x smaller)";
      }
    }
}

// The bound is not loose: every input just past a rounding midpoint rounds
// up by nearly u, so every product errs by nearly 2u the same way, and the
// float32 sums of these values are exact.
TEST(BFloat16Product, TheBoundIsNearlyReached) {
  const float x = 1.0f + 0x1p-8f + 0x1p-20f;  // rounds up to 1 + 2^-7
  Case c{std::vector<float>(2 * 1024, x), std::vector<float>(1024 * 3, x), 2, 1024, 3};
  for (const Path& p : paths()) {
    SCOPED_TRACE(p.name());
    const std::vector<float> got = product(c, p);
    EXPECT_EQ(got[0], 1024.0f * (1 + 0x1p-7f) * (1 + 0x1p-7f));
    const double r = worst_ratio(c, got);
    EXPECT_GT(r, 0.98);
    EXPECT_LE(r, 1.0);
  }
}

// vdpbf16ps adds a pair's products one after the other, the odd k first,
// rounding after each (its definition in Intel's instruction reference; a
// product of two bfloat16 values is exact in float32);
// the fallback packs the pairs in that order, so all paths agree bit for
// bit (for inputs whose products are not subnormal, which vdpbf16ps flushes),
// on one thread or several; and bfloat16 inputs give what float32 inputs
// rounded to them give.
TEST(BFloat16Product, EveryPathGivesTheSameBitsAndSoDoesEveryThreadCount) {
  const Case c = random_case(150, 1100, 70, 9);
  const std::vector<float> first = product(c, paths().front());
  std::vector<bfloat16> ab, bb;
  for (float v : c.a) ab.push_back(bfloat16(v));
  for (float v : c.b) bb.push_back(bfloat16(v));
  const int threads = get_num_threads();
  for (const Path& p : paths())
    for (int t : {1, 2}) {
      SCOPED_TRACE(p.name() + ", " + std::to_string(t) + " threads");
      set_num_threads(t);
      EXPECT_EQ(product(c, p), first);
      EXPECT_EQ(product(c, p, /*parallel=*/false), first);
      std::vector<float> from_bf16(first.size());
      gemm::bf16_product(gemm::View<bfloat16>{ab.data(), 150, 1100, 1100, 1}, gemm::View<bfloat16>{bb.data(), 1100, 70, 70, 1},
                         {from_bf16.data(), 150, 70, 70}, p.isa, p.native);
      EXPECT_EQ(from_bf16, first);
    }
  set_num_threads(threads);
}

// Transposed and strided operands are read by the packing as they are
// (a transposed A and a row-major B are rounded straight into pair panels:
// an odd depth, rows past the last whole panel), on every path.
TEST(BFloat16Product, TransposedAndStridedOperandsGiveTheSameBits) {
  const Case c = random_case(37, 71, 45, 4);
  const std::vector<float> want = product(c, paths().front());
  std::vector<float> at(c.a.size()), bt(c.b.size()), wide(c.a.size() * 2);
  for (int64_t i = 0; i < c.M; ++i)
    for (int64_t k = 0; k < c.K; ++k) {
      at[size_t(k * c.M + i)] = c.a[size_t(i * c.K + k)];
      wide[size_t(i * 2 * c.K + 2 * k)] = c.a[size_t(i * c.K + k)];
    }
  for (int64_t k = 0; k < c.K; ++k)
    for (int64_t j = 0; j < c.N; ++j) bt[size_t(j * c.K + k)] = c.b[size_t(k * c.N + j)];
  for (const Path& p : paths()) {
    SCOPED_TRACE(p.name());
    std::vector<float> got(want.size());
    gemm::bf16_product({at.data(), c.M, c.K, 1, c.M}, {bt.data(), c.K, c.N, 1, c.K}, {got.data(), c.M, c.N, c.N}, p.isa, p.native);
    EXPECT_EQ(got, want);
    gemm::bf16_product({wide.data(), c.M, c.K, 2 * c.K, 2}, {c.b.data(), c.K, c.N, c.N, 1}, {got.data(), c.M, c.N, c.N}, p.isa,
                       p.native);
    EXPECT_EQ(got, want);
  }
}

TEST(BFloat16Product, MatmulOfBFloat16TensorsIsFloat32) {
  Generator g(2);
  Tensor a = randn({3, 20, 30}, g), b = randn({30, 10}, g);
  Tensor c = kernel::matmul(a.to(kBFloat16), b.to(kBFloat16));
  EXPECT_EQ(c.dtype(), kFloat32);
  EXPECT_EQ(c.shape(), (Shape{3, 20, 10}));
  EXPECT_TRUE(equal_bits(c, kernel::matmul_bf16(a, b)));   // the same rounding, while packing
  EXPECT_TRUE(equal_bits(kernel::matmul_bf16(a, b.t().contiguous().t()), c));
  test::expect_error([&] { kernel::matmul_bf16(a.to(kFloat64), b.to(kFloat64)); }, "matmul_bf16", {"float64"});
  // Shapes that do not chain, or batches that do not broadcast, name the op and both shapes.
  test::expect_error([&] { kernel::matmul_bf16(a, randn({29, 10}, g)); }, "matmul_bf16", {"(3, 20, 30)", "(29, 10)"});
  test::expect_error([&] { kernel::matmul_bf16(a, randn({2, 30, 10}, g)); }, "matmul_bf16", {"(3, 20, 30)", "(2, 30, 10)"});
}

}  // namespace
