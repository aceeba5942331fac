// Elementwise ops: broadcasting (against an independent reference rule),
// every op against its closed form in float32 and float64, strided inputs,
// dtype errors and in-place updates.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <numbers>
#include <string>
#include <vector>

#include "ember.h"
#include "test_util.h"

namespace {

using namespace ember;
using namespace ember::test;

std::vector<bool> bools(const Tensor& t) { return t.to_vector<bool>(); }
const double kInf = std::numeric_limits<double>::infinity();

// A float64 tensor of any shape (including 0-d) filled with f(flat index).
Tensor make(const Shape& s, const std::function<double(int64_t)>& f) {
  std::vector<double> v(static_cast<size_t>(numel_of(s)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = f(static_cast<int64_t>(i));
  if (s.empty()) return scalar_tensor(v[0], kFloat64);
  return tensor(v, s);
}

// ---- broadcasting ----

// Reference rule, written independently of ember: right-align, sizes must be
// equal or one of them 1; the result takes the non-1 size.
bool ref_broadcast(const Shape& a, const Shape& b, Shape& out) {
  size_t n = std::max(a.size(), b.size());
  out.assign(n, 0);
  for (size_t k = 0; k < n; ++k) {  // k counts from the right
    int64_t da = k < a.size() ? a[a.size() - 1 - k] : 1;
    int64_t db = k < b.size() ? b[b.size() - 1 - k] : 1;
    if (da != db && da != 1 && db != 1) return false;
    out[n - 1 - k] = da == 1 ? db : da;
  }
  return true;
}

// Flat index into `s` of the element that out-index `idx` (of shape `out`) reads.
int64_t source_index(const Shape& s, const Shape& out, const Shape& idx) {
  int64_t flat = 0;
  size_t lead = out.size() - s.size();
  for (size_t d = 0; d < s.size(); ++d) flat = flat * s[d] + (s[d] == 1 ? 0 : idx[lead + d]);
  return flat;
}

TEST(TensorBroadcast, TableAgainstReferenceLoop) {
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{3, 1}, {1, 4}},    {{2, 3}, {3}},          {{}, {2, 2}},     {{2, 2}, {}},      {{}, {}},
      {{0, 3}, {1, 3}},    {{5, 1, 4}, {3, 1}},    {{2, 1}, {0}},    {{1}, {}},         {{4}, {3, 1}},
      {{2, 3, 1, 5}, {3, 4, 1}}, {{1, 1}, {1}},    {{3, 0}, {3, 1}}, {{0}, {1}},        {{2, 3}, {2, 3}},
      {{1, 2, 1}, {2, 1, 2}},    {{6}, {1}},       {{1, 0}, {5, 1}},
  };
  for (const auto& [sa, sb] : cases) {
    SCOPED_TRACE(shape_str(sa) + " + " + shape_str(sb));
    Shape expected;
    ASSERT_TRUE(ref_broadcast(sa, sb, expected));
    Tensor a = make(sa, [](int64_t i) { return 1 + 0.5 * static_cast<double>(i); });
    Tensor b = make(sb, [](int64_t i) { return 100.0 * static_cast<double>(i + 1); });
    Tensor sum = a + b, prod = a * b, diff = b - a;
    ASSERT_EQ(sum.shape(), expected);
    ASSERT_EQ(prod.shape(), expected);
    ASSERT_EQ(diff.shape(), expected);
    std::vector<double> av = vals(a), bv = vals(b), s = vals(sum), p = vals(prod), df = vals(diff);
    const int64_t n = numel_of(expected);
    ASSERT_EQ(static_cast<int64_t>(s.size()), n);
    Shape idx(expected.size(), 0);
    for (int64_t i = 0; i < n; ++i) {
      double x = av[source_index(sa, expected, idx)], y = bv[source_index(sb, expected, idx)];
      EXPECT_EQ(s[i], x + y) << "at " << shape_str(idx);
      EXPECT_EQ(p[i], x * y) << "at " << shape_str(idx);
      EXPECT_EQ(df[i], y - x) << "at " << shape_str(idx);
      for (int64_t d = static_cast<int64_t>(idx.size()) - 1; d >= 0; --d) {
        if (++idx[d] < expected[d]) break;
        idx[d] = 0;
      }
    }
  }
}

TEST(TensorBroadcast, MismatchThrowsNamingBothShapesAndTheDim) {
  const std::vector<std::pair<Shape, Shape>> bad = {{{2, 3}, {4}}, {{2, 3}, {3, 2}}, {{0}, {2}}, {{5, 1, 4}, {3, 2}}};
  for (const auto& [sa, sb] : bad) {
    Shape dummy;
    ASSERT_FALSE(ref_broadcast(sa, sb, dummy));
    Tensor a = zeros(sa), b = zeros(sb);
    expect_error([&] { (void)(a + b); }, "add", {shape_str(sa), shape_str(sb), "dim"});
  }
  Tensor a = zeros({2, 3}), b = zeros({4});
  expect_error([&] { (void)(a * b); }, "mul", {"(2, 3)", "(4)", "dim"});
  expect_error([&] { (void)maximum(a, b); }, "maximum", {"(2, 3)", "(4)"});
  expect_error([&] { (void)lt(a, b); }, "lt", {"(2, 3)", "(4)"});
}

// ---- closed forms, float32 and float64 ----

struct UnaryCase {
  const char* name;
  std::function<Tensor(const Tensor&)> op;
  std::function<double(double)> ref;
  std::vector<double> xs;
};

const std::vector<double> kAll = {-3.5, -1.0, -0.3, 0.0, 0.2, 0.7, 1.0, 2.5};
const std::vector<double> kPos = {0.01, 0.3, 1.0, 2.0, 7.5};

std::vector<UnaryCase> unary_cases() {
  const double s2pi = std::sqrt(2.0 / std::numbers::pi);
  return {
      {"neg", [](const Tensor& x) { return neg(x); }, [](double v) { return -v; }, kAll},
      {"unary minus", [](const Tensor& x) { return -x; }, [](double v) { return -v; }, kAll},
      {"exp", [](const Tensor& x) { return exp(x); }, [](double v) { return std::exp(v); }, kAll},
      {"log", [](const Tensor& x) { return log(x); }, [](double v) { return std::log(v); }, kPos},
      {"sqrt", [](const Tensor& x) { return sqrt(x); }, [](double v) { return std::sqrt(v); }, kPos},
      {"rsqrt", [](const Tensor& x) { return rsqrt(x); }, [](double v) { return 1 / std::sqrt(v); }, kPos},
      {"abs", [](const Tensor& x) { return abs(x); }, [](double v) { return std::fabs(v); }, kAll},
      {"sin", [](const Tensor& x) { return sin(x); }, [](double v) { return std::sin(v); }, kAll},
      {"cos", [](const Tensor& x) { return cos(x); }, [](double v) { return std::cos(v); }, kAll},
      {"tanh", [](const Tensor& x) { return tanh(x); }, [](double v) { return std::tanh(v); }, kAll},
      {"sigmoid", [](const Tensor& x) { return sigmoid(x); }, [](double v) { return 1 / (1 + std::exp(-v)); }, kAll},
      {"relu", [](const Tensor& x) { return relu(x); }, [](double v) { return v > 0 ? v : 0.0; }, kAll},
      {"gelu", [](const Tensor& x) { return gelu(x); },
       [](double v) { return v * 0.5 * (1 + std::erf(v / std::sqrt(2.0))); }, kAll},
      {"gelu tanh", [](const Tensor& x) { return gelu(x, GeluApprox::Tanh); },
       [s2pi](double v) { return 0.5 * v * (1 + std::tanh(s2pi * (v + 0.044715 * v * v * v))); }, kAll},
      {"pow 2", [](const Tensor& x) { return pow(x, 2.0); }, [](double v) { return v * v; }, kAll},
      {"pow 3", [](const Tensor& x) { return pow(x, 3.0); }, [](double v) { return v * v * v; }, kAll},
      {"pow 0.5", [](const Tensor& x) { return pow(x, 0.5); }, [](double v) { return std::sqrt(v); }, kPos},
      {"pow -1", [](const Tensor& x) { return x.pow(-1.0); }, [](double v) { return 1 / v; }, kPos},
      {"pow -1.5", [](const Tensor& x) { return pow(x, -1.5); }, [](double v) { return std::pow(v, -1.5); }, kPos},
      {"x + 2", [](const Tensor& x) { return x + 2.0; }, [](double v) { return v + 2; }, kAll},
      {"2 + x", [](const Tensor& x) { return 2.0 + x; }, [](double v) { return 2 + v; }, kAll},
      {"x - 2", [](const Tensor& x) { return x - 2.0; }, [](double v) { return v - 2; }, kAll},
      {"2 - x", [](const Tensor& x) { return 2.0 - x; }, [](double v) { return 2 - v; }, kAll},
      {"x * 3", [](const Tensor& x) { return x * 3.0; }, [](double v) { return v * 3; }, kAll},
      {"3 * x", [](const Tensor& x) { return 3.0 * x; }, [](double v) { return 3 * v; }, kAll},
      {"x / 4", [](const Tensor& x) { return x / 4.0; }, [](double v) { return v / 4; }, kAll},
      {"4 / x", [](const Tensor& x) { return 4.0 / x; }, [](double v) { return 4 / v; }, kPos},
      {"clamp", [](const Tensor& x) { return clamp(x, -1.0, 0.5); },
       [](double v) { return std::min(std::max(v, -1.0), 0.5); }, kAll},
      {"clamp lo", [](const Tensor& x) { return clamp(x, 0.1, std::nullopt); },
       [](double v) { return std::max(v, 0.1); }, kAll},
      {"clamp hi", [](const Tensor& x) { return clamp(x, std::nullopt, -0.5); },
       [](double v) { return std::min(v, -0.5); }, kAll},
  };
}

TEST(TensorElementwise, UnaryClosedFormsFloat64) {
  for (const auto& c : unary_cases()) {
    SCOPED_TRACE(c.name);
    Tensor x = f64(c.xs, {static_cast<int64_t>(c.xs.size())});
    Tensor y = c.op(x);
    ASSERT_EQ(y.dtype(), kFloat64);
    ASSERT_EQ(y.shape(), x.shape());
    std::vector<double> got = vals(y);
    for (size_t i = 0; i < c.xs.size(); ++i) {
      double r = c.ref(c.xs[i]);
      EXPECT_NEAR(got[i], r, 1e-15 * std::max(1.0, std::fabs(r))) << "x = " << c.xs[i];
    }
  }
}

TEST(TensorElementwise, UnaryClosedFormsFloat32) {
  for (const auto& c : unary_cases()) {
    SCOPED_TRACE(c.name);
    std::vector<float> xf(c.xs.begin(), c.xs.end());
    Tensor x = tensor(xf, {static_cast<int64_t>(xf.size())});
    Tensor y = c.op(x);
    ASSERT_EQ(y.dtype(), kFloat32);
    std::vector<float> got = y.to_vector<float>();
    for (size_t i = 0; i < xf.size(); ++i) {
      double r = c.ref(static_cast<double>(xf[i]));  // exact math on the float input
      EXPECT_NEAR(got[i], r, 3e-7 * std::max(1.0, std::fabs(r))) << "x = " << xf[i];
    }
  }
}

TEST(TensorElementwise, SpecialValues) {
  Tensor x = f64({0.0, -1.0});
  std::vector<double> l = vals(log(x));
  EXPECT_EQ(l[0], -kInf);
  EXPECT_TRUE(std::isnan(l[1]));
  EXPECT_TRUE(std::isnan(vals(sqrt(f64({-4.0})))[0]));
  EXPECT_EQ(vals(rsqrt(f64({0.0})))[0], kInf);
  // sigmoid must not overflow at large |x|
  EXPECT_EQ(vals(sigmoid(f64({-1000.0, 1000.0}))), (std::vector<double>{0.0, 1.0}));
  EXPECT_EQ(vals(sigmoid(tensor({-200.f, 200.f}))), (std::vector<double>{0.0, 1.0}));
  EXPECT_EQ(vals(tanh(f64({-50.0, 50.0}))), (std::vector<double>{-1.0, 1.0}));
  EXPECT_EQ(vals(exp(f64({-1000.0, 1000.0}))), (std::vector<double>{0.0, kInf}));
  // gelu tails: ~0 far left, ~x far right
  EXPECT_EQ(vals(gelu(f64({-40.0, 40.0}))), (std::vector<double>{-0.0, 40.0}));
  EXPECT_EQ(vals(relu(f64({-0.0})))[0], 0.0);
}

TEST(TensorElementwise, BinaryClosedForms) {
  for (DType dt : {kFloat32, kFloat64}) {
    SCOPED_TRACE(dtype_name(dt));
    Tensor a = f64({1.5, -2.0, 3.0, 0.25, 4.0, -0.5}, {2, 3}).to(dt);
    Tensor b = f64({2.0, 0.5, -4.0}, {3}).to(dt);  // broadcast over rows
    std::vector<double> av = vals(a), bv = vals(b);
    const double tol = dt == kFloat32 ? 3e-7 : 4e-16;
    auto check = [&](const Tensor& got, const std::function<double(double, double)>& f, const char* what) {
      ASSERT_EQ(got.dtype(), dt) << what;
      ASSERT_EQ(got.shape(), (Shape{2, 3})) << what;
      std::vector<double> g = vals(got);
      for (int i = 0; i < 6; ++i) {
        double r = f(av[i], bv[i % 3]);
        EXPECT_NEAR(g[i], r, tol * std::max(1.0, std::fabs(r))) << what << " at " << i;
      }
    };
    check(a + b, [](double x, double y) { return x + y; }, "add");
    check(add(a, b), [](double x, double y) { return x + y; }, "add()");
    check(a - b, [](double x, double y) { return x - y; }, "sub");
    check(sub(a, b), [](double x, double y) { return x - y; }, "sub()");
    check(a * b, [](double x, double y) { return x * y; }, "mul");
    check(mul(a, b), [](double x, double y) { return x * y; }, "mul()");
    check(a / b, [](double x, double y) { return x / y; }, "div");
    check(div(a, b), [](double x, double y) { return x / y; }, "div()");
    check(maximum(a, b), [](double x, double y) { return std::max(x, y); }, "maximum");
    check(minimum(a, b), [](double x, double y) { return std::min(x, y); }, "minimum");
    Tensor pa = abs(a);  // pow with a real exponent needs a positive base
    av = vals(pa);
    check(pow(pa, b), [](double x, double y) { return std::pow(x, y); }, "pow(tensor, tensor)");
  }
}

TEST(TensorElementwise, MaximumMinimumPropagateNaN) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Tensor a = f64({nan, 1.0, 2.0}), b = f64({1.0, nan, 3.0});
  std::vector<double> mx = vals(maximum(a, b)), mn = vals(minimum(a, b));
  EXPECT_TRUE(std::isnan(mx[0]) && std::isnan(mx[1]));
  EXPECT_TRUE(std::isnan(mn[0]) && std::isnan(mn[1]));
  EXPECT_EQ(mx[2], 3.0);
  EXPECT_EQ(mn[2], 2.0);
}

