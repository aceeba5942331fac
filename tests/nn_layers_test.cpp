// nn/layers.h and nn/loss.h: Linear, LayerNorm, Dropout, the activation
// modules, Sequential, cross_entropy and mse_loss — values against hand
// computation, statistics, error messages, and float64 gradchecks (including
// non-contiguous inputs).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <vector>

#include "autograd/node.h"
#include "ember.h"
#include "nn/layers.h"
#include "nn/loss.h"
#include "test_util.h"

using namespace ember;
using ember::test::expect_close;
using ember::test::expect_error;
using ember::test::expect_values;
using ember::test::values;

namespace {

// A float64 leaf whose memory is transposed: the x.t() a learner would pass.
Tensor transposed_leaf(const Shape& s, Generator& g) {
  return randn({s[1], s[0]}, g, kFloat64).t().detach().requires_grad_();
}
Tensor leaf(const Shape& s, Generator& g) { return randn(s, g, kFloat64).requires_grad_(); }

// Sets a parameter's values (outside the graph).
void set(Tensor& p, const std::vector<double>& v) {
  NoGradGuard no_grad;
  p.copy_(tensor(v, p.shape()));
}

}  // namespace

// ---------------------------------------------------------------- Linear

TEST(NnLinear, WeightLayoutIsOutByIn) {
  nn::Linear lin(3, 5);
  EXPECT_EQ(lin.weight.shape(), (Shape{5, 3}));
  EXPECT_EQ(lin.bias.shape(), (Shape{5}));
  EXPECT_TRUE(lin.weight.requires_grad());
  auto names = lin.named_parameters();
  ASSERT_EQ(names.size(), 2u);
  EXPECT_EQ(names[0].first, "weight");
  EXPECT_EQ(names[1].first, "bias");
  nn::Linear no_bias(3, 5, {.bias = false});
  EXPECT_FALSE(no_bias.bias.defined());
  EXPECT_EQ(no_bias.named_parameters().size(), 1u);
}

