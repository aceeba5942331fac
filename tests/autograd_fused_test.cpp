// The fused ops (autograd/composed_rule.h) against their composed
// fallbacks (ember::composed::): the same values and the same gradients, in
// float64, on inputs with several rows; the fallbacks against the textbook
// formulas; and each op's two backward rules against each other: the kernel
// (a plain backward) and the fallback's derivative (a backward that records,
// create_graph).
#include <gtest/gtest.h>

#include <cmath>

#include "autograd/ops.h"
#include "test_util.h"

namespace {

using namespace ember;
using ember::test::expect_close;
using ember::test::expect_values;

Tensor layer_norm_composed(const Tensor& x, const Tensor& w, const Tensor& b, double eps) {
  return composed::layer_norm(x, w, b, eps);
}
Tensor cross_entropy_composed(const Tensor& logits, const Tensor& targets) {
  return composed::cross_entropy(logits, targets, Reduction::Mean, -100, 1.0 / static_cast<double>(targets.numel()));
}

TEST(AutogradFused, FallbacksAreTheTextbookFormulas) {
  Generator g(2);
  Tensor x = randn({3, 5}, g, kFloat64), w = randn({5}, g, kFloat64), b = randn({5}, g, kFloat64);
  expect_close(composed::layer_norm(x, w, b, 1e-5),
               (x - mean(x, {-1}, true)) / sqrt(var(x, {-1}, 0, true) + 1e-5) * w + b, 1e-12);
  Tensor targets = tensor(std::vector<int64_t>{4, 0, 2});
  expect_close(cross_entropy_composed(x, targets), -mean(gather(log_softmax(x, -1), 1, unsqueeze(targets, 1))), 1e-14);
  const std::vector<double> xs = x.to_vector<double>();
  std::vector<double> exact, tanh_form;
  for (double v : xs) {
    exact.push_back(0.5 * v * (1 + std::erf(v / std::sqrt(2.0))));
    tanh_form.push_back(0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v))));
  }
  expect_values(composed::gelu(x, GeluApprox::None), exact, 1e-15);
  expect_values(composed::gelu(x, GeluApprox::Tanh), tanh_form, 1e-15);
}

TEST(AutogradFused, LayerNormEqualsComposedFormula) {
  Generator g(3);
  for (const Shape& s : {Shape{4, 7}, Shape{2, 3, 5}}) {
    const int64_t D = s.back();
    Tensor x = randn(s, g, kFloat64).requires_grad_(), w = randn({D}, g, kFloat64).requires_grad_(),
           b = randn({D}, g, kFloat64).requires_grad_();
    Tensor r = randn(s, g, kFloat64);  // a loss that weights every output differently
    Tensor fused = layer_norm(x, w, b, 1e-5);
    (fused * r).sum().backward();
    Tensor gx = x.grad(), gw = w.grad(), gb = b.grad();
    for (Tensor t : {x, w, b}) t.set_grad(Tensor());
    Tensor composed = layer_norm_composed(x, w, b, 1e-5);
    (composed * r).sum().backward();
    expect_close(fused, composed, 1e-12);
    expect_close(gx, x.grad(), 1e-12);
    expect_close(gw, w.grad(), 1e-12);
    expect_close(gb, b.grad(), 1e-12);
  }
}

TEST(AutogradFused, CrossEntropyEqualsComposedFormula) {
  Generator g(4);
  Tensor logits = (randn({6, 5}, g, kFloat64) * 3.0).detach().requires_grad_();
  Tensor targets = tensor(std::vector<int64_t>{0, 4, 2, 2, 1, 3});
  Tensor fused = cross_entropy(logits, targets);
  fused.backward();
  Tensor g_fused = logits.grad();
  logits.set_grad(Tensor());
  Tensor composed = cross_entropy_composed(logits, targets);
  composed.backward();
  expect_close(fused, composed, 1e-12);
  expect_close(g_fused, logits.grad(), 1e-12);
}

