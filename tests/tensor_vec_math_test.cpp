// float32 exp and erf at this CPU's SIMD width (or the one EMBER_SIMD asks
// for: scripts/test_blas_cores.sh runs these under each), against the C
// library in double precision, and the ops built on them.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "ember.h"
#include "tensor/kernels.h"
#include "tensor/machine/vec_math.h"
#include "test_util.h"

namespace {

using namespace ember;

std::vector<float> sweep(float lo, float hi, float step) {
  std::vector<float> x;
  for (float v = lo; v <= hi; v += step) x.push_back(v);
  return x;
}

TEST(VecMath, ExpIsWithinTwoUlpOfTheExactValue) {
  SCOPED_TRACE(detail::vec_math_isa());
  std::vector<float> x = sweep(-87.0f, 88.0f, 0.0137f);
  for (float v : {0.0f, -0.0f, 1e-30f, -1e-30f, 88.7f, -87.3f}) x.push_back(v);
  std::vector<float> y(x.size());
  detail::exp_f32(x.data(), y.data(), static_cast<int64_t>(x.size()));
  double worst = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double want = std::exp(static_cast<double>(x[i]));
    worst = std::max(worst, std::abs(y[i] - want) / want);
  }
  EXPECT_LT(worst, 2.4e-7);  // two float32 ULPs (2^-23 each, relative)
}

TEST(VecMath, ExpLimitsAndNaN) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> x = {-inf, inf, nan, -200.0f, 200.0f, 0.0f}, y(x.size());
  detail::exp_f32(x.data(), y.data(), 6);
  EXPECT_EQ(y[0], 0.0f);
  EXPECT_EQ(y[1], inf);
  EXPECT_TRUE(std::isnan(y[2]));
  EXPECT_EQ(y[3], 0.0f);
  EXPECT_EQ(y[4], inf);
  EXPECT_EQ(y[5], 1.0f);
}

TEST(VecMath, ErfIsWithinItsStatedBound) {
  SCOPED_TRACE(detail::vec_math_isa());
  std::vector<float> x = sweep(-9.0f, 9.0f, 0.00071f);
  std::vector<float> y(x.size());
  detail::erf_f32(x.data(), y.data(), static_cast<int64_t>(x.size()));
  double worst = 0, worst_rel_near_0 = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double want = std::erf(static_cast<double>(x[i]));
    worst = std::max(worst, std::abs(y[i] - want));
    if (std::abs(x[i]) < 0.5f && want != 0) worst_rel_near_0 = std::max(worst_rel_near_0, std::abs(y[i] - want) / std::abs(want));
  }
  EXPECT_LT(worst, 3e-7);  // the formula's 1.5e-7 plus float32 rounding
  EXPECT_LT(worst_rel_near_0, 3e-7);  // the series: relative, however small x is
  std::vector<float> tiny = {1e-4f, -3e-20f}, te(2);
  detail::erf_f32(tiny.data(), te.data(), 2);
  EXPECT_NEAR(te[0], std::erf(1e-4), 1e-7 * 1.2e-4);
  EXPECT_NEAR(te[1], std::erf(-3e-20), 1e-7 * 3.4e-20);
  // odd, and +-1 far out
  std::vector<float> s = {0.3f, -0.3f, 30.0f, -30.0f}, e(4);
  detail::erf_f32(s.data(), e.data(), 4);
  EXPECT_EQ(e[0], -e[1]);
  EXPECT_EQ(e[2], 1.0f);
  EXPECT_EQ(e[3], -1.0f);
}

TEST(VecMath, ErfLimitsAndNaN) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> x = {-inf, inf, nan}, y(3);
  detail::erf_f32(x.data(), y.data(), 3);
  EXPECT_EQ(y[0], -1.0f);
  EXPECT_EQ(y[1], 1.0f);
  EXPECT_TRUE(std::isnan(y[2]));
}

TEST(VecMath, TanhIsWithinTwoUlpAndSaturates) {
  SCOPED_TRACE(detail::vec_math_isa());
  std::vector<float> x = sweep(-12.0f, 12.0f, 0.00113f);
  for (float v : {0.0f, -0.0f, 1e-30f, -1e-30f, 1e-4f, 20.0f, -20.0f, 100.0f}) x.push_back(v);
  std::vector<float> y(x.size());
  detail::tanh_f32(x.data(), y.data(), static_cast<int64_t>(x.size()));
  double worst = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double want = std::tanh(static_cast<double>(x[i]));
    if (want != 0) worst = std::max(worst, std::abs(y[i] - want) / std::abs(want));
    else EXPECT_EQ(y[i], 0.0f) << x[i];
  }
  EXPECT_LT(worst, 2.4e-7);  // relative, however small x is
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> lim = {-inf, inf, nan, 0.5f, -0.5f}, t(5);
  detail::tanh_f32(lim.data(), t.data(), 5);
  EXPECT_EQ(t[0], -1.0f);
  EXPECT_EQ(t[1], 1.0f);
  EXPECT_TRUE(std::isnan(t[2]));
  EXPECT_EQ(t[3], -t[4]);  // odd
}