TEST(NnLinear, InitWithinOneOverSqrtIn) {
  const int64_t in = 16;
  nn::Linear lin(in, 64, {.bias = true, .generator = test::seeded(3)});
  const double bound = 1.0 / std::sqrt(double(in));  // 0.25
  double lo = 1, hi = -1;
  for (const Tensor& t : {lin.weight, lin.bias})
    for (double v : values(t)) {
      EXPECT_LE(std::abs(v), bound);
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  // 1088 uniform draws fill most of the interval
  EXPECT_LT(lo, -0.9 * bound);
  EXPECT_GT(hi, 0.9 * bound);
  // same seed, same weights
  nn::Linear again(in, 64, {.bias = true, .generator = test::seeded(3)});
  expect_close(again.weight, lin.weight, 0.0);
}

TEST(NnLinear, ValuesByHand) {
  nn::Linear lin(2, 3, {.bias = true, .dtype = kFloat64, .generator = test::seeded(0)});
  set(lin.weight, {1, 2, 3, 4, 5, 6});  // rows: outputs
  set(lin.bias, {0.5, -1, 2});
  Tensor x = tensor(std::vector<double>{1, -1, 2, 0.5}, {2, 2});
  // y[n, o] = Σ_i x[n, i] W[o, i] + b[o]
  expect_values(lin.forward(x), {1 - 2 + 0.5, 3 - 4 - 1, 5 - 6 + 2,  //
                                 2 + 1 + 0.5, 6 + 2 - 1, 10 + 3 + 2});
}

TEST(NnLinear, WorksOnAnyLeadingDims) {
  Generator g(1);
  nn::Linear lin(4, 3, {.bias = true, .dtype = kFloat64, .generator = test::seeded(0)});
  Tensor x = randn({2, 5, 4}, g, kFloat64);  // (B, T, I)
  Tensor y = lin.forward(x);
  EXPECT_EQ(y.shape(), (Shape{2, 5, 3}));
  // each (b, t) row is the 2-D product of that row
  Tensor y2 = lin.forward(x.reshape({10, 4})).reshape({2, 5, 3});
  expect_close(y, y2, 1e-12);
  EXPECT_EQ(lin.forward(randn({4}, g, kFloat64)).shape(), (Shape{3}));
}

TEST(NnLinear, ShapeErrorNamesBothShapes) {
  nn::Linear lin(4, 3);
  expect_error([&] { lin.forward(randn({2, 5})); }, {"linear", "(2, 5)", "(3, 4)"});
  expect_error([] { nn::Linear bad(0, 3); }, {"Linear", "in_features 0"});
}

TEST(NnLinear, Gradcheck) {
  Generator g(2);
  auto f = [](const std::vector<Tensor>& in) { return nn::linear(in[0], in[1], in[2]); };
  EXPECT_GRADCHECK(f, {leaf({3, 4}, g), leaf({2, 4}, g), leaf({2}, g)});
  EXPECT_GRADCHECK(f, {leaf({2, 3, 4}, g), leaf({2, 4}, g), leaf({2}, g)});  // (B, T, I)
  // non-contiguous input and weight
  EXPECT_GRADCHECK(f, {transposed_leaf({3, 4}, g), transposed_leaf({2, 4}, g), leaf({2}, g)});
  auto no_bias = [](const std::vector<Tensor>& in) { return nn::linear(in[0], in[1]); };
  EXPECT_GRADCHECK(no_bias, {leaf({3, 4}, g), leaf({5, 4}, g)});
  // the module's own forward, weights swapped in
  auto module = [](const std::vector<Tensor>& in) {
    nn::Linear lin(4, 2, {.bias = true, .dtype = kFloat64, .generator = test::seeded(0)});
    lin.weight = in[1];
    lin.bias = in[2];
    return lin.forward(in[0]);
  };
  EXPECT_GRADCHECK(module, {transposed_leaf({3, 4}, g), leaf({2, 4}, g), leaf({2}, g)});
}

// ---------------------------------------------------------------- LayerNorm

TEST(NnLayerNorm, RowStatisticsBeforeAffine) {
  Generator g(4);
  nn::LayerNorm ln(16, {.eps = 1e-5, .dtype = kFloat64});
  Tensor x = randn({3, 5, 16}, g, kFloat64) * 3.0 + 7.0;
  Tensor y = ln.forward(x);
  EXPECT_EQ(y.shape(), x.shape());
  std::vector<double> v = values(y);
  for (int64_t r = 0; r < 15; ++r) {
    double mean = 0, var = 0;
    for (int d = 0; d < 16; ++d) mean += v[r * 16 + d];
    mean /= 16;
    for (int d = 0; d < 16; ++d) var += (v[r * 16 + d] - mean) * (v[r * 16 + d] - mean);
    var /= 16;  // biased, as LayerNorm normalizes with
    EXPECT_NEAR(mean, 0.0, 1e-12) << "row " << r;
    EXPECT_NEAR(var, 1.0, 1e-5) << "row " << r;  // eps = 1e-5 shrinks it by var / (var + eps)
  }
}

TEST(NnLayerNorm, ValuesByHandAndEps) {
  // x = (1, 2, 3, 6): mean 3, biased var (4 + 1 + 0 + 9) / 4 = 3.5
  Tensor x = tensor(std::vector<double>{1, 2, 3, 6}, {1, 4});
  for (double eps : {1e-5, 0.5, 10.0}) {
    Tensor w = ones({4}, kFloat64), b = zeros({4}, kFloat64);
    Tensor y = nn::layer_norm(x, w, b, eps);
    const double r = 1.0 / std::sqrt(3.5 + eps);
    expect_values(y, {-2 * r, -1 * r, 0, 3 * r}, 1e-12);
  }
  // a constant row is all zeros (var 0, eps keeps it finite)
  expect_values(nn::layer_norm(full({1, 3}, 5.0, kFloat64), ones({3}, kFloat64), zeros({3}, kFloat64)), {0, 0, 0});
}

TEST(NnLayerNorm, AffineScaleAndShift) {
  nn::LayerNorm ln(4, {.eps = 0.0, .dtype = kFloat64});
  expect_values(ln.weight, {1, 1, 1, 1});
  expect_values(ln.bias, {0, 0, 0, 0});
  set(ln.weight, {1, 2, 3, 4});
  set(ln.bias, {0.5, 0, -1, 10});
  Tensor x = tensor(std::vector<double>{1, 2, 3, 6}, {1, 4});
  const double r = 1.0 / std::sqrt(3.5);
  expect_values(ln.forward(x), {-2 * r * 1 + 0.5, -1 * r * 2, 0 * 3 - 1, 3 * r * 4 + 10}, 1e-12);
}

TEST(NnLayerNorm, Errors) {
  expect_error([] { nn::layer_norm(randn({2, 4}), ones({3}), zeros({3})); }, {"layer_norm", "(2, 4)", "(4)", "(3)"});
  expect_error([] { nn::layer_norm(randn({2, 4}), ones({4}, kFloat64), zeros({4})); }, {"layer_norm", "float64"});
  expect_error([] { nn::LayerNorm bad(0); }, {"LayerNorm", "0"});
}

TEST(NnLayerNorm, Gradcheck) {
  Generator g(5);
  auto f = [](const std::vector<Tensor>& in) { return nn::layer_norm(in[0], in[1], in[2]); };
  EXPECT_GRADCHECK(f, {leaf({3, 5}, g), leaf({5}, g), leaf({5}, g)});
  EXPECT_GRADCHECK(f, {leaf({2, 3, 4}, g), leaf({4}, g), leaf({4}, g)});
  EXPECT_GRADCHECK(f, {transposed_leaf({3, 4}, g), leaf({4}, g), leaf({4}, g)});  // non-contiguous x
  // a large eps, where the eps term matters in the derivative
  auto big_eps = [](const std::vector<Tensor>& in) { return nn::layer_norm(in[0], in[1], in[2], 0.7); };
  EXPECT_GRADCHECK(big_eps, {leaf({2, 3}, g), leaf({3}, g), leaf({3}, g)});
  // non-contiguous weight (a stride-2 view)
  Tensor buf = randn({8}, g, kFloat64);
  Tensor w = buf.slice(0, 0, 8, 2).detach().requires_grad_();
  EXPECT_GRADCHECK(f, {leaf({3, 4}, g), w, leaf({4}, g)});
  // the module, weights swapped in
  auto module = [](const std::vector<Tensor>& in) {
    nn::LayerNorm ln(4, {.eps = 1e-5, .dtype = kFloat64});
    ln.weight = in[1];
    ln.bias = in[2];
    return ln.forward(in[0]);
  };
  EXPECT_GRADCHECK(module, {leaf({2, 2, 4}, g), leaf({4}, g), leaf({4}, g)});
}

TEST(NnLayerNorm, RecordsOneFusedNode) {
  Tensor x = randn({2, 3}, kFloat64).requires_grad_();
  Tensor y = nn::layer_norm(x, ones({3}, kFloat64), zeros({3}, kFloat64));
  ASSERT_NE(y.grad_fn(), nullptr);
  EXPECT_STREQ(y.grad_fn()->name(), "LayerNormBackward");
}

// ---------------------------------------------------------------- Dropout

TEST(NnDropout, SeededDeterminism) {
  Tensor x = ones({1000});
  nn::Dropout a(0.5, {.seed = 42}), b(0.5, {.seed = 42}), c(0.5, {.seed = 43});
  Tensor ya = a.forward(x), yb = b.forward(x), yc = c.forward(x);
  EXPECT_EQ(values(ya), values(yb));
  EXPECT_NE(values(ya), values(yc));
  // the generator advances: a second call draws a new mask
  EXPECT_NE(values(a.forward(x)), values(ya));
  // the functional form with the same seed draws the same mask
  Generator g(42);
  EXPECT_EQ(values(nn::dropout(x, 0.5, g)), values(ya));
}

TEST(NnDropout, IdentityInEvalAndForPZero) {
  Tensor x = randn({4, 5});
  nn::Dropout d(0.9, {.seed = 1});
  d.eval();
  EXPECT_TRUE(d.forward(x).is_same(x));
  d.train();
  EXPECT_FALSE(d.forward(x).is_same(x));
  nn::Dropout zero(0.0, {.seed = 1});
  EXPECT_TRUE(zero.forward(x).is_same(x));
  Generator g(0);
  EXPECT_TRUE(nn::dropout(x, 0.0, g).is_same(x));
}

TEST(NnDropout, FractionZeroedAndKeptScaled) {
  const int64_t n = 200000;
  for (double p : {0.1, 0.5, 0.8}) {
    Generator g(7);
    Tensor x = full({n}, 2.0, kFloat64);
    std::vector<double> y = values(nn::dropout(x, p, g));
    int64_t zeroed = 0;
    for (double v : y) {
      if (v == 0.0) {
        ++zeroed;
      } else {
        EXPECT_DOUBLE_EQ(v, 2.0 / (1.0 - p));
      }
    }
    // the zero count is Binomial(n, p): 6 standard deviations is a bound a
    // correct generator essentially never exceeds
    const double frac = double(zeroed) / n, sd = std::sqrt(p * (1 - p) / n);
    EXPECT_NEAR(frac, p, 6 * sd) << "p = " << p;
  }
}

TEST(NnDropout, GradientIsTheMask) {
  Generator g(9);
  Tensor x = randn({50}, g, kFloat64).requires_grad_();
  Generator g2(11);
  Tensor y = nn::dropout(x, 0.4, g2);
  y.sum().backward();
  std::vector<double> yv = values(y), xv = values(x), gx = values(x.grad());
  for (size_t i = 0; i < yv.size(); ++i) {
    if (yv[i] == 0.0) {
      EXPECT_EQ(gx[i], 0.0);
    } else {
      EXPECT_DOUBLE_EQ(gx[i], 1.0 / 0.6);
      EXPECT_NEAR(yv[i], xv[i] / 0.6, 1e-12);
    }
  }
  // gradcheck with a fixed seed inside fn: the same mask on every call
  auto f = [](const std::vector<Tensor>& in) {
    Generator gen(5);
    return nn::dropout(in[0], 0.3, gen);
  };
  EXPECT_GRADCHECK(f, {transposed_leaf({3, 4}, g)});
}

TEST(NnDropout, POutOfRange) {
  Generator g(0);
  expect_error([&] { nn::dropout(ones({2}), 1.0, g); }, {"dropout", "[0, 1)", "1"});
  expect_error([&] { nn::dropout(ones({2}), -0.1, g); }, {"dropout", "-0.1"});
  expect_error([] { nn::Dropout d(1.5); }, {"Dropout", "1.5"});
}

// ---------------------------------------------------------------- activations

TEST(NnActivations, ModulesEqualFunctions) {
  Generator g(3);
  Tensor x = randn({3, 4}, g, kFloat64);
  expect_close(nn::ReLU().forward(x), relu(x), 0.0);
  expect_close(nn::Tanh().forward(x), tanh(x), 0.0);
  expect_close(nn::Sigmoid().forward(x), sigmoid(x), 0.0);
  expect_close(nn::GELU().forward(x), gelu(x), 0.0);
  expect_close(nn::GELU(GeluApprox::Tanh).forward(x), gelu(x, GeluApprox::Tanh), 0.0);
  EXPECT_EQ(nn::GELU(GeluApprox::Tanh).extra_repr(), "approximate='tanh'");
}

TEST(NnActivations, GeluExactAndTanhValues) {
  Tensor x = tensor(std::vector<double>{-2, -1, 0, 0.5, 1, 3});
  std::vector<double> exact, approx;
  for (double v : values(x)) {
    exact.push_back(0.5 * v * (1 + std::erf(v / std::sqrt(2.0))));
    approx.push_back(0.5 * v * (1 + std::tanh(std::sqrt(2.0 / M_PI) * (v + 0.044715 * v * v * v))));
  }
  expect_values(nn::GELU().forward(x), exact, 1e-14);
  expect_values(nn::GELU(GeluApprox::Tanh).forward(x), approx, 1e-14);
  // PyTorch: F.gelu(1.) = 0.8413447460685429, approximate='tanh' 0.8411919906082768
  EXPECT_NEAR(values(nn::GELU().forward(x))[4], 0.8413447460685429, 1e-15);
  EXPECT_NEAR(values(nn::GELU(GeluApprox::Tanh).forward(x))[4], 0.8411919906082768, 1e-15);
  expect_values(nn::ReLU().forward(x), {0, 0, 0, 0.5, 1, 3});
  EXPECT_NEAR(values(nn::Sigmoid().forward(x))[2], 0.5, 0);
}

TEST(NnActivations, Gradcheck) {
  Generator g(8);
  std::vector<std::shared_ptr<nn::UnaryModule>> mods = {std::make_shared<nn::Tanh>(), std::make_shared<nn::Sigmoid>(),
                                                        std::make_shared<nn::GELU>(),
                                                        std::make_shared<nn::GELU>(GeluApprox::Tanh)};
  for (auto& m : mods) {
    auto f = [m](const std::vector<Tensor>& in) { return m->forward(in[0]); };
    EXPECT_GRADCHECK(f, {transposed_leaf({3, 4}, g)});
  }
  // relu away from its kink at 0
  Tensor x = tensor(std::vector<double>{-1.5, -0.3, 0.4, 2.0}, {2, 2}).t().detach().requires_grad_();
  EXPECT_GRADCHECK([](const std::vector<Tensor>& in) { return nn::ReLU().forward(in[0]); }, {x});
}

// ---------------------------------------------------------------- Sequential

TEST(NnSequential, ChainsAndNamesChildren) {
  auto l1 = std::make_shared<nn::Linear>(3, 4, nn::LinearOptions{.bias = true, .dtype = kFloat64, .generator = test::seeded(1)});
  auto act = std::make_shared<nn::Tanh>();
  auto l2 = std::make_shared<nn::Linear>(4, 2, nn::LinearOptions{.bias = true, .dtype = kFloat64, .generator = test::seeded(2)});
  nn::Sequential seq({l1, act});
  seq.push_back(l2);
  EXPECT_EQ(seq.size(), 3u);
  EXPECT_EQ(&seq[1], act.get());
  Generator g(0);
  Tensor x = randn({5, 3}, g, kFloat64);
  expect_close(seq.forward(x), l2->forward(tanh(l1->forward(x))), 0.0);
  expect_close(seq(x), seq.forward(x), 0.0);
  auto names = seq.named_parameters();
  ASSERT_EQ(names.size(), 4u);
  EXPECT_EQ(names[0].first, "0.weight");
  EXPECT_EQ(names[1].first, "0.bias");
  EXPECT_EQ(names[2].first, "2.weight");
  EXPECT_EQ(names[3].first, "2.bias");
  auto mods = seq.named_modules();
  ASSERT_EQ(mods.size(), 4u);
  EXPECT_EQ(mods[1].first, "0");
  EXPECT_EQ(mods[2].first, "1");
  EXPECT_EQ(mods[3].first, "2");
  EXPECT_NE(seq.to_string().find("(1): Tanh"), std::string::npos) << seq.to_string();
  // gradients reach every parameter
  seq.forward(x).sum().backward();
  for (auto& [name, p] : names) EXPECT_TRUE(p.grad().defined()) << name;
  expect_error([&] { seq.push_back(nullptr); }, {"Sequential", "null"});
  // train/eval reaches the children
  seq.eval();
  EXPECT_FALSE(l2->is_training());
}

TEST(NnSequential, EmptyIsIdentity) {
  nn::Sequential seq;
  Tensor x = randn({2});
  EXPECT_TRUE(seq.forward(x).is_same(x));
}

// ---------------------------------------------------------------- cross_entropy

TEST(NnCrossEntropy, HandComputedCase) {
  // -log softmax([1, 2, 3])[2] = log(e^1 + e^2 + e^3) - 3
  Tensor logits = tensor(std::vector<double>{1, 2, 3}, {1, 3}).requires_grad_();
  Tensor target = tensor(std::vector<int64_t>{2});
  Tensor loss = nn::cross_entropy(logits, target);
  const double expected = std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0)) - 3.0;
  EXPECT_NEAR(expected, 0.40760596444438, 1e-13);
  EXPECT_EQ(loss.dim(), 0);
  EXPECT_NEAR(loss.item<double>(), expected, 1e-15);
  // gradient: softmax - one_hot
  loss.backward();
  const double s = std::exp(1.0) + std::exp(2.0) + std::exp(3.0);
  expect_values(logits.grad(), {std::exp(1.0) / s, std::exp(2.0) / s, std::exp(3.0) / s - 1}, 1e-15);
  ASSERT_NE(loss.grad_fn(), nullptr);
  EXPECT_STREQ(loss.grad_fn()->name(), "CrossEntropyBackward");
}

