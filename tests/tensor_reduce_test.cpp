// Reductions: sum/mean/var/norm over all or chosen dims, max/min/argmax
// with indices, softmax/log_softmax (closed forms and stability at +-1e4),
// zero-size tensors and errors.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "ember.h"
#include "tensor/machine/vec_math.h"
#include "test_util.h"

namespace {

using namespace ember;
using namespace ember::test;

std::vector<int64_t> ints(const Tensor& t) { return t.to_vector<int64_t>(); }
void expect_near(const std::vector<double>& got, const std::vector<double>& want, double tol, int line = __builtin_LINE()) {
  ::testing::ScopedTrace trace(__FILE__, line, "expect_near");
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "at " << i;
}
const double kInf = std::numeric_limits<double>::infinity();

// x[i, j, k] = 12 i + 4 j + k, shape (2, 3, 4)
Tensor x234() { return arange(24, kFloat64).reshape({2, 3, 4}); }

// ---- sum / mean ----

TEST(TensorReduce, SumAll) {
  Tensor s = x234().sum();
  EXPECT_EQ(s.shape(), Shape{});
  EXPECT_EQ(s.dtype(), kFloat64);
  EXPECT_EQ(s.item<double>(), 276.0);  // 0 + 1 + ... + 23
  EXPECT_EQ(sum(x234()).item<double>(), 276.0);
  EXPECT_EQ(arange(10).sum().dtype(), kFloat32);
  EXPECT_EQ(arange(10).sum().item<float>(), 45.0f);
  Tensor n = i64({1, 2, 3, -10});
  EXPECT_EQ(n.sum().dtype(), kInt64);
  EXPECT_EQ(n.sum().item<int64_t>(), -4);
  EXPECT_EQ(scalar_tensor(2.5, kFloat64).sum().item<double>(), 2.5);
}

TEST(TensorReduce, SumOverDims) {
  Tensor x = x234();
  Tensor s0 = x.sum({0});  // 12 + 2 (4 j + k)
  EXPECT_EQ(s0.shape(), (Shape{3, 4}));
  for (int j = 0; j < 3; ++j)
    for (int k = 0; k < 4; ++k) EXPECT_EQ(vals(s0)[j * 4 + k], 12 + 2 * (4 * j + k));
  Tensor s1 = x.sum({1}, true);  // 3 (12 i + k) + 12
  EXPECT_EQ(s1.shape(), (Shape{2, 1, 4}));
  EXPECT_EQ(vals(s1), (std::vector<double>{12, 15, 18, 21, 48, 51, 54, 57}));
  Tensor s2 = x.sum({-1});  // 4 (12 i + 4 j) + 6
  EXPECT_EQ(s2.shape(), (Shape{2, 3}));
  EXPECT_EQ(vals(s2), (std::vector<double>{6, 22, 38, 54, 70, 86}));
  Tensor s02 = x.sum({0, 2});  // 60 + 32 j
  EXPECT_EQ(s02.shape(), Shape{3});
  EXPECT_EQ(vals(s02), (std::vector<double>{60, 92, 124}));
  EXPECT_EQ(x.sum({2, 0}, true).shape(), (Shape{1, 3, 1}));
  EXPECT_EQ(vals(x.sum({-1, -3}, true)), (std::vector<double>{60, 92, 124}));
  Tensor s01 = sum(x, {0, 1});
  EXPECT_EQ(vals(s01), (std::vector<double>{60, 66, 72, 78}));
  Tensor all = x.sum({0, 1, 2}, true);
  EXPECT_EQ(all.shape(), (Shape{1, 1, 1}));
  EXPECT_EQ(all.item<double>(), 276);
}

TEST(TensorReduce, SumOfStridedViews) {
  Tensor x = x234();
  Tensor t = x.transpose(0, 2);  // (4, 3, 2)
  EXPECT_EQ(vals(t.sum({2})), vals(x.sum({0}).t()));
  EXPECT_EQ(vals(t.sum({0})), vals(x.sum({2}).t()));
  Tensor s = x.slice(2, 0, 4, 3);  // k in {0, 3}
  EXPECT_EQ(vals(s.sum({2})), (std::vector<double>{3, 11, 19, 27, 35, 43}));
  Tensor e = f64({1, 2, 3}).expand({4, 3});
  EXPECT_EQ(vals(e.sum({0})), (std::vector<double>{4, 8, 12}));
  EXPECT_EQ(e.sum().item<double>(), 24);
}

TEST(TensorReduce, Float32SumAccumulatesInDouble) {
  // 10^6 copies of 0.1f: every partial sum is exact in double, so the result is
  // float(10^6 * double(0.1f)); naive float accumulation would be off by ~1%.
  const float expected = static_cast<float>(1e6 * static_cast<double>(0.1f));
  EXPECT_EQ(full({1000000}, 0.1).sum().item<float>(), expected);
  EXPECT_EQ(full({1000, 1000}, 0.1).sum({0, 1}).item<float>(), expected);
  EXPECT_EQ(vals(full({1000, 1000}, 0.1).sum({1})), std::vector<double>(1000, static_cast<float>(1000 * static_cast<double>(0.1f))));
  EXPECT_EQ(vals(full({1000, 1000}, 0.1).sum({0})), std::vector<double>(1000, static_cast<float>(1000 * static_cast<double>(0.1f))));
}

// A sum over the leading dims (the bias gradient of a Linear) runs its
// columns at the SIMD width vec_math chose (scripts/test_blas_cores.sh runs
// this under each): every width gives the bits of each column summed in
// order, in double, then rounded once.
TEST(TensorReduce, SumOverLeadingDimsGivesTheOrderedSumsBitsAtTheChosenWidth) {
  Generator gen(31);
  const Tensor x = randn({3, 70, 203}, gen);  // columns of whole vectors and a tail; several pieces of parallel_for
  const std::vector<float> v = x.to_vector<float>();
  std::vector<float> want(203);
  for (int64_t m = 0; m < 203; ++m) {
    double s = 0;
    for (int64_t k = 0; k < 3 * 70; ++k) s += v[static_cast<size_t>(k * 203 + m)];
    want[static_cast<size_t>(m)] = static_cast<float>(s);
  }
  EXPECT_EQ(sum(x, {0, 1}).to_vector<float>(), want) << detail::vec_math_isa();
  const Tensor d = x.to(kFloat64);
  const std::vector<double> dv = d.to_vector<double>();
  std::vector<double> dwant(203);
  for (int64_t m = 0; m < 203; ++m)
    for (int64_t k = 0; k < 3 * 70; ++k) dwant[static_cast<size_t>(m)] += dv[static_cast<size_t>(k * 203 + m)];
  EXPECT_EQ(sum(d, {0, 1}).to_vector<double>(), dwant);
}

// A row's sum (every dim, or the last ones) runs at the chosen SIMD width
// (scripts/test_blas_cores.sh runs this under each) in the order the kernel
// states: eight partial sums, element i into partial i mod 8, added
// ((0+1)+(2+3))+((4+5)+(6+7)); float64 shows the order in its last bits.
TEST(TensorReduce, RowSumsGiveTheEightLaneOrdersBitsAtTheChosenWidth) {
  Generator gen(41);
  auto eight_lanes = [](const std::vector<double>& v, size_t b, size_t n) {
    double acc[8] = {};
    for (size_t i = 0; i < n; ++i) acc[i % 8] += v[b + i];
    return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
  };
  for (int64_t n : {1, 7, 8, 9, 203, 1000}) {
    const Tensor x = randn({5, n}, gen, kFloat64) * 1e3 + 1.0;
    const std::vector<double> v = x.to_vector<double>();
    std::vector<double> want(5);
    for (size_t r = 0; r < 5; ++r) want[r] = eight_lanes(v, r * static_cast<size_t>(n), static_cast<size_t>(n));
    EXPECT_EQ(sum(x, {1}).to_vector<double>(), want) << n << " at " << detail::vec_math_isa();
    EXPECT_EQ(sum(x.reshape({5 * n})).item<double>(), eight_lanes(v, 0, v.size())) << n;
  }
  // a long row: blocks of 8192 in parallel, each in eight lanes, the blocks added in order
  const Tensor big = randn({3 * 8192 + 5}, gen, kFloat64);
  const std::vector<double> bv = big.to_vector<double>();
  double want = 0;
  for (size_t b = 0; b < bv.size(); b += 8192) want += eight_lanes(bv, b, std::min<size_t>(8192, bv.size() - b));
  EXPECT_EQ(sum(big).item<double>(), want);
}

// The same column sweep over leading dims that are not contiguous: a
// gradient broadcast from a smaller shape (stride 0, as the positional
// embedding's is in the composer), a strided slice, a stride-0 dim among
// others, keepdim, and int64; the same bits as the sum of a contiguous copy
// (the order is the same). A kept block that is not contiguous takes the
// general path and gives the same values.
TEST(TensorReduce, SumOverStridedOrBroadcastLeadingDimsIsTheContiguousSum) {
  Generator gen(37);
  const Tensor a = randn({4, 70}, gen), x = randn({6, 4, 70}, gen);
  auto same_as_copy = [](const Tensor& t, const Shape& dims, bool keepdim) {
    const Tensor got = sum(t, dims, keepdim), want = sum(t.contiguous(), dims, keepdim);
    EXPECT_EQ(got.shape(), want.shape());
    EXPECT_EQ(vals(got), vals(want)) << shape_str(t.shape()) << " strides " << shape_str(t.stride());
  };
  const Tensor bcast = a.unsqueeze(0).expand({5, 4, 70});
  same_as_copy(bcast, {0}, false);
  same_as_copy(bcast, {0}, true);
  const std::vector<double> av = vals(a), got = vals(sum(bcast, {0}));
  for (size_t i = 0; i < av.size(); ++i) ASSERT_NEAR(got[i], 5 * av[i], 1e-5 * (1 + std::abs(av[i]))) << i;
  same_as_copy(x.slice(0, 0, 6, 2), {0}, false);             // every other row block
  same_as_copy(x.slice(0, 1, 6, 2), {0, 1}, false);          // two leading dims, the first strided
  same_as_copy(x.unsqueeze(1).expand({6, 3, 4, 70}), {0, 1}, true);  // a stride-0 dim between two others
  same_as_copy(full({}, 0.1).expand({8, 3, 70}), {0}, false);  // one value broadcast everywhere (.sum()'s gradient)
  same_as_copy(full({}, 0.1).expand({8, 3, 70}), {0, 1}, true);
  same_as_copy(randn({9, 1, 1}, gen).expand({9, 3, 70}), {0}, false);  // each row one value
  same_as_copy(x.slice(2, 0, 70, 2), {0}, false);            // the kept block strided: the general path
  same_as_copy(x.transpose(1, 2), {0}, false);               // the kept block transposed: the general path
  const Tensor ints = arange(0, 12, 1, kInt64).reshape({3, 4});
  same_as_copy(ints.unsqueeze(0).expand({7, 3, 4}), {0}, false);
  EXPECT_EQ(vals(sum(ints.unsqueeze(0).expand({7, 3, 4}), {0, 1})), (std::vector<double>{7 * 12, 7 * 15, 7 * 18, 7 * 21}));
  same_as_copy(zeros({0, 4, 70}), {0}, false);               // no rows: zeros
  same_as_copy(bcast.slice(2, 0, 0, 1), {0}, false);         // no columns
}

TEST(TensorReduce, Mean) {
  Tensor x = x234();
  EXPECT_EQ(x.mean().item<double>(), 11.5);
  EXPECT_EQ(mean(x).shape(), Shape{});
  Tensor m1 = x.mean({1});  // 12 i + 4 + k
  EXPECT_EQ(m1.shape(), (Shape{2, 4}));
  EXPECT_EQ(vals(m1), (std::vector<double>{4, 5, 6, 7, 16, 17, 18, 19}));
  Tensor m = mean(x, {0, 2}, true);  // 6 + 4 j + 1.5
  EXPECT_EQ(m.shape(), (Shape{1, 3, 1}));
  EXPECT_EQ(vals(m), (std::vector<double>{7.5, 11.5, 15.5}));
  EXPECT_EQ(tensor({1.f, 2.f}).mean().dtype(), kFloat32);
  EXPECT_FLOAT_EQ(tensor({0.1f, 0.2f, 0.4f}).mean().item<float>(), 0.7f / 3);
  expect_error([] { (void)i64({1, 2}).mean(); }, "mean", {"int64"});
}

TEST(TensorReduce, ZeroSize) {
  EXPECT_EQ(zeros({0}).sum().item<float>(), 0.0f);
  EXPECT_EQ(zeros({0}, kInt64).sum().item<int64_t>(), 0);
  EXPECT_EQ(zeros({2, 0, 3}).sum().item<float>(), 0.0f);
  Tensor a = zeros({0, 3}).sum({0});
  EXPECT_EQ(a.shape(), Shape{3});
  EXPECT_EQ(vals(a), (std::vector<double>{0, 0, 0}));
  Tensor b = ones({2, 0}).sum({1}, true);
  EXPECT_EQ(b.shape(), (Shape{2, 1}));
  EXPECT_EQ(vals(b), (std::vector<double>{0, 0}));
  EXPECT_EQ(ones({0, 3}).sum({1}).shape(), Shape{0});
  EXPECT_TRUE(std::isnan(zeros({0}).mean().item<float>()));  // 0 / 0, like PyTorch
}

TEST(TensorReduce, DimErrors) {
  Tensor x = zeros({2, 3});
  expect_error([&] { (void)x.sum({2}); }, "sum", {"dim 2"});
  expect_error([&] { (void)x.sum({-3}); }, "sum", {"dim -3"});
  expect_error([&] { (void)x.t().sum({0, 0}); }, "sum", {"dim 0", "twice"});
  expect_error([&] { (void)x.mean({5}); }, "mean", {"dim 5"});
  expect_error([&] { (void)var(x, {2}); }, "var", {"dim 2"});
  expect_error([&] { (void)softmax(x, 2); }, "softmax", {"dim 2"});
  expect_error([&] { (void)max(x, 2); }, "max", {"dim 2"});
  expect_error([] { (void)zeros({2}, kBool).sum(); }, "sum", {"bool"});
}

// ---- max / min / argmax ----

TEST(TensorReduce, MaxMinValuesAndIndices) {
  Tensor x = f64({3, 1, 3, 2,  //
                  0, 5, 5, -1},
                 {2, 4});
  auto [mx1, ix1] = max(x, 1);
  EXPECT_EQ(mx1.shape(), Shape{2});
  EXPECT_EQ(ix1.dtype(), kInt64);
  EXPECT_EQ(vals(mx1), (std::vector<double>{3, 5}));
  EXPECT_EQ(ints(ix1), (std::vector<int64_t>{0, 1}));  // ties: the first one
  auto [mn1, in1] = min(x, -1, true);
  EXPECT_EQ(mn1.shape(), (Shape{2, 1}));
  EXPECT_EQ(in1.shape(), (Shape{2, 1}));
  EXPECT_EQ(vals(mn1), (std::vector<double>{1, -1}));
  EXPECT_EQ(ints(in1), (std::vector<int64_t>{1, 3}));
  auto [mx0, ix0] = max(x, 0);
  EXPECT_EQ(vals(mx0), (std::vector<double>{3, 5, 5, 2}));
  EXPECT_EQ(ints(ix0), (std::vector<int64_t>{0, 1, 1, 0}));
  auto [mn0, in0] = min(x, 0);
  EXPECT_EQ(vals(mn0), (std::vector<double>{0, 1, 3, -1}));
  EXPECT_EQ(ints(in0), (std::vector<int64_t>{1, 0, 0, 1}));
  EXPECT_EQ(max(x).item<double>(), 5);
  EXPECT_EQ(max(x).shape(), Shape{});
  EXPECT_EQ(min(x).item<double>(), -1);
  auto [tv, ti] = min(f64({2, 1, 1, 4}), 0);
  EXPECT_EQ(ti.item<int64_t>(), 1);
  EXPECT_EQ(tv.item<double>(), 1);
}

TEST(TensorReduce, MaxOfStridedAndInt) {
  Tensor x = x234();
  auto [v, i] = max(x.transpose(0, 2), 2);  // (4, 3): max over the old dim 0 -> i = 1
  EXPECT_EQ(v.shape(), (Shape{4, 3}));
  EXPECT_EQ(vals(v), vals(x.select(0, 1).t()));
  EXPECT_EQ(ints(i), std::vector<int64_t>(12, 1));
  auto [iv, ii] = max(i64({-5, 7, 7, 2}), 0);
  EXPECT_EQ(iv.dtype(), kInt64);
  EXPECT_EQ(iv.item<int64_t>(), 7);
  EXPECT_EQ(ii.item<int64_t>(), 1);
  EXPECT_EQ(max(f64({-kInf, -1e30}).to(kFloat32)).item<float>(), -1e30f);
}

TEST(TensorReduce, Argmax) {
  Tensor x = f64({3, 1, 3, 2, 0, 5, 5, -1}, {2, 4});
  Tensor a = argmax(x);
  EXPECT_EQ(a.dtype(), kInt64);
  EXPECT_EQ(a.shape(), Shape{});
  EXPECT_EQ(a.item<int64_t>(), 5);  // the first 5 in row-major order
  EXPECT_EQ(ints(argmax(x, 1)), (std::vector<int64_t>{0, 1}));
  Tensor k = argmax(x, 0, true);
  EXPECT_EQ(k.shape(), (Shape{1, 4}));
  EXPECT_EQ(ints(k), (std::vector<int64_t>{0, 1, 1, 0}));
  EXPECT_EQ(argmax(x.t()).item<int64_t>(), 3);  // x.t() flattened: 3 0 1 5 3 5 2 -1
  EXPECT_EQ(ints(argmax(x, -2)), (std::vector<int64_t>{0, 1, 1, 0}));
}

TEST(TensorReduce, ExtremesOfEmptyDimThrow) {
  Tensor e = zeros({0, 3});
  expect_error([&] { (void)max(e, 0); }, "max", {"size 0", "(0, 3)"});
  expect_error([&] { (void)min(e, -2); }, "min", {"(0, 3)"});
  expect_error([&] { (void)argmax(e, 0); }, "argmax", {"(0, 3)"});
  expect_error([] { (void)argmax(zeros({0})); }, "argmax", {"(0)"});
  expect_error([] { (void)max(zeros({0})); }, "", {"(0)"});
  // a zero-size kept dim is fine: nothing to reduce over, nothing to return
  EXPECT_EQ(max(e, 1).first.shape(), Shape{0});
}

// ---- var / norm ----

TEST(TensorReduce, Var) {
  Tensor x = f64({1, 2, 3, 4});
  EXPECT_DOUBLE_EQ(var(x).item<double>(), 5.0 / 3);     // sample variance
  EXPECT_DOUBLE_EQ(var(x, {}, 0).item<double>(), 1.25);  // population variance
  Tensor y = f64({1, 2, 3, 2, 4, 9}, {2, 3});
  expect_near(vals(var(y, {1})), {1, 13}, 1e-14);
  expect_near(vals(var(y, {1}, 0)), {2.0 / 3, 26.0 / 3}, 1e-14);
  Tensor v0 = var(y, {0}, 1, true);
  EXPECT_EQ(v0.shape(), (Shape{1, 3}));
  expect_near(vals(v0), {0.5, 2, 18}, 1e-14);
  // stable: a large offset does not destroy the variance
  expect_near(vals(var(f64({1e9 + 1, 1e9 + 2, 1e9 + 3}))), {1.0}, 1e-12);
  EXPECT_TRUE(std::isnan(var(f64({3.0})).item<double>()));  // N - 1 = 0
  EXPECT_FLOAT_EQ(var(tensor({1.f, 2.f, 3.f, 4.f})).item<float>(), 5.0f / 3);
}

TEST(TensorReduce, Norm) {
  EXPECT_DOUBLE_EQ(norm(f64({3, 4})).item<double>(), 5.0);
  EXPECT_DOUBLE_EQ(norm(f64({-1, 2, -3}), 1).item<double>(), 6.0);
  EXPECT_DOUBLE_EQ(norm(f64({1, 2}), 3).item<double>(), std::cbrt(9.0));
  Tensor m = f64({3, 4, 6, -8}, {2, 2});
  expect_near(vals(norm(m, 2, {1})), {5, 10}, 1e-15);
  Tensor k = norm(m, 1, {0}, true);
  EXPECT_EQ(k.shape(), (Shape{1, 2}));
  expect_near(vals(k), {9, 12}, 1e-15);
  EXPECT_DOUBLE_EQ(norm(m).item<double>(), std::sqrt(9 + 16 + 36 + 64.0));
  EXPECT_FLOAT_EQ(norm(tensor({3.f, 4.f})).item<float>(), 5.f);
  expect_error([&] { (void)norm(m, 0); }, "norm", {"p", "0"});
  expect_error([] { (void)norm(i64({1})); }, "norm", {"int64"});
}

// ---- softmax / log_softmax ----

TEST(TensorReduce, SoftmaxClosedForm) {
  Tensor x = f64({1, 2, 3});
  const double z = std::exp(1.0) + std::exp(2.0) + std::exp(3.0);
  expect_near(vals(softmax(x, 0)), {std::exp(1.0) / z, std::exp(2.0) / z, std::exp(3.0) / z}, 1e-15);
  expect_near(vals(log_softmax(x, 0)), {1 - std::log(z), 2 - std::log(z), 3 - std::log(z)}, 1e-15);
  expect_near(vals(x.softmax(-1)), vals(softmax(x, 0)), 0);
  // lesson C: the scores 2 and 1 -> the weights 0.731 and 0.269; the values 10 and 4 -> the context 8.386
  Tensor w = softmax(f64({2, 1}), 0);
  expect_near(vals(w), {1 / (1 + std::exp(-1.0)), 1 / (1 + std::exp(1.0))}, 1e-15);
  EXPECT_NEAR((w * f64({10, 4})).sum().item<double>(), 8.386, 5e-4);
}

TEST(TensorReduce, SoftmaxAlongEachDim) {
  Generator g(4);
  Tensor x = randn({3, 4, 5}, g, kFloat64);
  std::vector<double> xv = vals(x);
  for (int64_t d = 0; d < 3; ++d) {
    SCOPED_TRACE(d);
    Tensor s = softmax(x, d), ls = log_softmax(x, d);
    EXPECT_EQ(s.shape(), x.shape());
    expect_near(vals(s.sum({d})), std::vector<double>(numel_of(x.shape()) / x.size(d), 1.0), 1e-15);
    // closed form against a reference loop
    std::vector<double> sv = vals(s), lv = vals(ls);
    const Shape st = contiguous_strides(x.shape());
    for (int64_t i = 0; i < 60; ++i) {
      int64_t pos = (i / st[d]) % x.size(d), base = i - pos * st[d];
      double z = 0;
      for (int64_t k = 0; k < x.size(d); ++k) z += std::exp(xv[base + k * st[d]]);
      EXPECT_NEAR(sv[i], std::exp(xv[i]) / z, 1e-15);
      EXPECT_NEAR(lv[i], xv[i] - std::log(z), 1e-14);
    }
  }
  // a transposed input gives the transposed result
  expect_near(vals(softmax(x.transpose(0, 2), 0)), vals(softmax(x, 2).transpose(0, 2)), 0);
}

TEST(TensorReduce, SoftmaxIsStableAtLargeInputs) {
  for (DType dt : {kFloat32, kFloat64}) {
    SCOPED_TRACE(dtype_name(dt));
    EXPECT_EQ(vals(softmax(f64({1e4, 0}).to(dt), 0)), (std::vector<double>{1, 0}));
    EXPECT_EQ(vals(softmax(f64({-1e4, -1e4}).to(dt), 0)), (std::vector<double>{0.5, 0.5}));
    EXPECT_EQ(vals(log_softmax(f64({1e4, -1e4}).to(dt), 0)), (std::vector<double>{0, -2e4}));
    std::vector<double> ls = vals(log_softmax(f64({-1e4, -1e4}).to(dt), 0));
    EXPECT_NEAR(ls[0], -std::log(2.0), 1e-6);
    EXPECT_EQ(ls[0], ls[1]);
    Tensor big = f64({1e4, 1e4 - 1, -1e4, 3e4, -3e4}, {1, 5}).to(dt);
    for (double v : vals(softmax(big, 1))) EXPECT_TRUE(std::isfinite(v));
    for (double v : vals(log_softmax(big, 1))) EXPECT_TRUE(std::isfinite(v));
  }
}

TEST(TensorReduce, SoftmaxWithMaskedEntries) {
  Tensor future = gt(triu(ones({3, 3}, kFloat64), 1), 0.0);
  Tensor w = softmax(masked_fill(zeros({3, 3}, kFloat64), future, -kInf), 1);
  expect_near(vals(w), {1, 0, 0, 0.5, 0.5, 0, 1.0 / 3, 1.0 / 3, 1.0 / 3}, 1e-15);
  std::vector<double> l = vals(log_softmax(f64({0, -kInf}), 0));
  EXPECT_EQ(l[0], 0.0);
  EXPECT_EQ(l[1], -kInf);
}

TEST(TensorReduce, SoftmaxErrors) {
  expect_error([] { (void)softmax(i64({1, 2}), 0); }, "softmax", {"int64"});
  expect_error([] { (void)log_softmax(zeros({2}), 1); }, "log_softmax", {"dim 1"});
}

}  // namespace
