// The fused ops (autograd/ops/layer_norm.cpp, cross_entropy.cpp) against
// their readable references composed of ordinary ops: the same values and
// the same gradients, in float64, on inputs with several rows. And each op's
// two backward rules against each other: the loops of tensor/fused.cpp (a
// plain backward) and the formula in ember ops (a backward that records,
// create_graph).
#include <gtest/gtest.h>

#include "autograd/ops.h"
#include "test_util.h"

namespace {

using namespace ember;
using ember::test::expect_close;
using ember::test::expect_values;

// (x - mean) / sqrt(var + eps) * w + b over the last dim, op by op.
Tensor layer_norm_composed(const Tensor& x, const Tensor& w, const Tensor& b, double eps) {
  Tensor mu = mean(x, {-1}, true);
  Tensor var_biased = var(x, {-1}, /*correction=*/0, true);
  return (x - mu) / sqrt(var_biased + eps) * w + b;
}

// -log_softmax(logits)[target], averaged over the targets.
Tensor cross_entropy_composed(const Tensor& logits, const Tensor& targets) {
  Tensor logp = log_softmax(logits, -1);                            // (N, C)
  Tensor picked = gather(logp, 1, unsqueeze(targets, 1));           // (N, 1)
  return -mean(picked);
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