TEST(NnCrossEntropy, ReductionsAndBTCForm) {
  Generator g(12);
  Tensor logits = randn({2, 3, 5}, g, kFloat64);  // (B, T, C)
  Tensor targets = tensor(std::vector<int64_t>{0, 4, 2, 1, 1, 3}, {2, 3});
  // reference: -log_softmax picked by hand
  std::vector<double> lv = values(logits), per;
  for (int n = 0; n < 6; ++n) {
    double mx = -1e300, s = 0;
    for (int c = 0; c < 5; ++c) mx = std::max(mx, lv[n * 5 + c]);
    for (int c = 0; c < 5; ++c) s += std::exp(lv[n * 5 + c] - mx);
    per.push_back(std::log(s) + mx - lv[n * 5 + values(targets)[n]]);
  }
  double total = 0;
  for (double v : per) total += v;
  Tensor none = nn::cross_entropy(logits, targets, nn::Reduction::None);
  EXPECT_EQ(none.shape(), (Shape{2, 3}));
  expect_values(none, per, 1e-13);
  EXPECT_NEAR(nn::cross_entropy(logits, targets, nn::Reduction::Sum).item<double>(), total, 1e-13);
  EXPECT_NEAR(nn::cross_entropy(logits, targets).item<double>(), total / 6, 1e-13);
  // (B, T, C) equals the flattened (N, C) form
  EXPECT_NEAR(nn::cross_entropy(logits.reshape({6, 5}), targets.reshape({6})).item<double>(), total / 6, 1e-15);
}

