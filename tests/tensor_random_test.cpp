// Generator (PCG32) and the random factories: pinned bit streams,
// reproducibility, ranges and moments.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "ember.h"
#include "test_util.h"

namespace {

using namespace ember;
using namespace ember::test;

struct Moments {
  double mean, var, min, max;
};
Moments moments(const std::vector<double>& v) {
  double s = 0, mn = INFINITY, mx = -INFINITY;
  for (double x : v) {
    s += x;
    mn = std::min(mn, x);
    mx = std::max(mx, x);
  }
  double mean = s / static_cast<double>(v.size()), ss = 0;
  for (double x : v) ss += (x - mean) * (x - mean);
  return {mean, ss / static_cast<double>(v.size() - 1), mn, mx};
}

constexpr int64_t kN = 100000;

// ---- the bit source ----

TEST(TensorRandom, Pcg32MatchesReferenceDemo) {
  // pcg32-demo: pcg32_srandom_r(&rng, 42u, 54u), then pcg32_random_r six times.
  Generator g(42, 54);
  const uint32_t expected[] = {0xa15c02b7, 0x7b47f409, 0xba1d3330, 0x83d2f293, 0xbfa4784b, 0xcbed606e};
  for (uint32_t e : expected) EXPECT_EQ(g.next_u32(), e);
}

TEST(TensorRandom, ManualSeedRestartsTheStream) {
  Generator g(1, 1);
  g.next_u32();
  g.manual_seed(42, 54);
  EXPECT_EQ(g.next_u32(), 0xa15c02b7u);
  EXPECT_EQ(g.next_u32(), 0x7b47f409u);
}

TEST(TensorRandom, SeedsAndStreamsGiveDifferentSequences) {
  Generator a(42, 0), b(43, 0), c(42, 1);
  std::vector<uint32_t> va, vb, vc;
  for (int i = 0; i < 8; ++i) {
    va.push_back(a.next_u32());
    vb.push_back(b.next_u32());
    vc.push_back(c.next_u32());
  }
  EXPECT_NE(va, vb);
  EXPECT_NE(va, vc);
  EXPECT_NE(vb, vc);
}

TEST(TensorRandom, DerivedDrawsAreBuiltFromTheBits) {
  Generator a(5), b(5);
  for (int i = 0; i < 100; ++i) {
    // 24 top bits -> float in [0, 1)
    EXPECT_EQ(a.next_float(), static_cast<float>(b.next_u32() >> 8) / 16777216.0f);
  }
  for (int i = 0; i < 100; ++i) {
    uint64_t hi = b.next_u32(), lo = b.next_u32();
    EXPECT_EQ(a.next_u64(), (hi << 32) | lo);
  }
  for (int i = 0; i < 100; ++i) {
    uint64_t x = b.next_u32() >> 5, y = b.next_u32() >> 6;  // 27 + 26 = 53 bits
    EXPECT_EQ(a.next_double(), static_cast<double>((x << 26) | y) / 9007199254740992.0);
  }
}

TEST(TensorRandom, NextBelowInRangeAndUnbiased) {
  Generator g(9);
  EXPECT_EQ(g.next_below(1), 0u);
  std::vector<int> counts(6, 0);
  const int n = 60000;
  for (int i = 0; i < n; ++i) {
    uint64_t r = g.next_below(6);
    ASSERT_LT(r, 6u);
    ++counts[r];
  }
  // each count ~ Binomial(n, 1/6): sd = sqrt(n * 1/6 * 5/6) ~ 91; allow 4 sd
  for (int c : counts) EXPECT_NEAR(c, n / 6.0, 4 * std::sqrt(n * (1.0 / 6) * (5.0 / 6)));
}

TEST(TensorRandom, StateRoundTripReplays) {
  Generator g(123, 7);
  g.next_u32();
  Generator::State s = g.get_state();
  std::vector<uint32_t> first;
  for (int i = 0; i < 5; ++i) first.push_back(g.next_u32());
  g.set_state(s);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(g.next_u32(), first[i]);
  // the state fully determines the generator: another instance replays it too
  Generator h(0);
  h.set_state(s);
  EXPECT_EQ(h.next_u32(), first[0]);
}

// ---- random tensors ----

TEST(TensorRandom, RandnFloat64IsPinned) {
  // Pinned from the implementation (Box-Muller on PCG32 seed 0, stream 0,
  // values in row-major order) to detect any change in the random stream.
  Generator g(0);
  std::vector<double> v = randn({4}, g, kFloat64).to_vector<double>();
  EXPECT_EQ(v[0], -1.3545339262539886);
  EXPECT_EQ(v[1], 1.6266076737524491);
  EXPECT_EQ(v[2], -0.3979037027261072);
  EXPECT_EQ(v[3], 0.27433901822445528);
  // float32 draws the same normals and rounds them once
  Generator g32(0);
  std::vector<float> f = randn({4}, g32, kFloat32).to_vector<float>();
  EXPECT_EQ(f, (std::vector<float>{static_cast<float>(-1.3545339262539886), static_cast<float>(1.6266076737524491),
                                   static_cast<float>(-0.3979037027261072), static_cast<float>(0.27433901822445528)}));
}

TEST(TensorRandom, SameSeedIsBitwiseIdentical) {
  Generator a(2024), b(2024);
  for (DType dt : {kFloat32, kFloat64}) {
    EXPECT_EQ(randn({33, 7}, a, dt).to_vector<double>(), randn({33, 7}, b, dt).to_vector<double>());
    EXPECT_EQ(rand({100}, a, dt).to_vector<double>(), rand({100}, b, dt).to_vector<double>());
    EXPECT_EQ(normal({5}, 1, 2, a, dt).to_vector<double>(), normal({5}, 1, 2, b, dt).to_vector<double>());
    EXPECT_EQ(uniform({5}, -1, 1, a, dt).to_vector<double>(), uniform({5}, -1, 1, b, dt).to_vector<double>());
  }
  EXPECT_EQ(randint(0, 1000, {50}, a).to_vector<int64_t>(), randint(0, 1000, {50}, b).to_vector<int64_t>());
}

TEST(TensorRandom, DifferentSeedsDiffer) {
  Generator a(1), b(2);
  EXPECT_NE(randn({16}, a).to_vector<float>(), randn({16}, b).to_vector<float>());
  Generator c(1);
  std::vector<float> first = rand({16}, c).to_vector<float>();
  EXPECT_NE(first, rand({16}, c).to_vector<float>());  // the generator advances
}

TEST(TensorRandom, ShapeDoesNotChangeTheStream) {
  // values are drawn in row-major order: shape (2, 3) holds the same numbers as (6)
  Generator a(77), b(77);
  EXPECT_EQ(randn({2, 3}, a, kFloat64).to_vector<double>(), randn({6}, b, kFloat64).to_vector<double>());
}

TEST(TensorRandom, RandInUnitInterval) {
  Generator g(3);
  for (DType dt : {kFloat32, kFloat64}) {
    Tensor r = rand({kN}, g, dt);
    EXPECT_EQ(r.dtype(), dt);
    Moments m = moments(r.to_vector<double>());
    EXPECT_GE(m.min, 0.0);
    EXPECT_LT(m.max, 1.0);
    // U(0,1): mean 1/2, var 1/12; se(mean) = sqrt(1/12/N), se(var) = sqrt((1/80 - 1/144)/N)
    EXPECT_NEAR(m.mean, 0.5, 4 * std::sqrt(1.0 / 12 / kN));
    EXPECT_NEAR(m.var, 1.0 / 12, 4 * std::sqrt((1.0 / 80 - 1.0 / 144) / kN));
  }
}

TEST(TensorRandom, UniformMoments) {
  Generator g(4);
  const double lo = -2, hi = 6, w = hi - lo;
  Moments m = moments(uniform({kN}, lo, hi, g, kFloat64).to_vector<double>());
  EXPECT_GE(m.min, lo);
  EXPECT_LT(m.max, hi);
  const double var = w * w / 12, mu4 = std::pow(w, 4) / 80;
  EXPECT_NEAR(m.mean, 2.0, 4 * std::sqrt(var / kN));
  EXPECT_NEAR(m.var, var, 4 * std::sqrt((mu4 - var * var) / kN));
}

TEST(TensorRandom, NormalMoments) {
  Generator g(5);
  for (DType dt : {kFloat32, kFloat64}) {
    Moments z = moments(randn({kN}, g, dt).to_vector<double>());
    EXPECT_NEAR(z.mean, 0.0, 4 * std::sqrt(1.0 / kN));
    EXPECT_NEAR(z.var, 1.0, 4 * std::sqrt(2.0 / kN));  // var of sample var = 2 sigma^4 / N
    EXPECT_TRUE(std::isfinite(z.min) && std::isfinite(z.max));
    Moments m = moments(normal({kN}, 3.0, 2.0, g, dt).to_vector<double>());
    EXPECT_NEAR(m.mean, 3.0, 4 * 2.0 / std::sqrt(kN));
    EXPECT_NEAR(m.var, 4.0, 4 * std::sqrt(2.0 * 16.0 / kN));
  }
  // odd count: the last Box-Muller pair is half used
  EXPECT_EQ(randn({7}, g).numel(), 7);
}

TEST(TensorRandom, RandintRangeAndCounts) {
  Generator g(6);
  Tensor r = randint(-2, 3, {kN}, g);
  EXPECT_EQ(r.dtype(), kInt64);
  std::vector<int64_t> v = r.to_vector<int64_t>();
  std::vector<int> counts(5, 0);
  for (int64_t x : v) {
    ASSERT_GE(x, -2);
    ASSERT_LT(x, 3);
    ++counts[x + 2];
  }
  for (int c : counts) EXPECT_NEAR(c, kN / 5.0, 4 * std::sqrt(kN * 0.2 * 0.8));
  Tensor one = randint(7, 8, {10}, g);
  EXPECT_EQ(one.to_vector<int64_t>(), std::vector<int64_t>(10, 7));
}

TEST(TensorRandom, RandintEmptyRangeThrows) {
  Generator g(0);
  expect_error([&] { (void)randint(5, 5, {3}, g); }, "randint", {"5"});
  expect_error([&] { (void)randint(4, -1, {3}, g); }, "randint", {"4", "-1"});
}

TEST(TensorRandom, BadArgumentsThrow) {
  Generator g(0);
  expect_error([&] { (void)normal({3}, 0, -1, g); }, "", {"std", "-1"});
  expect_error([&] { (void)uniform({3}, 2, 1, g); }, "", {"2", "1"});
  expect_error([&] { (void)rand({3}, g, kInt64); }, "", {"int64"});
}

TEST(TensorRandom, InPlaceFillsDrawFromTheGenerator) {
  Generator g(8);
  Tensor t = zeros({1000}, kFloat64);
  uint64_t v = t.version();
  uniform_(t, -1, 1, g);
  EXPECT_GT(t.version(), v);
  Moments m = moments(t.to_vector<double>());
  EXPECT_GE(m.min, -1.0);
  EXPECT_LT(m.max, 1.0);
  EXPECT_NE(m.min, m.max);
  // into a non-contiguous view: only the view's elements change
  Tensor x = zeros({4, 4});
  Tensor col = x.select(1, 2);
  normal_(col, 10.0, 0.1, g);
  std::vector<float> xv = x.to_vector<float>();
  for (int i = 0; i < 16; ++i) {
    if (i % 4 == 2) EXPECT_NEAR(xv[i], 10.0f, 1.0f) << i;
    else EXPECT_EQ(xv[i], 0.0f) << i;
  }
}

TEST(TensorRandom, DefaultGeneratorManualSeedReproduces) {
  manual_seed(31337);
  std::vector<float> a = randn({10}).to_vector<float>();
  std::vector<int64_t> ai = randint(0, 100, {10}).to_vector<int64_t>();
  manual_seed(31337);
  EXPECT_EQ(randn({10}).to_vector<float>(), a);
  EXPECT_EQ(randint(0, 100, {10}).to_vector<int64_t>(), ai);
  // the default generator is the same object as default_generator()
  manual_seed(31337);
  Generator copy = default_generator();
  EXPECT_EQ(randn({10}, copy).to_vector<float>(), a);
}

TEST(TensorRandom, TensorStateRoundTrip) {
  Generator g(11);
  Generator::State s = g.get_state();
  std::vector<double> a = rand({20}, g, kFloat64).to_vector<double>();
  g.set_state(s);
  EXPECT_EQ(rand({20}, g, kFloat64).to_vector<double>(), a);
}

}  // namespace