TEST(TensorElementwise, ClampErrors) {
  Tensor x = zeros({2});
  expect_error([&] { (void)clamp(x, 2.0, 1.0); }, "clamp", {"2", "1"});
}

TEST(TensorElementwise, Int64Arithmetic) {
  Tensor a = i64({1, -2, 3}), b = i64({10, 20, 30});
  Tensor s = a + b;
  EXPECT_EQ(s.dtype(), kInt64);
  EXPECT_EQ(s.to_vector<int64_t>(), (std::vector<int64_t>{11, 18, 33}));
  EXPECT_EQ((a * b).to_vector<int64_t>(), (std::vector<int64_t>{10, -40, 90}));
  EXPECT_EQ((a - 1.0).to_vector<int64_t>(), (std::vector<int64_t>{0, -3, 2}));
  EXPECT_EQ((a * 3.0).to_vector<int64_t>(), (std::vector<int64_t>{3, -6, 9}));
  EXPECT_EQ(neg(a).to_vector<int64_t>(), (std::vector<int64_t>{-1, 2, -3}));
  EXPECT_EQ(abs(a).to_vector<int64_t>(), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(maximum(a, i64({0, 0, 0})).to_vector<int64_t>(), (std::vector<int64_t>{1, 0, 3}));
  EXPECT_EQ(clamp(a, -1.0, 2.0).to_vector<int64_t>(), (std::vector<int64_t>{1, -1, 2}));
  // large int64 values stay exact (no detour through double)
  const int64_t big = (int64_t{1} << 60) + 1;
  EXPECT_EQ((i64({big}) + i64({2})).to_vector<int64_t>()[0], big + 2);
}

TEST(TensorElementwise, DTypeErrors) {
  Tensor f = zeros({2}), d = zeros({2}, kFloat64), n = zeros({3}, kInt64), b = zeros({2}, kBool);
  expect_error([&] { (void)(f + d); }, "add", {"float32", "float64"});
  expect_error([&] { (void)(d * f); }, "mul", {"float64", "float32"});
  expect_error([&] { (void)pow(f, d); }, "pow", {"float32", "float64"});
  expect_error([&] { (void)eq(f, d); }, "eq", {"float32", "float64"});
  expect_error([&] { (void)where(gt(f, 0.0), f, d); }, "where", {"float32", "float64"});
  expect_error([&] { (void)exp(n); }, "exp", {"int64", "(3)"});
  expect_error([&] { (void)log(n); }, "log", {"int64"});
  expect_error([&] { (void)sigmoid(n); }, "sigmoid", {"int64"});
  expect_error([&] { (void)gelu(n); }, "gelu", {"int64"});
  expect_error([&] { (void)(n / n); }, "div", {"int64"});
  expect_error([&] { (void)(n + 0.5); }, "add", {"0.5", "int64"});
  expect_error([&] { (void)(b + b); }, "add", {"bool"});
}

TEST(TensorElementwise, ZeroSizeAndScalarOperands) {
  Tensor e = zeros({0, 3}, kFloat64);
  EXPECT_EQ(exp(e).shape(), (Shape{0, 3}));
  EXPECT_EQ((e * 2.0).shape(), (Shape{0, 3}));
  EXPECT_EQ((e + ones({3}, kFloat64)).shape(), (Shape{0, 3}));
  EXPECT_EQ(gt(e, 0.0).shape(), (Shape{0, 3}));
  Tensor s = scalar_tensor(2.0, kFloat64);
  Tensor r = exp(s) * s;
  EXPECT_EQ(r.shape(), Shape{});
  EXPECT_EQ(r.item<double>(), std::exp(2.0) * 2.0);
  EXPECT_EQ((s + s).shape(), Shape{});
}

// ---- comparisons and selection ----

TEST(TensorElementwise, Comparisons) {
  for (DType dt : {kFloat32, kFloat64, kInt64}) {
    SCOPED_TRACE(dtype_name(dt));
    Tensor a = f64({1, 2, 3}).to(dt), b = f64({3, 2, 1}).to(dt);
    EXPECT_EQ(eq(a, b).dtype(), kBool);
    EXPECT_EQ(bools(eq(a, b)), (std::vector<bool>{false, true, false}));
    EXPECT_EQ(bools(ne(a, b)), (std::vector<bool>{true, false, true}));
    EXPECT_EQ(bools(lt(a, b)), (std::vector<bool>{true, false, false}));
    EXPECT_EQ(bools(le(a, b)), (std::vector<bool>{true, true, false}));
    EXPECT_EQ(bools(gt(a, b)), (std::vector<bool>{false, false, true}));
    EXPECT_EQ(bools(ge(a, b)), (std::vector<bool>{false, true, true}));
    EXPECT_EQ(bools(eq(a, 2.0)), (std::vector<bool>{false, true, false}));
    EXPECT_EQ(bools(ne(a, 2.0)), (std::vector<bool>{true, false, true}));
    EXPECT_EQ(bools(lt(a, 2.0)), (std::vector<bool>{true, false, false}));
    EXPECT_EQ(bools(le(a, 2.0)), (std::vector<bool>{true, true, false}));
    EXPECT_EQ(bools(gt(a, 2.0)), (std::vector<bool>{false, false, true}));
    EXPECT_EQ(bools(ge(a, 2.0)), (std::vector<bool>{false, true, true}));
    EXPECT_EQ(ge(a, 2.0).dtype(), kBool);
  }
  // int64 vs a fractional scalar compares exactly, not after truncation
  EXPECT_EQ(bools(lt(i64({1, 2}), 1.5)), (std::vector<bool>{true, false}));
  // broadcasting: (3, 1) vs (3) -> (3, 3), c[i, j] = a[i] < a[j]
  Tensor a = f64({1, 2, 3});
  Tensor c = lt(a.reshape({3, 1}), a);
  EXPECT_EQ(c.shape(), (Shape{3, 3}));
  EXPECT_EQ(bools(c), (std::vector<bool>{false, true, true, false, false, true, false, false, false}));
  // NaN: every comparison is false except ne
  Tensor nan = f64({std::numeric_limits<double>::quiet_NaN()});
  EXPECT_EQ(bools(eq(nan, nan)), std::vector<bool>{false});
  EXPECT_EQ(bools(ne(nan, nan)), std::vector<bool>{true});
  EXPECT_EQ(bools(ge(nan, 0.0)), std::vector<bool>{false});
}

TEST(TensorElementwise, Where) {
  Tensor cond = tensor(std::vector<bool>{true, false, true});
  Tensor a = f64({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor b = scalar_tensor(-1, kFloat64);
  Tensor w = where(cond, a, b);  // cond (3), a (2, 3), b () -> (2, 3)
  EXPECT_EQ(w.shape(), (Shape{2, 3}));
  EXPECT_EQ(vals(w), (std::vector<double>{1, -1, 3, 4, -1, 6}));
  Tensor rows = tensor(std::vector<bool>{false, true}, {2, 1});
  EXPECT_EQ(vals(where(rows, a, zeros_like(a))), (std::vector<double>{0, 0, 0, 4, 5, 6}));
  // the classic use: relu as where(x > 0, x, 0)
  Tensor x = f64({-1, 0.5, 2});
  EXPECT_EQ(vals(where(gt(x, 0.0), x, zeros_like(x))), vals(relu(x)));
  expect_error([&] { (void)where(a, a, a); }, "where", {"bool", "float64"});
  expect_error([&] { (void)where(cond, a, zeros({4}, kFloat64)); }, "where", {"(4)"});
}

TEST(TensorElementwise, MaskedFill) {
  // A causal mask: position t may not see positions after t.
  Tensor scores = zeros({3, 3}, kFloat64);
  Tensor future = gt(triu(ones({3, 3}), 1), 0.0);
  EXPECT_EQ(bools(future), (std::vector<bool>{false, true, true, false, false, true, false, false, false}));
  Tensor m = masked_fill(scores, future, -kInf);
  EXPECT_EQ(vals(m), (std::vector<double>{0, -kInf, -kInf, 0, 0, -kInf, 0, 0, 0}));
  EXPECT_EQ(vals(scores), std::vector<double>(9, 0.0));  // out of place
  // mask broadcast over a batch
  Tensor batch = ones({2, 3, 3}, kFloat64);
  Tensor mb = masked_fill(batch, future, 5);
  std::vector<double> v = vals(mb);
  for (int b = 0; b < 2; ++b)
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) EXPECT_EQ(v[b * 9 + i * 3 + j], j > i ? 5.0 : 1.0);
  expect_error([&] { (void)masked_fill(scores, ones({3, 3}), 1); }, "masked_fill", {"bool", "float32"});
  Tensor big_mask = gt(ones({2, 3, 3}), 0.0);
  expect_error([&] { (void)masked_fill(scores, big_mask, 1); }, "masked_fill", {"(2, 3, 3)", "(3, 3)"});
}

TEST(TensorElementwise, TrilTriu) {
  Tensor x = arange(1, 13, 1, kFloat64).reshape({3, 4});  // 1..12
  for (int64_t k : {-5, -1, 0, 1, 2, 5}) {
    SCOPED_TRACE(k);
    std::vector<double> lo = vals(tril(x, k)), up = vals(triu(x, k));
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 4; ++j) {
        double v = 1 + i * 4 + j;
        EXPECT_EQ(lo[i * 4 + j], j - i <= k ? v : 0.0);
        EXPECT_EQ(up[i * 4 + j], j - i >= k ? v : 0.0);
      }
  }
  EXPECT_EQ(vals(tril(x)), (std::vector<double>{1, 0, 0, 0, 5, 6, 0, 0, 9, 10, 11, 0}));
  EXPECT_EQ(vals(triu(x, 1)), (std::vector<double>{0, 2, 3, 4, 0, 0, 7, 8, 0, 0, 0, 12}));
  // batched: the last two dims are the matrix; non-contiguous input
  Tensor b = arange(1, 19, 1, kFloat64).reshape({2, 3, 3}).transpose(1, 2);
  Tensor tb = tril(b);
  Tensor expect = cat({tril(b.select(0, 0)).unsqueeze(0), tril(b.select(0, 1)).unsqueeze(0)});
  EXPECT_EQ(vals(tb), vals(expect));
  EXPECT_EQ(vals(tb.select(0, 1)), (std::vector<double>{10, 0, 0, 11, 14, 0, 12, 15, 18}));
  EXPECT_EQ(tril(zeros({3}, kInt64).reshape({1, 3})).dtype(), kInt64);
  expect_error([] { (void)tril(zeros({3})); }, "tril", {"(3)"});
  expect_error([] { (void)triu(scalar_tensor(1)); }, "triu", {"()"});
}

// ---- strided inputs give the same results as contiguous copies ----

TEST(TensorElementwise, NonContiguousInputsMatchContiguousCopies) {
  Generator g(17);
  Tensor base = randn({6, 8}, g, kFloat64);
  Tensor other = randn({8, 6}, g, kFloat64);
  const std::vector<Tensor> views = {
      base.t(),                                   // transposed (8, 6)
      base.slice(0, 0, 6, 2).slice(1, 1, 8, 3),   // stepped (3, 3)
      base.select(1, 3).unsqueeze(0).expand({4, 6}),  // expanded (4, 6)
      base.permute({1, 0}).narrow(0, 2, 4),       // (4, 6) offset
  };
  for (size_t k = 0; k < views.size(); ++k) {
    SCOPED_TRACE(k);
    const Tensor& v = views[k];
    Tensor c = v.contiguous();
    ASSERT_TRUE(c.is_contiguous());
    EXPECT_EQ(vals(exp(v)), vals(exp(c)));
    EXPECT_EQ(vals(gelu(v)), vals(gelu(c)));
    EXPECT_EQ(vals(v * 2.5 - 1.0), vals(c * 2.5 - 1.0));
    EXPECT_EQ(vals(pow(abs(v), 1.5)), vals(pow(abs(c), 1.5)));
    EXPECT_EQ(bools(gt(v, 0.0)), bools(gt(c, 0.0)));
    EXPECT_EQ(vals(clamp(v, -0.5, 0.5)), vals(clamp(c, -0.5, 0.5)));
    // binary with another strided operand of the same shape
    Tensor o = other.slice(0, 0, v.size(0)).slice(1, 0, v.size(1));  // (r, c) strided view
    EXPECT_EQ(vals(v + o), vals(c + o.contiguous()));
    EXPECT_EQ(vals(v * o), vals(c * o.contiguous()));
    EXPECT_EQ(vals(maximum(v, o)), vals(maximum(c, o.contiguous())));
    // broadcasting a strided row against it
    Tensor row = other.select(0, 1).slice(0, 0, v.size(1));
    EXPECT_EQ(vals(v / row), vals(c / row.contiguous()));
    EXPECT_EQ(vals(where(gt(v, 0.0), v, row)), vals(where(gt(c, 0.0), c, row.contiguous())));
  }
}

// ---- in place ----

TEST(TensorInPlace, BroadcastingSource) {
  Tensor x = f64({1, 2, 3, 4, 5, 6}, {2, 3});
  x.add_(f64({10, 20, 30}));  // every row
  EXPECT_EQ(vals(x), (std::vector<double>{11, 22, 33, 14, 25, 36}));
  x.mul_(f64({1, -1}, {2, 1}));  // every column
  EXPECT_EQ(vals(x), (std::vector<double>{11, 22, 33, -14, -25, -36}));
  x.add_(f64({1, 1, 1}), -11);  // alpha
  EXPECT_EQ(vals(x), (std::vector<double>{0, 11, 22, -25, -36, -47}));
  x.copy_(scalar_tensor(4, kFloat64));
  EXPECT_EQ(vals(x), std::vector<double>(6, 4.0));
  x.copy_(f64({7, 8}, {2, 1}));
  EXPECT_EQ(vals(x), (std::vector<double>{7, 7, 7, 8, 8, 8}));
  // in place into a strided view
  Tensor y = zeros({3, 4}, kFloat64);
  y.t().add_(f64({1, 2, 3}));  // y.t() is (4, 3): y[i, :] += i + 1
  EXPECT_EQ(vals(y), (std::vector<double>{1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3}));
  // aliasing source: x += x
  Tensor z = f64({1, 2});
  z.add_(z);
  EXPECT_EQ(vals(z), (std::vector<double>{2, 4}));
  z.mul_(z);
  EXPECT_EQ(vals(z), (std::vector<double>{4, 16}));
}

// In place is one pass over the destination (kernel::binary_); its bits are
// the out-of-place op's, and a source that overlaps the destination other
// than element for element is read whole before anything is written.
TEST(TensorInPlace, OnePassGivesTheOutOfPlaceBitsAndReadsAnOverlappingSourceFirst) {
  Generator g(5);
  for (DType dt : {kFloat32, kFloat64}) {
    SCOPED_TRACE(dtype_name(dt));
    const Tensor a = randn({300, 400}, g, dt), row = randn({400}, g, dt), col = randn({300, 1}, g, dt);
    const Tensor big = randn({400, 300}, g, dt);
    struct Case {
      const char* what;
      std::function<void(Tensor&)> in_place;
      std::function<Tensor(const Tensor&)> out_of_place;
    };
    const std::vector<Case> cases = {
        {"add_ same shape", [&](Tensor& x) { x.add_(a); }, [&](const Tensor& x) { return x + a; }},
        {"add_ a row", [&](Tensor& x) { x.add_(row); }, [&](const Tensor& x) { return x + row; }},
        {"mul_ a column", [&](Tensor& x) { x.mul_(col); }, [&](const Tensor& x) { return x * col; }},
        {"add_ with alpha", [&](Tensor& x) { x.add_(a, -0.3); }, [&](const Tensor& x) { return x + a * -0.3; }},
        {"add_ a scalar", [&](Tensor& x) { x.add_(0.1); }, [&](const Tensor& x) { return x + 0.1; }},
        {"mul_ a scalar", [&](Tensor& x) { x.mul_(1.7); }, [&](const Tensor& x) { return x * 1.7; }},
        {"add_ a transposed source", [&](Tensor& x) { x.add_(big.t()); },
         [&](const Tensor& x) { return x + big.t(); }},
    };
    for (const Case& c : cases) {
      SCOPED_TRACE(c.what);
      Tensor x = randn({300, 400}, g, dt);
      const Tensor want = c.out_of_place(x);
      c.in_place(x);
      EXPECT_TRUE(equal_bits(x, want));
      Tensor y = randn({400, 300}, g, dt);  // into a transposed view
      Tensor yt = y.t();
      const Tensor want_t = c.out_of_place(yt);
      c.in_place(yt);
      EXPECT_TRUE(equal_bits(yt, want_t));
    }
    // x += x.t() reads x before writing it: x[0, 1] gets x[1, 0] as it was
    Tensor sq = randn({200, 200}, g, dt);
    const Tensor want = sq + sq.t();
    sq.add_(sq.t());
    EXPECT_TRUE(equal_bits(sq, want));
    // x *= x[0] (a row of x, broadcast over x): also read first
    Tensor r = randn({50, 64}, g, dt);
    const Tensor want_r = r * r.select(0, 0);
    r.mul_(r.select(0, 0));
    EXPECT_TRUE(equal_bits(r, want_r));
  }
  // int64 in place, and the errors name the op and both shapes
  Tensor n = tensor(std::vector<int64_t>{1, 2, 3});
  n.mul_(3.0);
  EXPECT_EQ(n.to_vector<int64_t>(), (std::vector<int64_t>{3, 6, 9}));
  const uint64_t v = n.version();
  expect_error([&] { n.mul_(0.5); }, "mul", {"0.5", "int64", "(3)"});
  expect_error([&] { n.add_(f64({1, 2, 3})); }, "add", {"int64", "float64", "(3)"});
  EXPECT_EQ(n.to_vector<int64_t>(), (std::vector<int64_t>{3, 6, 9}));
  EXPECT_EQ(n.version(), v);
}

TEST(TensorInPlace, SourceThatWouldGrowTheDestinationThrows) {
  Tensor x = f64({1, 2, 3});
  uint64_t ver = x.version();
  expect_error([&] { x.add_(ones({2, 3}, kFloat64)); }, "", {"(2, 3)", "(3)"});
  expect_error([&] { x.mul_(ones({4}, kFloat64)); }, "", {"(4)", "(3)"});
  EXPECT_EQ(vals(x), (std::vector<double>{1, 2, 3}));
  EXPECT_EQ(x.version(), ver);
}

}  // namespace