TEST(NnCrossEntropy, IgnoreIndexExcludedFromMeanCount) {
  Tensor logits = tensor(std::vector<double>{1, 2, 3, 0, 0, 0, 3, 1, 1}, {3, 3}).requires_grad_();
  Tensor targets = tensor(std::vector<int64_t>{2, -100, 0});
  const double l0 = std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0)) - 3.0;
  const double l2 = std::log(std::exp(3.0) + 2 * std::exp(1.0)) - 3.0;
  Tensor mean = nn::cross_entropy(logits, targets);
  EXPECT_NEAR(mean.item<double>(), (l0 + l2) / 2, 1e-14);  // two counted targets, not three
  EXPECT_NEAR(nn::cross_entropy(logits, targets, nn::Reduction::Sum).item<double>(), l0 + l2, 1e-14);
  expect_values(nn::cross_entropy(logits, targets, nn::Reduction::None), {l0, 0, l2}, 1e-14);
  mean.backward();
  std::vector<double> gr = values(logits.grad());
  EXPECT_EQ(gr[3], 0.0);
  EXPECT_EQ(gr[4], 0.0);
  EXPECT_EQ(gr[5], 0.0);
  EXPECT_NEAR(gr[2], 0.5 * (std::exp(3.0) / (std::exp(1.0) + std::exp(2.0) + std::exp(3.0)) - 1), 1e-15);
  // a custom ignore_index (here a valid class id)
  EXPECT_NEAR(nn::cross_entropy(logits.detach(), tensor(std::vector<int64_t>{2, 1, 1}), nn::Reduction::Mean, 1)
                  .item<double>(),
              l0, 1e-14);
  // everything ignored: Mean is NaN (0 / 0, as in PyTorch), Sum is 0
  Tensor all_ignored = tensor(std::vector<int64_t>{-100, -100, -100});
  EXPECT_TRUE(std::isnan(nn::cross_entropy(logits.detach(), all_ignored).item<double>()));
  EXPECT_EQ(nn::cross_entropy(logits.detach(), all_ignored, nn::Reduction::Sum).item<double>(), 0.0);
}