// The gradients of <op(inputs), v> with respect to `wrt`, by the kernel
// (create_graph off) and by the recorded formula (create_graph on).
std::pair<std::vector<Tensor>, std::vector<Tensor>> both_rules(const Tensor& out, const std::vector<Tensor>& wrt,
                                                               const Tensor& v) {
  std::vector<Tensor> plain = grad({out}, wrt, {v}, {.retain_graph = true});
  std::vector<Tensor> recorded = grad({out}, wrt, {v}, {.create_graph = true});
  // (the first input's gradient depends on that input: only the formula records it)
  EXPECT_TRUE(recorded[0].requires_grad()) << "the formula did not record";
  EXPECT_FALSE(plain[0].requires_grad());
  return {plain, recorded};
}

TEST(AutogradFused, LayerNormBackwardRulesAgree) {
  Generator g(5);
  for (const Shape& s : {Shape{130, 7}, Shape{2, 3, 1}, Shape{4, 33}}) {  // 130 rows: a partial block of 64
    const int64_t D = s.back();
    Tensor x = (randn(s, g, kFloat64) * 2.0).detach().requires_grad_(), w = randn({D}, g, kFloat64).requires_grad_(),
           b = randn({D}, g, kFloat64).requires_grad_();
    auto [plain, recorded] = both_rules(layer_norm(x, w, b, 1e-5), {x, w, b}, randn(s, g, kFloat64));
    for (size_t i = 0; i < plain.size(); ++i) expect_close(plain[i], recorded[i], 1e-11);
  }
}

TEST(AutogradFused, CrossEntropyBackwardRulesAgree) {
  Generator g(6);
  Tensor logits = (randn({2, 3, 7}, g, kFloat64) * 3.0).detach().requires_grad_();
  Tensor targets = tensor(std::vector<int64_t>{0, 6, -100, 3, 3, 1}, {2, 3});  // one row ignored
  for (Reduction r : {Reduction::Mean, Reduction::Sum, Reduction::None}) {
    Tensor out = cross_entropy(logits, targets, r);
    auto [plain, recorded] = both_rules(out, {logits}, randn(out.shape(), g, kFloat64));
    expect_close(plain[0], recorded[0], 1e-13);
    expect_values(plain[0].select(0, 0).select(0, 2), std::vector<double>(7, 0.0), 0);  // the ignored row
  }
}

}  // namespace

namespace {

TEST(AutogradFused, GeluAndAttentionEqualTheirFallbacks) {
  Generator g(7);
  for (GeluApprox a : {GeluApprox::None, GeluApprox::Tanh}) {
    Tensor x = (randn({5, 9}, g, kFloat64) * 2.0).detach().requires_grad_();
    Tensor v = randn({5, 9}, g, kFloat64);
    expect_close(gelu(x, a), composed::gelu(x, a), 1e-14);
    auto [plain, recorded] = both_rules(gelu(x, a), {x}, v);
    expect_close(plain[0], recorded[0], 1e-13);
  }
  for (bool causal : {false, true}) {
    Tensor q = randn({2, 6, 4}, g, kFloat64).requires_grad_(), k = randn({2, 6, 4}, g, kFloat64).requires_grad_(),
           v = randn({2, 6, 3}, g, kFloat64).requires_grad_();
    expect_close(tiled_attention(q, k, v, causal), composed::tiled_attention(q, k, v, causal), 1e-13);
    auto [plain, recorded] = both_rules(tiled_attention(q, k, v, causal), {q, k, v}, randn({2, 6, 3}, g, kFloat64));
    for (size_t i = 0; i < plain.size(); ++i) expect_close(plain[i], recorded[i], 1e-12);
  }
}

// q = k = v one tensor: the fallback gives each argument its own partial
// derivative, so the three add up to the gradient once, not three times.
TEST(AutogradFused, OneTensorPassedThreeTimesGetsEachPartialOnce) {
  Generator g(8);
  Tensor x = randn({5, 4}, g, kFloat64).requires_grad_();
  Tensor u = randn({5, 4}, g, kFloat64);
  Tensor plain = grad({tiled_attention(x, x, x, true)}, {x}, {u})[0];
  Tensor recorded = grad({tiled_attention(x, x, x, true)}, {x}, {u}, {.create_graph = true})[0];
  Tensor reference = grad({composed::tiled_attention(x, x, x, true)}, {x}, {u})[0];
  expect_close(plain, reference, 1e-12);
  expect_close(recorded, reference, 1e-12);
}

}  // namespace
