// The fused ops (autograd/ops/layer_norm.cpp, cross_entropy.cpp) against
// their readable references composed of ordinary ops: the same values and
// the same gradients, in float64, on inputs with several rows.
#include <gtest/gtest.h>

#include "autograd/ops.h"
#include "test_util.h"

namespace {

using namespace ember;
using ember::test::expect_close;

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

}  // namespace
