// The fused kernel pairs of tensor/fused.cpp (kernel::layer_norm_forward /
// layer_norm_backward, kernel::cross_entropy_forward / cross_entropy_backward)
// without autograd: closed forms on small inputs, then random inputs against a
// plain reference written here another way (the layer norm's input gradient
// through its full Jacobian), in float32 and float64, for odd row lengths
// (D or C = 1, 7, 33) and row counts that leave a partial block of 64 rows.
// Then: the same bits for any thread count or memory layout, and the errors.
//
// Legend: N rows, D the normalized dim, C classes.
#include <gtest/gtest.h>

#include <cmath>
#include <type_traits>
#include <vector>

#include "ember.h"
#include "tensor/kernels.h"
#include "tensor/machine/vec_math.h"
#include "test_util.h"

namespace {

using namespace ember;
using namespace ember::test;

constexpr int64_t kOdd[] = {1, 7, 33};
constexpr DType kFloats[] = {kFloat32, kFloat64};

// |got - want| <= rtol (1 + |want|) at every index: float32 keeps ~7 digits.
void expect_rel(const Tensor& got, const std::vector<double>& want, double rtol, int line = __builtin_LINE()) {
  ::testing::ScopedTrace trace(__FILE__, line, "expect_rel");
  const std::vector<double> v = values(got);
  ASSERT_EQ(v.size(), want.size()) << "shape " << shape_str(got.shape());
  for (size_t i = 0; i < v.size(); ++i) EXPECT_NEAR(v[i], want[i], rtol * (1 + std::abs(want[i]))) << "at " << i;
}
double rtol_of(DType dt) { return dt == kFloat32 ? 2e-5 : 1e-12; }
Tensor of(const std::vector<double>& v, const Shape& s, DType dt) { return tensor(v, s).to(dt); }

// ---- layer_norm ----

// Row n holds x_d = 10 n + d, d < D: mean 10 n + (D - 1) / 2, biased variance
// (D² - 1) / 12 whatever n, so x̂_d = (d - (D - 1) / 2) rstd in every row.
struct Ramp {
  int64_t N, D;
  double eps;
  double var() const { return (static_cast<double>(D * D) - 1) / 12; }
  double rstd() const { return 1 / std::sqrt(var() + eps); }
  double xhat(int64_t d) const { return (static_cast<double>(d) - static_cast<double>(D - 1) / 2) * rstd(); }
  Tensor x(DType dt) const {
    std::vector<double> v;
    for (int64_t n = 0; n < N; ++n)
      for (int64_t d = 0; d < D; ++d) v.push_back(10.0 * static_cast<double>(n) + static_cast<double>(d));
    return of(v, {N, D}, dt);
  }
};

TEST(TensorFused, LayerNormForwardClosedForm) {
  for (DType dt : kFloats) {
    for (int64_t D : kOdd) {
      SCOPED_TRACE(std::string(dtype_name(dt)) + " D=" + std::to_string(D));
      const Ramp r{3, D, 1e-5};
      std::vector<double> w, b, out, mean, rstd;
      for (int64_t d = 0; d < D; ++d) {
        w.push_back(1 + 0.5 * static_cast<double>(d));
        b.push_back(0.25 * static_cast<double>(d) - 1);
      }
      for (int64_t n = 0; n < r.N; ++n) {
        mean.push_back(10.0 * static_cast<double>(n) + static_cast<double>(D - 1) / 2);
        rstd.push_back(r.rstd());  // D = 1: 1 / sqrt(eps), and x̂ = 0
        for (int64_t d = 0; d < D; ++d) out.push_back(r.xhat(d) * w[d] + b[d]);
      }
      kernel::LayerNormForward f = kernel::layer_norm_forward(r.x(dt), of(w, {D}, dt), of(b, {D}, dt), r.eps);
      EXPECT_EQ(f.out.shape(), (Shape{r.N, D}));
      EXPECT_EQ(f.out.dtype(), dt);
      expect_rel(f.out, out, rtol_of(dt));
      expect_rel(f.mean, mean, rtol_of(dt));
      expect_rel(f.rstd, rstd, rtol_of(dt));
    }
  }
}

// With weight 1 and g' = g: a constant gradient c gives dx = 0, dweight_d =
// N c x̂_d, dbias = N c; the gradient g = x̂ gives mean(g') = 0 and
// mean(g' x̂) = var rstd², so dx = rstd x̂ (1 - var rstd²) = rstd x̂ eps / (var + eps).
TEST(TensorFused, LayerNormBackwardClosedForm) {
  for (DType dt : kFloats) {
    for (int64_t D : kOdd) {
      SCOPED_TRACE(std::string(dtype_name(dt)) + " D=" + std::to_string(D));
      const Ramp r{5, D, 0.5};  // a large eps, so that dx is not a small difference in float32
      const double c = 0.75, N = static_cast<double>(r.N);
      const Tensor x = r.x(dt), w = ones({D}, dt);
      kernel::LayerNormForward f = kernel::layer_norm_forward(x, w, zeros({D}, dt), r.eps);
      kernel::LayerNormGrads flat = kernel::layer_norm_backward(x, w, f.mean, f.rstd, full({r.N, D}, c, dt));
      std::vector<double> dw, xhat_rows, dx;
      for (int64_t d = 0; d < D; ++d) dw.push_back(N * c * r.xhat(d));
      for (int64_t n = 0; n < r.N; ++n)
        for (int64_t d = 0; d < D; ++d) {
          xhat_rows.push_back(r.xhat(d));
          dx.push_back(r.rstd() * r.xhat(d) * r.eps / (r.var() + r.eps));
        }
      expect_rel(flat.x, std::vector<double>(static_cast<size_t>(r.N * D), 0.0), rtol_of(dt));
      expect_rel(flat.weight, dw, rtol_of(dt));
      expect_rel(flat.bias, std::vector<double>(static_cast<size_t>(D), N * c), rtol_of(dt));
      kernel::LayerNormGrads along = kernel::layer_norm_backward(x, w, f.mean, f.rstd, of(xhat_rows, {r.N, D}, dt));
      expect_rel(along.x, dx, rtol_of(dt));
    }
  }
}

// The plain reference: each row in double, and dx through the Jacobian of x̂,
//   d x̂_j / d x_i = rstd (δ_ij - 1/D - x̂_i x̂_j / D),   dx_i = Σ_j g_j w_j d x̂_j / d x_i.
struct LayerNormReference {
  std::vector<double> out, mean, rstd, dx, dw, db;
  LayerNormReference(const std::vector<double>& x, const std::vector<double>& w, const std::vector<double>& b,
                     const std::vector<double>& g, int64_t N, int64_t D, double eps)
      : dw(static_cast<size_t>(D), 0.0), db(static_cast<size_t>(D), 0.0) {
    for (int64_t n = 0; n < N; ++n) {
      const double* row = x.data() + n * D;
      const double* gr = g.data() + n * D;
      double mu = 0, var = 0;
      for (int64_t d = 0; d < D; ++d) mu += row[d] / static_cast<double>(D);
      for (int64_t d = 0; d < D; ++d) var += (row[d] - mu) * (row[d] - mu) / static_cast<double>(D);
      const double r = 1 / std::sqrt(var + eps);
      std::vector<double> h(static_cast<size_t>(D));
      for (int64_t d = 0; d < D; ++d) h[d] = (row[d] - mu) * r;
      mean.push_back(mu);
      rstd.push_back(r);
      for (int64_t i = 0; i < D; ++i) {
        out.push_back(h[i] * w[i] + b[i]);
        double s = 0;
        for (int64_t j = 0; j < D; ++j)
          s += gr[j] * w[j] * r * ((i == j ? 1.0 : 0.0) - 1.0 / static_cast<double>(D) - h[i] * h[j] / static_cast<double>(D));
        dx.push_back(s);
        dw[i] += gr[i] * h[i];
        db[i] += gr[i];
      }
    }
  }
};

TEST(TensorFused, LayerNormMatchesPlainReference) {
  Generator gen(21);
  for (DType dt : kFloats) {
    for (int64_t D : kOdd) {
      for (int64_t N : {1, 130}) {  // 130 rows: two blocks of 64 and a partial one
        SCOPED_TRACE(std::string(dtype_name(dt)) + " N=" + std::to_string(N) + " D=" + std::to_string(D));
        const Tensor x = randn({N, D}, gen, dt) * 2.0 + 1.0, w = randn({D}, gen, dt), b = randn({D}, gen, dt),
                     g = randn({N, D}, gen, dt);
        const LayerNormReference ref(values(x), values(w), values(b), values(g), N, D, 1e-5);
        kernel::LayerNormForward f = kernel::layer_norm_forward(x, w, b, 1e-5);
        kernel::LayerNormGrads grads = kernel::layer_norm_backward(x, w, f.mean, f.rstd, g);
        const double tol = dt == kFloat32 ? 1e-4 : 1e-11;  // dx of D = 1 sums terms of size rstd = 316
        expect_rel(f.out, ref.out, tol);
        expect_rel(f.mean, ref.mean, tol);
        expect_rel(f.rstd, ref.rstd, tol);
        expect_rel(grads.x, ref.dx, tol);
        expect_rel(grads.weight, ref.dw, tol);
        expect_rel(grads.bias, ref.db, tol);
      }
    }
  }
}

// The thread split and the input layout change nothing, to the bit.
TEST(TensorFused, LayerNormSameBitsForAnyThreadsAndLayout) {
  Generator gen(22);
  const int64_t N = 2000, D = 33;  // enough rows for parallel_for to split them
  const Tensor x = randn({N, D}, gen), w = randn({D}, gen), b = randn({D}, gen), g = randn({N, D}, gen);
  const int saved = get_num_threads();
  std::vector<std::vector<double>> runs;
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    kernel::LayerNormForward f = kernel::layer_norm_forward(x, w, b, 1e-5);
    kernel::LayerNormGrads d = kernel::layer_norm_backward(x, w, f.mean, f.rstd, g);
    std::vector<double> all;
    for (const Tensor& t : {f.out, f.mean, f.rstd, d.x, d.weight, d.bias}) {
      std::vector<double> v = values(t);
      all.insert(all.end(), v.begin(), v.end());
    }
    runs.push_back(all);
  }
  set_num_threads(saved);
  EXPECT_EQ(runs[0], runs[1]);
  // x as a transposed view, weight as a stride-2 view
  const Tensor xt = x.t().contiguous().t();
  const Tensor w2 = w.unsqueeze(1).expand({D, 2}).contiguous().reshape({2 * D}).slice(0, 0, 2 * D, 2);
  ASSERT_FALSE(xt.is_contiguous());
  ASSERT_FALSE(w2.is_contiguous());
  kernel::LayerNormForward f = kernel::layer_norm_forward(x, w, b, 1e-5), fv = kernel::layer_norm_forward(xt, w2, b, 1e-5);
  EXPECT_EQ(values(fv.out), values(f.out));
  kernel::LayerNormGrads d = kernel::layer_norm_backward(x, w, f.mean, f.rstd, g);
  kernel::LayerNormGrads dv = kernel::layer_norm_backward(xt, w2, fv.mean, fv.rstd, g.t().contiguous().t());
  EXPECT_EQ(values(dv.x), values(d.x));
  EXPECT_EQ(values(dv.weight), values(d.weight));
}