TEST(NnCrossEntropy, StableAtHugeLogits) {
  // [1e4, -1e4, 0] target 0: loss = log(1 + e^-2e4 + e^-1e4) = 0 exactly in double
  Tensor logits = tensor(std::vector<double>{1e4, -1e4, 0, 1e4, -1e4, 0}, {2, 3}).requires_grad_();
  Tensor targets = tensor(std::vector<int64_t>{0, 1});
  Tensor none = nn::cross_entropy(logits, targets, nn::Reduction::None);
  std::vector<double> v = values(none);
  EXPECT_EQ(v[0], 0.0);
  EXPECT_EQ(v[1], 2e4);  // -(-1e4 - 1e4)
  Tensor loss = nn::cross_entropy(logits, targets, nn::Reduction::Sum);
  loss.backward();
  std::vector<double> gr = values(logits.grad());
  for (double x : gr) EXPECT_TRUE(std::isfinite(x));
  expect_values(logits.grad(), {0, 0, 0, 1, -1, 0}, 0.0);  // softmax = (1, 0, 0) exactly
  // float32 too
  Tensor f32 = tensor({1e4f, -1e4f, 0.f}, {1, 3});
  EXPECT_EQ(nn::cross_entropy(f32, tensor(std::vector<int64_t>{1})).item<float>(), 2e4f);
}