// The one-pass GELU kernels (both forms, forward and backward) against their
// formulas in double, over the range where they bend and far out, with NaN
// and the infinities.
TEST(VecMath, GeluKernelsAgreeWithTheirFormulasInDouble) {
  SCOPED_TRACE(detail::vec_math_isa());
  std::vector<float> x = sweep(-10.0f, 10.0f, 0.00731f);
  std::vector<float> g(x.size());
  for (size_t i = 0; i < x.size(); ++i) g[i] = 1.0f + 0.25f * static_cast<float>(i % 7) - 0.75f;
  const size_t n = x.size();
  std::vector<float> f(n), fb(n), t(n), tb(n);
  detail::gelu_f32(x.data(), f.data(), static_cast<int64_t>(n));
  detail::gelu_backward_f32(x.data(), g.data(), fb.data(), static_cast<int64_t>(n));
  detail::gelu_tanh_f32(x.data(), t.data(), static_cast<int64_t>(n));
  detail::gelu_tanh_backward_f32(x.data(), g.data(), tb.data(), static_cast<int64_t>(n));
  const double k = std::sqrt(2.0 / M_PI);
  for (size_t i = 0; i < n; ++i) {
    const double v = x[i], gv = g[i];
    const double cdf = 0.5 * (1 + std::erf(v / std::sqrt(2.0))), pdf = std::exp(-0.5 * v * v) / std::sqrt(2 * M_PI);
    const double th = std::tanh(k * (v + 0.044715 * v * v * v));
    ASSERT_NEAR(f[i], v * cdf, 3e-7 * (1 + std::abs(v))) << v;
    ASSERT_NEAR(fb[i], gv * (cdf + v * pdf), 1e-6 * (1 + std::abs(gv))) << v;
    ASSERT_NEAR(t[i], 0.5 * v * (1 + th), 3e-7 * (1 + std::abs(v))) << v;
    ASSERT_NEAR(tb[i], gv * (0.5 * (1 + th) + 0.5 * v * (1 - th * th) * k * (1 + 3 * 0.044715 * v * v)),
                1e-6 * (1 + std::abs(gv)))
        << v;
  }
}

// At the infinities and NaN, both forms forward and backward, float32 and
// float64, give what PyTorch 1.13's gelu gives (printed by
// torch.nn.functional.gelu on [inf, -inf, nan] and its backward of ones):
// gelu(inf) = inf; gelu(-inf) = -inf * 0 = NaN; every backward NaN (inf * 0
// in its second term).
TEST(VecMath, GeluAtTheInfinitiesIsPyTorchs) {
  SCOPED_TRACE(detail::vec_math_isa());
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  for (DType dt : {kFloat32, kFloat64}) {
    SCOPED_TRACE(dtype_name(dt));
    const Tensor x = kernel::to(tensor({inf, -inf, nan}, kFloat64), dt), ones = kernel::to(ember::ones({3}), dt);
    for (kernel::Unary form : {kernel::Unary::Gelu, kernel::Unary::GeluTanh}) {
      const std::vector<double> y = kernel::to(kernel::unary(form, x), kFloat64).to_vector<double>();
      EXPECT_EQ(y[0], inf);
      EXPECT_TRUE(std::isnan(y[1])) << y[1];
      EXPECT_TRUE(std::isnan(y[2])) << y[2];
      const Tensor gx = form == kernel::Unary::Gelu ? kernel::gelu_backward(x, ones) : kernel::gelu_tanh_backward(x, ones);
      for (double v : kernel::to(gx, kFloat64).to_vector<double>()) EXPECT_TRUE(std::isnan(v)) << v;
    }
  }
}

// The kernels' errors name the form, the dtypes and the shapes.
TEST(VecMath, GeluBackwardErrorsNameTheForm) {
  const Tensor x = zeros({2, 3}), g = zeros({3, 2});
  test::expect_error([&] { kernel::gelu_backward(x, g); }, "gelu backward", {"float32 (2, 3)", "float32 (3, 2)"});
  test::expect_error([&] { kernel::gelu_tanh_backward(x, kernel::to(x, kFloat64)); }, "gelu (tanh form) backward",
                     {"float32 (2, 3)", "float64 (2, 3)"});
}