// A row's sum as the kernels take it: eight partial sums in double, element
// d into partial d mod 8 in order, then ((0+1)+(2+3))+((4+5)+(6+7)).
template <typename F>
double eight_lane_sum(int64_t D, const F& f) {
  double acc[8] = {};
  for (int64_t d = 0; d < D; ++d) acc[d % 8] += f(d);
  return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

// The forward's and the backward's rows run at the SIMD width vec_math chose
// (scripts/test_blas_cores.sh runs this under each): every width must give
// the bits of the kernel's formula done one operation at a time, in its
// order (x̂ and g ⊙ w in T, the row means in eight lanes and the per-block
// partials in double, the blocks added in order). AVX-512 has FMA
// instructions: a multiply-add contracted into one would round once where
// this rounds twice.
template <typename T>
void expect_layer_norm_backward_bits() {
  Generator gen(23);
  const DType dt = std::is_same_v<T, float> ? kFloat32 : kFloat64;
  const int64_t N = 130, D = 193;  // three blocks of rows, the last partial; rows of whole vectors and a tail
  const Tensor x = randn({N, D}, gen, dt), w = randn({D}, gen, dt), b = randn({D}, gen, dt), g = randn({N, D}, gen, dt);
  const kernel::LayerNormForward f = kernel::layer_norm_forward(x, w, b, 1e-5);
  const kernel::LayerNormGrads got = kernel::layer_norm_backward(x, w, f.mean, f.rstd, g);
  const std::vector<T> px = x.to_vector<T>(), pw = w.to_vector<T>(), pg = g.to_vector<T>(), pm = f.mean.to_vector<T>(),
                       pr = f.rstd.to_vector<T>();
  std::vector<T> dx(static_cast<size_t>(N * D)), dw(static_cast<size_t>(D)), db(static_cast<size_t>(D)), h(static_cast<size_t>(D));
  const int64_t blocks = (N + 63) / 64;
  std::vector<double> part_w(static_cast<size_t>(blocks * D)), part_b(part_w.size());
  for (int64_t n = 0; n < N; ++n) {
    const double mean = eight_lane_sum(D, [&](int64_t d) { return double(px[n * D + d]); }) / double(D);
    const double var = eight_lane_sum(D, [&](int64_t d) {
                         const double c = px[n * D + d] - mean;
                         return c * c;
                       }) / double(D);
    ASSERT_EQ(pm[n], static_cast<T>(mean)) << "row " << n << " at " << detail::vec_math_isa();
    ASSERT_EQ(pr[n], static_cast<T>(1.0 / std::sqrt(var + 1e-5))) << "row " << n << " at " << detail::vec_math_isa();
    for (int64_t d = 0; d < D; ++d) h[d] = (px[n * D + d] - pm[n]) * pr[n];
    const double mean_g = eight_lane_sum(D, [&](int64_t d) { return double(T(pg[n * D + d] * pw[d])); }) / double(D);
    const double mean_gh =
        eight_lane_sum(D, [&](int64_t d) { return double(T(pg[n * D + d] * pw[d])) * double(h[d]); }) / double(D);
    for (int64_t d = 0; d < D; ++d) {
      const T gw = pg[n * D + d] * pw[d];
      const double inner = (double(gw) - mean_g) - double(h[d]) * mean_gh;
      dx[n * D + d] = static_cast<T>(double(pr[n]) * inner);
      part_w[(n / 64) * D + d] += double(pg[n * D + d]) * double(h[d]);
      part_b[(n / 64) * D + d] += pg[n * D + d];
    }
  }
  for (int64_t d = 0; d < D; ++d) {
    double sw = 0, sb = 0;
    for (int64_t k = 0; k < blocks; ++k) sw += part_w[k * D + d], sb += part_b[k * D + d];
    dw[d] = static_cast<T>(sw);
    db[d] = static_cast<T>(sb);
  }
  EXPECT_EQ(got.x.to_vector<T>(), dx) << detail::vec_math_isa();
  EXPECT_EQ(got.weight.to_vector<T>(), dw);
  EXPECT_EQ(got.bias.to_vector<T>(), db);
}

TEST(TensorFused, LayerNormGivesTheFormulasBitsAtTheChosenWidth) {
  expect_layer_norm_backward_bits<float>();
  expect_layer_norm_backward_bits<double>();
}

TEST(TensorFused, LayerNormZeroRows) {
  kernel::LayerNormForward f = kernel::layer_norm_forward(zeros({0, 3}), ones({3}), zeros({3}), 1e-5);
  EXPECT_EQ(f.out.shape(), (Shape{0, 3}));
  EXPECT_EQ(f.mean.shape(), Shape{0});
  kernel::LayerNormGrads d = kernel::layer_norm_backward(zeros({0, 3}), ones({3}), f.mean, f.rstd, zeros({0, 3}));
  EXPECT_EQ(d.x.shape(), (Shape{0, 3}));
  expect_values(d.weight, {0, 0, 0});  // a sum over no rows
  expect_values(d.bias, {0, 0, 0});
}

TEST(TensorFused, LayerNormErrors) {
  const Tensor x = randn({2, 4}), w = ones({4}), b = zeros({4});
  expect_error([&] { kernel::layer_norm_forward(x, ones({3}), b, 1e-5); }, "layer_norm", {"(2, 4)", "(4)", "(3)"});
  expect_error([&] { kernel::layer_norm_forward(x, w, zeros({4, 1}), 1e-5); }, "layer_norm", {"(2, 4)", "(4, 1)"});
  expect_error([&] { kernel::layer_norm_forward(scalar_tensor(1.0), ones({1}), zeros({1}), 1e-5); }, "layer_norm", {"()"});
  expect_error([&] { kernel::layer_norm_forward(x, ones({4}, kFloat64), b, 1e-5); }, "layer_norm", {"float32", "float64"});
  expect_error([&] { kernel::layer_norm_forward(zeros({2, 4}, kInt64), ones({4}, kInt64), zeros({4}, kInt64), 1e-5); },
               "layer_norm", {"floating", "int64"});
  // A negative eps gives NaN on a constant row (var + eps < 0): refused, as is a non-finite one.
  expect_error([&] { kernel::layer_norm_forward(x, w, b, -1e-5); }, "layer_norm", {"eps", "-1e-05", "(2, 4)"});
  expect_error([&] { layer_norm(x, w, b, std::nan("")); }, "layer_norm", {"eps", "nan"});
  kernel::LayerNormForward f = kernel::layer_norm_forward(x, w, b, 1e-5);
  expect_error([&] { kernel::layer_norm_backward(x, w, f.mean, f.rstd, zeros({4, 2})); }, "layer_norm backward",
               {"(2, 4)", "(4, 2)"});
  expect_error([&] { kernel::layer_norm_backward(x, w, zeros({3}), f.rstd, zeros({2, 4})); }, "layer_norm backward",
               {"(2, 4)", "(3)"});
  expect_error([&] { kernel::layer_norm_backward(x, w, f.mean, f.rstd, zeros({2, 4}, kFloat64)); }, "layer_norm backward",
               {"float32", "float64", "(2, 4)"});
  expect_error([&] { kernel::layer_norm_backward(x, w, f.mean.to(kFloat64), f.rstd, zeros({2, 4})); },
               "layer_norm backward", {"float32", "float64", "(2)"});
}

// ---- cross_entropy ----

// Row logits log(1), log(2), …, log(C): Σ exp = S = C (C + 1) / 2, softmax_c =
// (c + 1) / S, loss for target t = log S - log(t + 1).
TEST(TensorFused, CrossEntropyClosedForm) {
  for (DType dt : kFloats) {
    for (int64_t C : kOdd) {
      SCOPED_TRACE(std::string(dtype_name(dt)) + " C=" + std::to_string(C));
      const double S = static_cast<double>(C * (C + 1)) / 2;
      std::vector<double> logits;
      for (int64_t n = 0; n < 3; ++n)
        for (int64_t c = 0; c < C; ++c) logits.push_back(std::log(static_cast<double>(c + 1)));
      const Tensor x = of(logits, {3, C}, dt);
      const int64_t last = C - 1;  // row 1 is ignored (-100)
      const Tensor t = i64({0, -100, last});
      kernel::CrossEntropyForward f = kernel::cross_entropy_forward(x, t, -100);
      EXPECT_EQ(f.counted, 2);
      expect_rel(f.losses, {std::log(S), 0, std::log(S) - std::log(static_cast<double>(C))}, rtol_of(dt));
      expect_rel(f.lse, {std::log(S), std::log(S), std::log(S)}, rtol_of(dt));
      // per-row gradients 2, 5, -1 times scale 0.5: row n is g_n (softmax - one_hot), row 1 ignored
      std::vector<double> want;
      const double gn[] = {1.0, 0.0, -0.5};
      for (int64_t n = 0; n < 3; ++n)
        for (int64_t c = 0; c < C; ++c)
          want.push_back(gn[n] * (static_cast<double>(c + 1) / S - (c == (n == 0 ? 0 : last) ? 1.0 : 0.0)));
      expect_rel(kernel::cross_entropy_backward(x, t, f.lse, of({2, 5, -1}, {3}, dt), 0.5, -100), want, rtol_of(dt));
      // one gradient for every row (a reduced loss): 3 * 0.5 = 1.5 each
      for (int64_t c = 0; c < C; ++c) {
        want[c] *= 1.5;
        want[2 * C + c] *= -3.0;
      }
      expect_rel(kernel::cross_entropy_backward(x, t, f.lse, scalar_tensor(3.0, dt), 0.5, -100), want, rtol_of(dt));
    }
  }
}

// Logits +-1e4: exp of the shifted row is exactly 1 and 0, so the losses are exact.
TEST(TensorFused, CrossEntropyExactAtLargeLogits) {
  for (DType dt : kFloats) {
    const Tensor x = of({1e4, -1e4, 1e4, -1e4}, {2, 2}, dt);
    kernel::CrossEntropyForward f = kernel::cross_entropy_forward(x, i64({0, 1}), -100);
    EXPECT_EQ(values(f.losses), (std::vector<double>{0, 2e4}));
    EXPECT_EQ(values(f.lse), (std::vector<double>{1e4, 1e4}));
    EXPECT_EQ(values(kernel::cross_entropy_backward(x, i64({0, 1}), f.lse, scalar_tensor(1.0, dt), 1.0, -100)),
              (std::vector<double>{0, 0, 1, -1}));
  }
}

// The plain reference: log Σ exp in double around the row's max, softmax from it.
TEST(TensorFused, CrossEntropyMatchesPlainReference) {
  Generator gen(23);
  for (DType dt : kFloats) {
    for (int64_t C : kOdd) {
      SCOPED_TRACE(std::string(dtype_name(dt)) + " C=" + std::to_string(C));
      const int64_t N = 130, ignore = 2;  // a class index as ignore_index: those rows are not scored
      const Tensor x = randn({N, C}, gen, dt) * 3.0, t = randint(0, C, {N}, gen), g = randn({N}, gen, dt);
      const std::vector<double> xv = values(x), gv = values(g);
      const std::vector<int64_t> tv = t.to_vector<int64_t>();
      std::vector<double> loss, lse, grad;
      int64_t counted = 0;
      for (int64_t n = 0; n < N; ++n) {
        double mx = xv[n * C], s = 0;
        for (int64_t c = 0; c < C; ++c) mx = std::max(mx, xv[n * C + c]);
        for (int64_t c = 0; c < C; ++c) s += std::exp(xv[n * C + c] - mx);
        const double l = mx + std::log(s);
        const bool kept = tv[n] != ignore;
        counted += kept;
        lse.push_back(l);
        loss.push_back(kept ? l - xv[n * C + tv[n]] : 0.0);
        for (int64_t c = 0; c < C; ++c)
          grad.push_back(kept ? 0.25 * gv[n] * (std::exp(xv[n * C + c] - l) - (c == tv[n] ? 1.0 : 0.0)) : 0.0);
      }
      kernel::CrossEntropyForward f = kernel::cross_entropy_forward(x, t, ignore);
      EXPECT_EQ(f.counted, counted);
      const double tol = dt == kFloat32 ? 1e-5 : 1e-12;
      expect_rel(f.losses, loss, tol);
      expect_rel(f.lse, lse, tol);
      expect_rel(kernel::cross_entropy_backward(x, t, f.lse, g, 0.25, ignore), grad, tol);
      // (B, T, C) logits and transposed (non-contiguous) ones give the same bits
      const Tensor x3 = x.reshape({10, 13, C}), xt = x.t().contiguous().t();
      EXPECT_EQ(values(kernel::cross_entropy_forward(x3, t.reshape({10, 13}), ignore).losses), values(f.losses));
      EXPECT_EQ(values(kernel::cross_entropy_forward(xt, t, ignore).lse), values(f.lse));
    }
  }
}

TEST(TensorFused, CrossEntropyErrors) {
  const Tensor x = randn({2, 3, 4});
  expect_error([&] { kernel::cross_entropy_forward(x, i64({0, 1, 2, 3, 4, 0}, {2, 3}), -100); }, "cross_entropy",
               {"target 4", "[1, 1]", "[0, 4)", "(2, 3, 4)"});
  expect_error([&] { kernel::cross_entropy_forward(x, i64({0, 1, 2, 3, 0, -1}, {2, 3}), -100); }, "cross_entropy",
               {"target -1", "[1, 2]"});
  expect_error([&] { kernel::cross_entropy_forward(x, zeros({2, 3}), -100); }, "cross_entropy", {"int64", "float32"});
  expect_error([&] { kernel::cross_entropy_forward(x, i64({0, 1, 2}), -100); }, "cross_entropy", {"(3)", "(2, 3)"});
  expect_error([&] { kernel::cross_entropy_forward(randn({4}), i64({0}), -100); }, "cross_entropy", {"(4)"});
  expect_error([&] { kernel::cross_entropy_forward(zeros({2, 3}, kInt64), i64({0, 1}), -100); }, "cross_entropy",
               {"floating", "int64"});
  const Tensor t = i64({0, 1, 2, 3, 0, 1}, {2, 3});
  kernel::CrossEntropyForward f = kernel::cross_entropy_forward(x, t, -100);
  expect_error([&] { kernel::cross_entropy_backward(x, t, f.lse, zeros({4}), 1.0, -100); }, "cross_entropy backward",
               {"(2, 3, 4)", "(4)"});
  expect_error([&] { kernel::cross_entropy_backward(x, t, zeros({5}), zeros({6}), 1.0, -100); }, "cross_entropy backward",
               {"(2, 3, 4)", "(5)"});
  expect_error([&] { kernel::cross_entropy_backward(x, t, f.lse.to(kFloat64), zeros({6}), 1.0, -100); },
               "cross_entropy backward", {"float32", "float64"});
  expect_error([&] { kernel::cross_entropy_backward(x, zeros({2, 3}), f.lse, zeros({6}), 1.0, -100); },
               "cross_entropy backward", {"int64", "float32"});
  expect_error([&] { kernel::cross_entropy_backward(x, i64({0, 1, 2, 3, 0, 9}, {2, 3}), f.lse, zeros({6}), 1.0, -100); },
               "cross_entropy backward", {"target 9", "[1, 2]", "[0, 4)"});
}

}  // namespace