TEST(NnCrossEntropy, Errors) {
  Tensor logits = randn({2, 3, 4});
  std::string m = expect_error([&] { nn::cross_entropy(logits, tensor(std::vector<int64_t>{0, 1, 2, 3, 4, 0}, {2, 3})); },
                               {"cross_entropy", "target 4", "[1, 1]", "[0, 4)"});
  expect_error([&] { nn::cross_entropy(logits, tensor(std::vector<int64_t>{0, 1, 2, 3, 0, -1}, {2, 3})); },
               {"target -1", "[1, 2]"});
  expect_error([&] { nn::cross_entropy(logits, zeros({2, 3})); }, {"cross_entropy", "int64", "float32"});
  expect_error([&] { nn::cross_entropy(logits, tensor(std::vector<int64_t>{0, 1, 2}, {3})); },
               {"cross_entropy", "(3)", "(2, 3, 4)", "(2, 3)"});
  expect_error([&] { nn::cross_entropy(randn({4}), tensor(std::vector<int64_t>{0})); }, {"cross_entropy", "(4)"});
  expect_error([&] { nn::cross_entropy(tensor(std::vector<int64_t>{1, 2}, {1, 2}), tensor(std::vector<int64_t>{0})); },
               {"cross_entropy", "int64"});
}

TEST(NnCrossEntropy, Gradcheck) {
  Generator g(13);
  auto ce = [](nn::Reduction r, int64_t ignore) {
    return [r, ignore](const std::vector<Tensor>& in) { return nn::cross_entropy(in[0], in[1], r, ignore); };
  };
  Tensor t = tensor(std::vector<int64_t>{0, 3, 2}), t_ign = tensor(std::vector<int64_t>{1, -100, 3});
  for (nn::Reduction r : {nn::Reduction::Mean, nn::Reduction::Sum, nn::Reduction::None}) {
    EXPECT_GRADCHECK(ce(r, -100), {leaf({3, 4}, g), t});
    EXPECT_GRADCHECK(ce(r, -100), {leaf({3, 4}, g), t_ign});  // ignore_index
    EXPECT_GRADCHECK(ce(r, -100), {transposed_leaf({3, 4}, g), t});
    EXPECT_GRADCHECK(ce(r, -100), {leaf({2, 2, 3}, g), tensor(std::vector<int64_t>{0, 2, 1, 1}, {2, 2})});
  }
}

