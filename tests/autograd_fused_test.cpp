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
using ember::test::expect_error;
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

// The backward kernels as ops (what a captured backward pass calls): from the
// statistics the *_saving forms return, the same bits as the nodes' backward.
bool same_bits(const Tensor& a, const Tensor& b) {
  return a.shape() == b.shape() && a.dtype() == b.dtype() && a.contiguous().to_vector<double>() == b.contiguous().to_vector<double>();
}

TEST(AutogradFused, BackwardKernelsAsOpsGiveTheNodesBits) {
  Generator g(9);
  for (DType dt : {kFloat32, kFloat64}) {
    Tensor x = randn({6, 5}, g, dt).requires_grad_(), w = randn({5}, g, dt).requires_grad_(),
           b = randn({5}, g, dt).requires_grad_(), u = randn({6, 5}, g, dt);
    const std::vector<Tensor> node = grad({layer_norm(x, w, b)}, {x, w, b}, {u});
    std::vector<Tensor> saved, ops;
    {
      NoGradGuard off;
      saved = detail::layer_norm_saving(x, w, b, 1e-5);
      ops = layer_norm_backward(u, x, w, saved[1], saved[2]);
    }
    EXPECT_TRUE(same_bits(saved[0], layer_norm(x, w, b)));
    ASSERT_EQ(ops.size(), 3u);
    for (size_t i = 0; i < 3; ++i) EXPECT_TRUE(same_bits(ops[i], node[i])) << "layer_norm gradient " << i;
    for (GeluApprox a : {GeluApprox::None, GeluApprox::Tanh}) {
      const Tensor by_node = grad({gelu(x, a)}, {x}, {u})[0];
      NoGradGuard off;
      EXPECT_TRUE(same_bits(gelu_backward(u, x, a), by_node));
    }
    Tensor q = randn({2, 4, 3}, g, dt).requires_grad_(), k = randn({2, 4, 3}, g, dt).requires_grad_(),
           v = randn({2, 4, 2}, g, dt).requires_grad_(), gq = randn({2, 4, 2}, g, dt);
    const std::vector<Tensor> att = grad({tiled_attention(q, k, v, true)}, {q, k, v}, {gq});
    {
      NoGradGuard off;
      const std::vector<Tensor> fwd = detail::tiled_attention_saving(q, k, v, true);
      const std::vector<Tensor> d = tiled_attention_backward(gq, q, k, v, fwd[0], fwd[1], true);
      for (size_t i = 0; i < 3; ++i) EXPECT_TRUE(same_bits(d[i], att[i])) << "attention gradient " << i;
    }
  }
}

// cross_entropy_backward counts its own targets: Mean over new targets with
// one more ignored row scales by 1/3, not by the 1/4 of an earlier run.
TEST(AutogradFused, CrossEntropyBackwardOpCountsItsTargets) {
  Generator g(10);
  Tensor logits = randn({4, 5}, g, kFloat64).requires_grad_();
  Tensor all = tensor(std::vector<int64_t>{1, 0, 4, 2}, {4}), some = tensor(std::vector<int64_t>{1, -100, 4, 2}, {4});
  const Tensor one = scalar_tensor(1.0, kFloat64);
  for (const Tensor& t : {all, some}) {
    for (Reduction r : {Reduction::Mean, Reduction::Sum, Reduction::None}) {
      const Tensor seed = r == Reduction::None ? randn({4}, g, kFloat64) : one;
      const Tensor by_node = grad({cross_entropy(logits, t, r)}, {logits}, {seed})[0];
      NoGradGuard off;
      const std::vector<Tensor> fwd = detail::cross_entropy_saving(logits, t, r, -100);
      EXPECT_TRUE(same_bits(cross_entropy_backward(seed, logits, t, fwd[1], r, -100), by_node));
    }
  }
}

TEST(AutogradFused, BackwardKernelOpsRefuseToRecordAndBadShapes) {
  Generator g(11);
  Tensor x = randn({3, 4}, g, kFloat64).requires_grad_(), w = randn({4}, g, kFloat64), u = randn({3, 4}, g, kFloat64);
  Tensor stats = zeros({3}, kFloat64);
  expect_error([&] { layer_norm_backward(u, x, w, stats, stats); }, "layer_norm_backward",
               {"no derivative of its own", "create_graph"});
  expect_error([&] { gelu_backward(u, x, GeluApprox::None); }, "gelu_backward", {"no derivative of its own"});
  NoGradGuard off;
  expect_error([&] { layer_norm_backward(u, x, w, zeros({2}, kFloat64), stats); }, {"layer_norm backward", "(3)", "mean (2)"});
  expect_error([&] { gelu_backward(zeros({4, 3}, kFloat64), x, GeluApprox::Tanh); }, {"gelu (tanh form) backward", "(3, 4)", "(4, 3)"});
  expect_error([&] { cross_entropy_backward(scalar_tensor(1.0, kFloat64), x, zeros({3}, kFloat64), stats, Reduction::Mean, -100); },
               "cross_entropy_backward", {"int64", "float64"});
  expect_error([&] { cross_entropy_backward(scalar_tensor(1.0, kFloat64), x, tensor(std::vector<int64_t>{0, 9, 1}, {3}), stats, Reduction::Sum, -100); },
               {"cross_entropy backward", "9"});
}

}  // namespace