TEST(VecMath, InPlaceAndEveryTailLength) {
  // Lengths around the vector widths (4, 8, 16) and the 256-float chunks.
  for (int64_t n : {0, 1, 3, 4, 5, 7, 8, 9, 15, 16, 17, 255, 256, 257, 1000}) {
    std::vector<float> x(static_cast<size_t>(n)), a(x.size()), b;
    for (int64_t i = 0; i < n; ++i) x[i] = 0.01f * static_cast<float>(i) - 3.0f;
    detail::exp_f32(x.data(), a.data(), n);
    b = x;
    detail::exp_f32(b.data(), b.data(), n);
    EXPECT_EQ(a, b) << n;
    for (int64_t i = 0; i < n; ++i) ASSERT_NEAR(a[i], std::exp(double(x[i])), 3e-7 * std::exp(double(x[i]))) << n;
    detail::erf_f32(x.data(), a.data(), n);
    for (int64_t i = 0; i < n; ++i) ASSERT_NEAR(a[i], std::erf(double(x[i])), 3e-7) << n;
    detail::tanh_f32(x.data(), a.data(), n);
    for (int64_t i = 0; i < n; ++i) ASSERT_NEAR(a[i], std::tanh(double(x[i])), 3e-7) << n;
    // GELU in place: the output over its input, and the backward's over its gradient
    detail::gelu_f32(x.data(), a.data(), n);
    b = x;
    detail::gelu_f32(b.data(), b.data(), n);
    EXPECT_EQ(a, b) << n;
    std::vector<float> g(x.size(), 0.5f), c = g;
    detail::gelu_tanh_backward_f32(x.data(), g.data(), a.data(), n);
    detail::gelu_tanh_backward_f32(x.data(), c.data(), c.data(), n);
    EXPECT_EQ(a, c) << n;
    c = g;
    detail::gelu_backward_f32(x.data(), g.data(), a.data(), n);
    detail::gelu_backward_f32(x.data(), c.data(), c.data(), n);
    EXPECT_EQ(a, c) << n;
  }
}

// The float32 ops on them against the same ops in float64.
TEST(VecMath, Float32OpsAgreeWithFloat64) {
  Generator g(5);
  Tensor x64 = randn({3000}, g, kFloat64) * 3.0;
  Tensor x32 = x64.to(kFloat32);
  Tensor xs = x32.to(kFloat64);  // the float32 inputs, exactly
  auto close = [](const Tensor& a32, const Tensor& b64, double rel, double abs) {
    std::vector<double> a = test::vals(a32), b = test::vals(b64);
    for (size_t i = 0; i < a.size(); ++i) ASSERT_NEAR(a[i], b[i], abs + rel * std::abs(b[i])) << i;
  };
  close(exp(x32), exp(xs), 3e-7, 0);
  close(erf(x32), erf(xs), 3e-7, 3e-7);
  close(gelu(x32), gelu(xs), 3e-7, 1e-6);
  close(gelu(x32, GeluApprox::Tanh), gelu(xs, GeluApprox::Tanh), 3e-7, 1e-6);
  close(tanh(x32), tanh(xs), 3e-7, 1e-7);
  Tensor g64 = randn({3000}, g, kFloat64), g32 = g64.to(kFloat32), gs = g32.to(kFloat64);
  close(kernel::gelu_backward(x32, g32), kernel::gelu_backward(xs, gs), 1e-6, 1e-6);
  // below x = -4 the tanh form's derivative is two terms near 1e-6 that cancel,
  // each rounded to float32 relative to 1 (1 + t with t near -1)
  close(kernel::gelu_tanh_backward(x32, g32), kernel::gelu_tanh_backward(xs, gs), 1e-6, 4e-6);
  close(sigmoid(x32), sigmoid(xs), 3e-7, 1e-7);
  close(softmax(x32.reshape({30, 100}), 1), softmax(xs.reshape({30, 100}), 1), 1e-6, 1e-9);
  close(log_softmax(x32.reshape({30, 100}), 1), log_softmax(xs.reshape({30, 100}), 1), 1e-6, 2e-6);
  // strided input: copied, then the same
  close(exp(x32.reshape({60, 50}).t()), exp(xs.reshape({60, 50}).t()), 3e-7, 0);
}

TEST(VecMath, GeluBackwardMatchesTheComposedFormula) {
  // the one-pass kernel against Phi(x) + x phi(x) written with ember ops, float64
  Generator g(8);
  Tensor x = randn({257, 33}, g, kFloat64) * 2.0, gr = randn({257, 33}, g, kFloat64);
  Tensor fused = kernel::gelu_backward(x, gr);
  Tensor cdf = 0.5 * (1.0 + erf(x * (std::sqrt(2.0) / 2))), pdf = exp(-0.5 * x * x) / std::sqrt(2 * M_PI);
  Tensor composed = gr * (cdf + x * pdf);
  std::vector<double> a = test::vals(fused), b = test::vals(composed);
  for (size_t i = 0; i < a.size(); ++i) ASSERT_NEAR(a[i], b[i], 1e-14) << i;
  Tensor f32 = kernel::gelu_backward(x.to(kFloat32), gr.to(kFloat32));
  std::vector<double> c = test::vals(f32);
  for (size_t i = 0; i < c.size(); ++i) ASSERT_NEAR(c[i], b[i], 2e-6 * (1 + std::abs(b[i]))) << i;
  EXPECT_THROW(kernel::gelu_backward(x, gr.reshape({33, 257})), Error);
}

}  // namespace