// ---------------------------------------------------------------- mse_loss

TEST(NnMseLoss, Values) {
  Tensor a = tensor(std::vector<double>{1, 2, 3, 4}, {2, 2});
  Tensor b = tensor(std::vector<double>{0, 2, 5, 1}, {2, 2});
  // squared errors 1, 0, 4, 9
  EXPECT_DOUBLE_EQ(nn::mse_loss(a, b).item<double>(), 14.0 / 4);
  EXPECT_DOUBLE_EQ(nn::mse_loss(a, b, nn::Reduction::Sum).item<double>(), 14.0);
  expect_values(nn::mse_loss(a, b, nn::Reduction::None), {1, 0, 4, 9});
  // broadcast target
  expect_values(nn::mse_loss(a, tensor(std::vector<double>{1, 1}), nn::Reduction::None), {0, 1, 4, 9});
  Tensor x = a.clone().requires_grad_();
  nn::mse_loss(x, b).backward();
  expect_values(x.grad(), {2 * 1 / 4.0, 0, 2 * -2 / 4.0, 2 * 3 / 4.0});  // 2 (a - b) / N
}

TEST(NnMseLoss, Gradcheck) {
  Generator g(14);
  for (nn::Reduction r : {nn::Reduction::Mean, nn::Reduction::Sum, nn::Reduction::None}) {
    auto f = [r](const std::vector<Tensor>& in) { return nn::mse_loss(in[0], in[1], r); };
    EXPECT_GRADCHECK(f, {leaf({2, 3}, g), leaf({2, 3}, g)});
    EXPECT_GRADCHECK(f, {transposed_leaf({3, 4}, g), leaf({4}, g)});
  }
}

