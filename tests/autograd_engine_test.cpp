// The backward engine and everything around it, checked against values
// computed by hand: the chain rule on small expressions, re-used nodes,
// accumulation, retain_graph, grad mode, the version counter, hooks, memory,
// anomaly mode, broadcasting, each op family's closed-form gradient,
// gradcheck itself and graph export.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "autograd/node.h"
#include "test_util.h"

namespace {

using namespace ember;
using test::expect_error;
using test::expect_values;
using test::values;

using test::f64;
// A float64 leaf that requires grad (1-D unless a shape is given).
Tensor param(const std::vector<double>& v) { return tensor(v).requires_grad_(); }
Tensor param(const std::vector<double>& v, const Shape& s) { return tensor(v, s).requires_grad_(); }
Tensor param_randn(const Shape& s, uint64_t seed) {
  Generator g(seed);
  return randn(s, g, kFloat64).requires_grad_();
}
double item(const Tensor& t) { return t.item<double>(); }

// ---- the chain rule on small expressions ----

// micrograd's example, one step further: n = a*b + c, o = tanh(n), L = o*a.
// a is used twice (in n and in L), so its gradient is the sum of two paths.
TEST(AutogradEngine, MicrogradExpression) {
  const double av = 0.5, bv = -1.0, cv = 0.8;
  Tensor a = param({av}), b = param({bv}), c = param({cv});
  Tensor n = a * b + c;
  Tensor o = tanh(n);
  Tensor L = o * a;
  L.backward();

  const double nv = av * bv + cv, ov = std::tanh(nv);
  EXPECT_NEAR(item(L), ov * av, 1e-15);
  const double dL_dn = av * (1 - ov * ov);  // dL/do * do/dn
  EXPECT_NEAR(item(c.grad()), dL_dn, 1e-15);
  EXPECT_NEAR(item(b.grad()), dL_dn * av, 1e-15);
  EXPECT_NEAR(item(a.grad()), ov + dL_dn * bv, 1e-15);  // direct path + path through n
}

TEST(AutogradEngine, ReusedTensorGetsTheSumOfItsPaths) {
  Tensor x = param({1, 2, 3});
  (x * x + x).sum().backward();
  expect_values(x.grad(), {3, 5, 7});  // d(x^2 + x) = 2x + 1
}

// x -> u = x^2 -> {2u, exp(u)} -> y. u's node must run once, with both
// contributions summed, before the gradient moves on to x.
TEST(AutogradEngine, DiamondGraph) {
  Tensor x = param({0.5, -1.0});
  Tensor u = x * x;
  u.retain_grad();
  Tensor y = (u * 2.0 + exp(u)).sum();
  y.backward();
  std::vector<double> xs = {0.5, -1.0}, du, dx;
  for (double v : xs) {
    du.push_back(2 + std::exp(v * v));
    dx.push_back(du.back() * 2 * v);
  }
  expect_values(u.grad(), du, 1e-12);
  expect_values(x.grad(), dx, 1e-12);
}

TEST(AutogradEngine, LeafGradientsAccumulateAcrossBackwardCalls) {
  Tensor x = param({1, -2});
  (x * x).sum().backward();
  expect_values(x.grad(), {2, -4});
  (x * x).sum().backward();  // a fresh graph; the grad adds up
  expect_values(x.grad(), {4, -8});
  x.set_grad(Tensor());  // what zero_grad does
  EXPECT_FALSE(x.grad().defined());
  (x * x).sum().backward();
  expect_values(x.grad(), {2, -4});
}

TEST(AutogradEngine, SecondBackwardWithoutRetainGraphThrows) {
  Tensor a = param({1, 2}), b = param({3, 4});
  Tensor y = (a / b).sum();
  y.backward();
  expect_error([&] { y.backward(); }, {"second time", "DivBackward", "retain_graph"});
}

// A rule written by hand that returns one gradient for its two inputs: an
// error naming the node and both counts, and no gradient reaches a leaf.
struct OneGradForTwo final : Node {
  EMBER_NODE_NAME(OneGradForTwo)
  std::vector<Tensor> apply(const Tensor& g) override { return {g}; }
};

TEST(AutogradEngine, RuleReturningTheWrongNumberOfGradientsIsRefused) {
  Tensor a = param({1, 2}), b = param({3, 4});
  Tensor out;
  {
    NoGradGuard no_grad;
    out = a + b;
  }
  record(out, std::make_shared<OneGradForTwo>(), {a, b});
  expect_error([&] { out.sum().backward(); }, {"backward", "OneGradForTwo returned 1 gradient(s) for its 2 input(s)"});
  EXPECT_FALSE(a.grad().defined());
  EXPECT_FALSE(b.grad().defined());
}

TEST(AutogradEngine, RetainGraphAllowsASecondBackward) {
  Tensor a = param({1, 2}), b = param({3, 4});
  Tensor y = (a * b).sum();
  y.backward(Tensor(), /*retain_graph=*/true);
  y.backward();
  expect_values(a.grad(), {6, 8});  // 2 * b
  expect_values(b.grad(), {2, 4});  // 2 * a
}

TEST(AutogradEngine, BackwardOnNonScalarNeedsAGradient) {
  Tensor x = param({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor y = x * 2.0;
  expect_error([&] { y.backward(); }, {"backward", "(2, 3)"});
  y.backward(f64({1, 0, 0, 0, 0, -1}, {2, 3}));
  expect_values(x.grad(), {2, 0, 0, 0, 0, -2});
  expect_error([&] { y.backward(f64({1, 2, 3})); }, {"backward", "(3)", "(2, 3)"});
}

TEST(AutogradEngine, OnlyFloatingTensorsCanRequireGrad) {
  expect_error([] { tensor(std::vector<int64_t>{1, 2}).requires_grad_(); }, {"requires_grad_", "int64"});
  expect_error([] { tensor(std::vector<bool>{true}).requires_grad_(); }, {"requires_grad_", "bool"});
}

TEST(AutogradEngine, ConstantsInTheMiddleGetNoGradient) {
  Tensor w = param({1, 2, 3});
  Tensor c = f64({4, 5, 6});  // does not require grad
  Tensor k = c * 2.0;         // so neither does this
  EXPECT_FALSE(k.requires_grad());
  EXPECT_EQ(k.grad_fn(), nullptr);
  Tensor y = (w * c + k).sum();
  EXPECT_TRUE(y.requires_grad());
  y.backward();
  expect_values(w.grad(), {4, 5, 6});
  EXPECT_FALSE(c.grad().defined());
  EXPECT_FALSE(k.grad().defined());
}

TEST(AutogradEngine, BroadcastGradientsAreSummedToTheInputShape) {
  Tensor x = param({1, 2, 3}, {3, 1});
  Tensor y = param({1, 2, 3, 4}, {1, 4});
  (x + y).sum().backward();
  EXPECT_EQ(x.grad().shape(), (Shape{3, 1}));
  EXPECT_EQ(y.grad().shape(), (Shape{1, 4}));
  expect_values(x.grad(), {4, 4, 4});  // each x[i] met 4 y's
  expect_values(y.grad(), {3, 3, 3, 3});

  Tensor a = param({1, 2, 3}, {3, 1});
  Tensor b = param({10, 20, 30, 40}, {4});
  (a * b).sum().backward();
  expect_values(a.grad(), {100, 100, 100});  // sum of b
  expect_values(b.grad(), {6, 6, 6, 6});     // sum of a
}

// ---- grad mode ----

TEST(AutogradGradMode, NoGradGuardRecordsNothing) {
  Tensor x = param({1, 2});
  EXPECT_TRUE(is_grad_enabled());
  {
    NoGradGuard no_grad;
    EXPECT_FALSE(is_grad_enabled());
    Tensor y = (x * 2.0).exp().sum();
    EXPECT_FALSE(y.requires_grad());
    EXPECT_EQ(y.grad_fn(), nullptr);
    {
      NoGradGuard nested;
      EXPECT_FALSE(is_grad_enabled());
    }
    EXPECT_FALSE(is_grad_enabled());  // the inner guard restores "off", not "on"
  }
  EXPECT_TRUE(is_grad_enabled());
  Tensor z = x * 2.0;
  EXPECT_TRUE(z.requires_grad());
  EXPECT_STREQ(z.grad_fn()->name(), "MulScalarBackward");
}

TEST(AutogradGradMode, GuardRestoresAManuallySetMode) {
  set_grad_enabled(false);
  {
    NoGradGuard g;
    EXPECT_FALSE(is_grad_enabled());
  }
  EXPECT_FALSE(is_grad_enabled());
  set_grad_enabled(true);
  EXPECT_TRUE(is_grad_enabled());
}

// ---- in-place writes and the version counter ----

TEST(AutogradInplace, ModifyingASavedTensorIsCaughtAtBackward) {
  Tensor a = randn({3, 4}).requires_grad_();
  Tensor b = ones({3, 4});
  // ones() fills the new buffer with fill_, which counts as one write.
  EXPECT_EQ(b.version(), 1u);
  Tensor c = a * b;  // MulBackward saves b (to compute a's gradient) at version 1
  b.mul_(2.0);
  EXPECT_EQ(b.version(), 2u);
  expect_error([&] { c.sum().backward(); },
               {"has been modified by an inplace operation: [float32 (3, 4)], which is saved by MulBackward, "
                "is at version 2; expected version 1"});
}

TEST(AutogradInplace, UnmodifiedSavedTensorsPassTheCheck) {
  Tensor a = param({1, 2});
  Tensor b = f64({3, 4});
  Tensor c = a * b;
  Tensor other = f64({0, 0});
  other.add_(1.0);  // a different storage: no effect on c's graph
  c.sum().backward();
  expect_values(a.grad(), {3, 4});
}

TEST(AutogradInplace, LeafThatRequiresGradOnlyUnderNoGrad) {
  Tensor w = param({1, 2, 3});
  expect_error([&] { w.add_(1.0); }, {"add_", "leaf", "(3)", "NoGradGuard"});
  expect_error([&] { w.mul_(2.0); }, {"mul_", "leaf"});
  expect_values(w, {1, 2, 3});  // nothing was written
  const uint64_t v = w.version();
  {
    NoGradGuard no_grad;  // an optimizer step
    w.add_(f64({1, 1, 1}), -0.5);
  }
  expect_values(w, {0.5, 1.5, 2.5});
  EXPECT_EQ(w.version(), v + 1);
  EXPECT_TRUE(w.requires_grad());
}

TEST(AutogradInplace, NonLeafInTheGraphRefusesInplace) {
  Tensor x = param({1, 2});
  Tensor y = x.exp();
  expect_error([&] { y.mul_(2.0); }, {"mul_", "ExpBackward"});
}

// ---- hooks, retain_grad, detach ----

TEST(AutogradHooks, LeafHookSeesAndReplacesTheGradient) {
  Tensor x = param({1, 2});
  std::vector<double> seen;
  x.register_hook([&](const Tensor& g) -> std::optional<Tensor> {
    seen = values(g);
    return g * 2.0;
  });
  pow(x, 2.0).sum().backward();
  EXPECT_EQ(seen, (std::vector<double>{2, 4}));
  expect_values(x.grad(), {4, 8});
}

TEST(AutogradAccumulate, AFirstGradientNobodyElseHoldsBecomesGradWithoutACopy) {
  // A large embedding's gradient is hundreds of megabytes: .grad takes the
  // tensor the engine computed (as PyTorch does) instead of copying it.
  Tensor x = param({1, 2, 3});
  const void* made = nullptr;
  x.register_hook([&](const Tensor& g) -> std::optional<Tensor> {
    Tensor mine = g * 1.0;  // a fresh tensor; only the engine holds it once the hook returns
    made = mine.data_ptr<double>();
    return mine;
  });
  (x * 3.0).sum().backward();
  expect_values(x.grad(), {3, 3, 3});
  EXPECT_EQ(static_cast<const void*>(x.grad().data_ptr<double>()), made);
  // A gradient someone else still holds is copied, so that a later
  // accumulation into .grad cannot change it under them.
  Tensor y = param({1, 2});
  Tensor held;
  y.register_hook([&](const Tensor& g) -> std::optional<Tensor> {
    held = g * 1.0;
    return held;
  });
  (y * 2.0).sum().backward();
  EXPECT_NE(static_cast<const void*>(y.grad().data_ptr<double>()), static_cast<const void*>(held.data_ptr<double>()));
  (y * 2.0).sum().backward();
  expect_values(y.grad(), {4, 4});
  expect_values(held, {2, 2});
}

TEST(AutogradAccumulate, AGradThatRepeatsOneMemoryIsReplacedNotWrittenThrough) {
  // set_grad of an expanded tensor that nothing else holds: three elements,
  // one number in memory. Adding into it in place would pile every element
  // onto that number; the sum is a new tensor. The same for the rows of a
  // sparse table.
  Tensor x = param({1, 2, 3});
  x.set_grad(tensor({10.0}, kFloat64).expand({3}));
  (x * tensor({1.0, 2.0, 3.0}, kFloat64)).sum().backward();
  expect_values(x.grad(), {11, 12, 13});
  nn::Embedding table(4, 2, {.dtype = kFloat64, .sparse = true});
  table.weight.set_grad(tensor({1.0, 1.0}, kFloat64).expand({4, 2}));
  table.forward(tensor(std::vector<int64_t>{2})).sum().backward();
  expect_values(table.weight.grad(), {1, 1, 1, 1, 2, 2, 1, 1});
}

TEST(AutogradHooks, NonLeafHookChangesWhatFlowsFurther) {
  Tensor x = param({1, 2});
  Tensor u = x * 3.0;
  std::vector<double> seen;
  u.register_hook([&](const Tensor& g) -> std::optional<Tensor> {
    seen = values(g);
    return g * 2.0;
  });
  int observer_calls = 0;
  u.register_hook([&](const Tensor&) -> std::optional<Tensor> {
    ++observer_calls;
    return std::nullopt;  // observe only
  });
  (u * u).sum().backward();
  EXPECT_EQ(seen, (std::vector<double>{6, 12}));  // dy/du = 2u
  EXPECT_EQ(observer_calls, 1);
  expect_values(x.grad(), {36, 72});  // 3 * (2 * 2u) = 36x
}

TEST(AutogradHooks, HookMustKeepTheShape) {
  Tensor x = param({1, 2});
  x.register_hook([](const Tensor&) -> std::optional<Tensor> { return f64({1, 2, 3}); });
  expect_error([&] { (x * 1.0).sum().backward(); }, {"register_hook", "(3)", "(2)"});
}

TEST(AutogradHooks, HookOnATensorWithoutGradThrows) {
  expect_error([] { f64({1}).register_hook([](const Tensor&) { return std::optional<Tensor>(); }); },
               {"register_hook", "(1)", "does not require grad"});
}

TEST(AutogradHooks, RetainGradKeepsANonLeafGradient) {
  Tensor x = param({1, 2});
  Tensor u = x * 3.0, v = x * 3.0;
  u.retain_grad();
  ((u * u).sum() + (v * v).sum()).backward();
  expect_values(u.grad(), {6, 12});    // 2u
  EXPECT_FALSE(v.grad().defined());    // not retained: freed as backward went on
}

TEST(AutogradHooks, DetachSharesStorageButNotTheGraph) {
  Tensor x = param({1, 2, 3});
  Tensor y = x * 2.0;
  Tensor d = y.detach();
  EXPECT_EQ(d.storage(), y.storage());
  EXPECT_FALSE(d.requires_grad());
  EXPECT_EQ(d.grad_fn(), nullptr);
  EXPECT_TRUE(d.is_leaf());
  d.fill_(7.0);  // allowed: d is not in a graph; y sees the write
  expect_values(y, {7, 7, 7});
  EXPECT_FALSE(d.grad().defined());
}

// ---- memory: deep graphs, freeing ----

constexpr int kDeep = 100000;

TEST(AutogradMemory, HundredThousandDeepChainBackward) {
  Tensor x = ones({4}).requires_grad_();
  Tensor y = x;
  for (int i = 0; i < kDeep; ++i) y = y * 1.0 + 0.0;
  y.sum().backward();  // the engine loops; a recursive one would overflow the stack
  expect_values(x.grad(), {1, 1, 1, 1});
}

TEST(AutogradMemory, HundredThousandDeepChainDroppedWithoutBackward) {
  Tensor x = ones({4}).requires_grad_();
  std::weak_ptr<Node> first;
  {
    Tensor y = x * 1.0;
    first = y.grad_fn();
    for (int i = 0; i < kDeep; ++i) y = y * 1.0 + 0.0;
  }  // ~TensorImpl releases 200 000 nodes in a loop, not by recursion
  EXPECT_TRUE(first.expired());
  EXPECT_EQ(x.impl_ptr().use_count(), 1);  // no edge holds the leaf any more
}

TEST(AutogradMemory, DroppingTheOutputFreesTheGraphAndSavedTensors) {
  Tensor x = param({0.1, 0.2, 0.3});
  std::weak_ptr<Node> exp_node;
  std::weak_ptr<TensorImpl> saved_alias;
  std::weak_ptr<Storage> saved_storage;
  {
    Tensor mid = x.exp();  // ExpBackward saves mid (its output)
    exp_node = mid.grad_fn();
    saved_alias = mid.grad_fn()->saved()[0]->peek().impl_ptr();
    saved_storage = mid.storage();
    Tensor out = (mid * mid).sum();
    mid = Tensor();  // only the graph keeps mid's numbers alive now
    EXPECT_FALSE(saved_storage.expired());
    EXPECT_FALSE(saved_alias.expired());
  }  // out dropped without backward
  EXPECT_TRUE(exp_node.expired());
  EXPECT_TRUE(saved_alias.expired());
  EXPECT_TRUE(saved_storage.expired());
  EXPECT_EQ(x.impl_ptr().use_count(), 1);
}

TEST(AutogradMemory, BackwardFreesSavedTensorsUnlessRetained) {
  Tensor x = param({0.1, 0.2});
  Tensor mid = x.exp();
  std::weak_ptr<Storage> storage = mid.storage();
  Tensor out = (mid * 3.0).sum();
  mid = Tensor();
  out.backward(Tensor(), /*retain_graph=*/true);
  EXPECT_FALSE(storage.expired());  // kept for another backward
  out.backward();
  EXPECT_TRUE(storage.expired());  // freed although `out` and its graph are alive
}

// Each node frees what it saved right after its rule ran, not at the end of
// the pass: by the time the leaf's hook runs (after the last node that sends
// to it), the activation is gone; with retain_graph it stays.
TEST(AutogradMemory, EachNodeFreesItsSavedTensorsAsSoonAsItRan) {
  for (bool retain : {false, true}) {
    Tensor x = param({0.1, 0.2});
    Tensor mid = x.exp();  // ExpBackward saves mid
    std::weak_ptr<Storage> storage = mid.storage();
    Tensor out = (mid * 3.0).sum();
    mid = Tensor();
    bool freed_before_leaf = false;
    x.register_hook([&](const Tensor&) -> std::optional<Tensor> {
      freed_before_leaf = storage.expired();
      return std::nullopt;
    });
    out.backward(Tensor(), retain);
    EXPECT_EQ(freed_before_leaf, !retain) << "retain_graph " << retain;
  }
}

// ---- anomaly mode ----

TEST(AutogradAnomaly, NamesTheNodeThatProducedNaNOrInf) {
  Tensor x = param({0.0, 1.0});
  Tensor y = sqrt(x).sum();  // d sqrt(x) at 0 is 1/(2*0) = inf
  AnomalyGuard anomaly;
  expect_error([&] { y.backward(); }, {"anomaly", "SqrtBackward", "NaN or Inf", "(2)"});
}

TEST(AutogradAnomaly, OffByDefaultInfFlowsThrough) {
  EXPECT_FALSE(is_anomaly_enabled());
  Tensor x = param({0.0, 1.0});
  sqrt(x).sum().backward();
  std::vector<double> g = values(x.grad());
  EXPECT_TRUE(std::isinf(g[0]));
  EXPECT_DOUBLE_EQ(g[1], 0.5);
  {
    AnomalyGuard on;
    EXPECT_TRUE(is_anomaly_enabled());
  }
  EXPECT_FALSE(is_anomaly_enabled());
}

TEST(AutogradAnomaly, LogAtZero) {
  Tensor x = param({0.0, 2.0});
  Tensor y = log(x).sum();
  AnomalyGuard anomaly;
  expect_error([&] { y.backward(); }, {"LogBackward"});
}

// ---- closed-form gradients, op family by op family ----

TEST(AutogradOps, SumOfSquaresAndMean) {
  Tensor x = param({1, -2, 3, 0.5}, {2, 2});
  pow(x, 2.0).sum().backward();
  expect_values(x.grad(), {2, -4, 6, 1});  // 2x
  Tensor y = param({1, 2, 3, 4});
  y.mean().backward();
  expect_values(y.grad(), {0.25, 0.25, 0.25, 0.25});
  Tensor z = param({1, 2, 3, 4, 5, 6}, {2, 3});
  z.mean({1}).sum().backward();
  expect_values(z.grad(), {1. / 3, 1. / 3, 1. / 3, 1. / 3, 1. / 3, 1. / 3});
}

TEST(AutogradOps, UnaryDerivatives) {
  const std::vector<double> v = {-0.7, 0.3, 1.2};
  auto grad_of = [&](Tensor (*f)(const Tensor&)) {
    Tensor x = param(v);
    f(x).sum().backward();
    return x.grad();
  };
  std::vector<double> tanh_d, sig_d, exp_d, sin_d;
  for (double t : v) {
    tanh_d.push_back(1 - std::tanh(t) * std::tanh(t));
    double s = 1 / (1 + std::exp(-t));
    sig_d.push_back(s * (1 - s));
    exp_d.push_back(std::exp(t));
    sin_d.push_back(std::cos(t));
  }
  expect_values(grad_of(tanh), tanh_d, 1e-12);
  expect_values(grad_of(sigmoid), sig_d, 1e-12);
  expect_values(grad_of(exp), exp_d, 1e-12);
  expect_values(grad_of(sin), sin_d, 1e-12);
  expect_values(grad_of(relu), {0, 1, 1});
  expect_values(grad_of(abs), {-1, 1, 1});
}

TEST(AutogradOps, ClampWhereMaskedFillZeroTheRightPlaces) {
  Tensor x = param({-2, 0.5, 3});
  clamp(x, -1.0, 1.0).sum().backward();
  expect_values(x.grad(), {0, 1, 0});

  Tensor cond = tensor(std::vector<bool>{true, false, true});
  Tensor a = param({1, 2, 3}), b = param({4, 5, 6});
  where(cond, a, b).sum().backward();
  expect_values(a.grad(), {1, 0, 1});
  expect_values(b.grad(), {0, 1, 0});

  Tensor m = param({1, 2, 3});
  masked_fill(m, tensor(std::vector<bool>{false, true, false}), -9.0).sum().backward();
  expect_values(m.grad(), {1, 0, 1});

  Tensor t = param({1, 2, 3, 4}, {2, 2});
  tril(t).sum().backward();
  expect_values(t.grad(), {1, 0, 1, 1});
}

TEST(AutogradOps, SoftmaxMatchesTheFormula) {
  Tensor x = param({0.1, -0.4, 0.9, 1.5, 0.0, -1.0}, {2, 3});
  Tensor w = f64({1, 2, 3, -1, 0.5, 2}, {2, 3});
  Tensor y = softmax(x, -1);
  (y * w).sum().backward();
  // dx = y * (w - sum_j(w_j y_j)), row by row
  std::vector<double> yv = values(y), wv = values(w), expected(6);
  for (int r = 0; r < 2; ++r) {
    double dot = 0;
    for (int j = 0; j < 3; ++j) dot += wv[r * 3 + j] * yv[r * 3 + j];
    for (int j = 0; j < 3; ++j) expected[r * 3 + j] = yv[r * 3 + j] * (wv[r * 3 + j] - dot);
  }
  expect_values(x.grad(), expected, 1e-12);

  Tensor x2 = param({0.1, -0.4, 0.9, 1.5, 0.0, -1.0}, {2, 3});
  (log_softmax(x2, -1) * w).sum().backward();
  // dx = w - softmax(x) * sum_j(w_j)
  for (int r = 0; r < 2; ++r) {
    double sw = wv[r * 3] + wv[r * 3 + 1] + wv[r * 3 + 2];
    for (int j = 0; j < 3; ++j) expected[r * 3 + j] = wv[r * 3 + j] - yv[r * 3 + j] * sw;
  }
  expect_values(x2.grad(), expected, 1e-12);
}

TEST(AutogradOps, VarAndNorm) {
  Tensor x = param({1, 2, 4});
  var(x).backward();  // mean 7/3, d var = 2 (x - mean) / (n - 1)
  expect_values(x.grad(), {-4. / 3, -1. / 3, 5. / 3}, 1e-12);
  Tensor y = param({3, -4});
  norm(y).backward();  // x / ||x||
  expect_values(y.grad(), {0.6, -0.8}, 1e-12);
  Tensor z = param({0, 0});
  norm(z).backward();  // 0 at the origin (a subgradient), not NaN
  expect_values(z.grad(), {0, 0});
}

TEST(AutogradOps, MatmulGradientsAreGBtAndAtG) {
  Tensor A = param_randn({2, 3}, 1), B = param_randn({3, 4}, 2);
  Generator gen(3);
  Tensor g = randn({2, 4}, gen, kFloat64);
  matmul(A, B).backward(g);
  NoGradGuard no_grad;
  test::expect_close(A.grad(), matmul(g, B.t()), 1e-12);
  test::expect_close(B.grad(), matmul(A.t(), g), 1e-12);
}

// A batched a times a shared 2-d b folds the batch into one product for b's
// gradient; with an inner or outer size of 0 that fold must still know its
// row count (B·M), where a reshape to (-1, 0) could not.
TEST(AutogradOps, MatmulBatchedTimesMatrixWithAZeroSize) {
  for (const auto& [k, n] : std::vector<std::pair<int64_t, int64_t>>{{0, 4}, {3, 0}, {0, 0}}) {
    Tensor A = zeros({2, 5, k}, kFloat64).requires_grad_(), B = zeros({k, n}, kFloat64).requires_grad_();
    matmul(A, B).sum().backward();
    EXPECT_EQ(A.grad().shape(), (Shape{2, 5, k}));
    EXPECT_EQ(B.grad().shape(), (Shape{k, n}));
  }
  // and with numbers: (2, 2, 1) @ (1, 0) has no outputs, so every gradient is 0
  Tensor A = param({1, 2, 3, 4}, {2, 2, 1}), B = zeros({1, 0}, kFloat64).requires_grad_();
  matmul(A, B).sum().backward();
  expect_values(A.grad(), {0, 0, 0, 0});
}

TEST(AutogradOps, MatmulVectorCases) {
  Tensor a = param({1, 2, 3}), b = param({4, 5, 6});
  matmul(a, b).backward();  // dot product: grads swap
  expect_values(a.grad(), {4, 5, 6});
  expect_values(b.grad(), {1, 2, 3});
  Tensor M = param({1, 2, 3, 4, 5, 6}, {2, 3}), v = param({1, 0, -1});
  matmul(M, v).sum().backward();
  expect_values(M.grad(), {1, 0, -1, 1, 0, -1});  // outer(ones(2), v)
  expect_values(v.grad(), {5, 7, 9});             // column sums of M
}

TEST(AutogradOps, IndexSelectWithRepeatedIdsAccumulates) {
  Tensor x = param({1, 2, 3, 4, 5, 6}, {3, 2});
  Tensor ids = tensor(std::vector<int64_t>{0, 2, 0});
  index_select(x, 0, ids).sum().backward();
  expect_values(x.grad(), {2, 2, 0, 0, 1, 1});  // row 0 picked twice, row 1 never
  Tensor y = param({1, 2, 3});
  gather(y, 0, tensor(std::vector<int64_t>{2, 2, 1, 2})).sum().backward();
  expect_values(y.grad(), {0, 1, 3});
}

TEST(AutogradOps, MaxAlongDimGradientGoesToTheArgmax) {
  Tensor x = param({1, 5, 3, 7, 2, 4}, {2, 3});
  auto [vals, idx] = max(x, 1);
  expect_values(vals, {5, 7});
  vals.backward(f64({10, 20}));
  expect_values(x.grad(), {0, 10, 0, 20, 0, 0});
  Tensor y = param({1, 5, 3, 7, 2, 4}, {2, 3});
  min(y).backward();
  expect_values(y.grad(), {1, 0, 0, 0, 0, 0});
  Tensor z = param({1, 9, 3});
  max(z).backward();
  expect_values(z.grad(), {0, 1, 0});
}

TEST(AutogradOps, ViewsPutTheGradientBack) {
  Tensor x = param({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor w = f64({1, 2, 3, 4, 5, 6}, {3, 2});
  (x.t() * w).sum().backward();
  expect_values(x.grad(), {1, 3, 5, 2, 4, 6});  // w transposed back

  Tensor e = param({1, 2, 3}, {3, 1});
  e.expand({3, 4}).sum().backward();
  expect_values(e.grad(), {4, 4, 4});

  Tensor s = param({1, 2, 3, 4, 5, 6});
  s.slice(0, 0, 6, 2).sum().backward();
  expect_values(s.grad(), {1, 0, 1, 0, 1, 0});

  Tensor c1 = param({1, 2}), c2 = param({3});
  (cat({c1, c2}) * f64({10, 20, 30})).sum().backward();
  expect_values(c1.grad(), {10, 20});
  expect_values(c2.grad(), {30});
}

TEST(AutogradOps, ToConvertsTheGradientBack) {
  Tensor x = tensor({1.f, 2.f}).requires_grad_();  // float32
  Tensor y = x.to(kFloat64);
  EXPECT_STREQ(y.grad_fn()->name(), "ToBackward");
  (y * f64({3, 4})).sum().backward();
  EXPECT_EQ(x.grad().dtype(), kFloat32);  // a gradient has its tensor's dtype
  expect_values(x.grad(), {3, 4});
  Tensor z = param({1, 2});
  EXPECT_TRUE(z.to(kFloat64).is_same(z));  // same dtype: x itself, nothing recorded
}

// ---- gradcheck itself ----

TEST(AutogradGradcheck, PassesForACorrectFunction) {
  Tensor x = param_randn({2, 3}, 5);
  GradcheckResult r = gradcheck([](const std::vector<Tensor>& in) { return tanh(in[0]) * in[0]; }, {x});
  EXPECT_TRUE(r.ok) << r.report;
  EXPECT_EQ(r.checked, 36);  // 6 outputs x 6 inputs
  EXPECT_LT(r.max_abs_err, 1e-6);
}

TEST(AutogradGradcheck, RejectsFloat32Inputs) {
  Tensor x = randn({3}).requires_grad_();
  expect_error([&] { gradcheck([](const std::vector<Tensor>& in) { return in[0] * 2.0; }, {x}); },
               {"gradcheck", "float32", "(3)", "float64"});
}

TEST(AutogradGradcheck, RejectsOverlappingMemory) {
  Tensor x = randn({3}, kFloat64).expand({4, 3}).detach().requires_grad_();  // stride 0 in dim 0
  expect_error([&] { gradcheck([](const std::vector<Tensor>& in) { return in[0] * 2.0; }, {x}); },
               {"gradcheck", "(4, 3)", "overlapping memory"});
}

TEST(AutogradGradcheck, ReportsAWrongGradient) {
  // A hook that doubles the gradient makes backward disagree with the
  // function's true derivative. (The hook exists only when grad is on: the
  // numerical evaluations run under NoGradGuard.)
  auto wrong = [](const std::vector<Tensor>& in) {
    Tensor h = in[0] * 3.0;
    if (h.requires_grad()) h.register_hook([](const Tensor& g) -> std::optional<Tensor> { return g * 2.0; });
    return sin(h);
  };
  Tensor x = param_randn({3}, 6);
  GradcheckResult r = gradcheck(wrong, {x});
  EXPECT_FALSE(r.ok);
  EXPECT_FALSE(static_cast<bool>(r));
  EXPECT_GT(r.max_abs_err, 0.1);
  for (const char* part : {"input 0", "(3)", "element", "analytic", "numeric"})
    EXPECT_NE(r.report.find(part), std::string::npos) << r.report;
}

// ---- graph export ----

TEST(AutogradGraphExport, DotNamesNodesLeavesAndShapes) {
  Tensor w = randn({2, 3}, kFloat64).requires_grad_();
  w.set_name("w");
  Tensor x = ones({2, 3}, kFloat64);
  Tensor prod = (w * x).set_name("prod");
  Tensor y = prod.sum();
  std::string dot = to_dot(y);
  // Leaves and intermediate tensors by name and shape; a 0-d shape reads "scalar".
  for (const char* part : {"digraph", "MulBackward", "SumBackward", "w (2, 3)", "prod (2, 3)", "computes scalar",
                           "output scalar", "accumulate"})
    EXPECT_NE(dot.find(part), std::string::npos) << "missing " << part << " in\n" << dot;
  EXPECT_EQ(dot.find("= "), std::string::npos) << "values only when asked";
  // Asked: values of the tensors still alive, and the leaf's gradient after a backward.
  y.backward(Tensor(), /*retain_graph=*/true);
  std::string with = to_dot(y, {.values = true, .grads = true});
  EXPECT_NE(with.find("grad [1, 1, 1, 1, ...]"), std::string::npos) << with;  // d sum(w * 1) / dw = 1
  EXPECT_NE(with.find("= ["), std::string::npos) << with;                     // w's and prod's values

  const std::string path = (std::filesystem::temp_directory_path() / "ember_graph_export_test.dot").string();
  write_dot(y, path);
  std::ifstream f(path);
  std::stringstream read;
  read << f.rdbuf();
  EXPECT_EQ(read.str(), dot);
  std::filesystem::remove(path);
  expect_error([&] { write_dot(y, "/nonexistent-dir/graph.dot"); }, {"write_dot", "/nonexistent-dir/graph.dot"});
}

// ---- cases that are easy to get wrong ----

// A slice of an expand view (stride 0): the gradient must be written into a
// fresh input-shaped buffer, not through the input's aliased strides.
TEST(AutogradRegression, SliceOfAnExpandedView) {
  Tensor x = param({1, 2, 3}, {1, 3});
  x.expand({4, 3}).select(0, 1).sum().backward();
  expect_values(x.grad(), {1, 1, 1});
  Tensor y = param({1, 2, 3}, {1, 3});
  EXPECT_GRADCHECK([](const std::vector<Tensor>& in) { return in[0].expand({4, 3}).narrow(0, 1, 2); }, {y});
}

// A leaf used on two paths: its hooks run once, on the total gradient (as in
// PyTorch), so a non-linear hook such as clipping sees the real gradient.
TEST(AutogradRegression, LeafHookRunsOnceOnTheTotalGradient) {
  Tensor a = param({1, 1});
  int calls = 0;
  std::vector<double> seen;
  a.register_hook([&](const Tensor& g) -> std::optional<Tensor> {
    ++calls;
    seen = values(g);
    return std::nullopt;
  });
  (a * 2.0 + a * 3.0).sum().backward();
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(seen, (std::vector<double>{5, 5}));
}

// A leaf's hooks run once, on its total gradient, after the whole graph has
// run and just before that total goes into .grad; a non-leaf's hooks run when
// its node is reached.
TEST(AutogradHooks, ALeafHookRunsOnItsTotalJustBeforeGradIsWritten) {
  Tensor a = param({1, 2}), b = param({3, 4});
  Tensor u = b * 2.0;  // feeds only b's part of the graph
  Tensor loss = (u.exp() * a).sum();
  std::vector<std::string> order;
  a.register_hook([&](const Tensor&) -> std::optional<Tensor> {
    order.push_back("a");
    EXPECT_FALSE(b.grad().defined()) << "leaves are written one after another, a first";
    return std::nullopt;
  });
  u.register_hook([&](const Tensor&) -> std::optional<Tensor> {
    order.push_back("u");
    EXPECT_FALSE(a.grad().defined()) << ".grad is written after the whole graph";
    return std::nullopt;
  });
  b.register_hook([&](const Tensor&) -> std::optional<Tensor> {
    order.push_back("b");
    return std::nullopt;
  });
  loss.backward();
  // u's node runs during the walk; the leaves come after it, in the order
  // their gradients first arrived (a's from the product, before b's).
  EXPECT_EQ(order, (std::vector<std::string>{"u", "a", "b"}));
  expect_values(a.grad(), {std::exp(6.0), std::exp(8.0)});
  expect_values(b.grad(), {2 * std::exp(6.0), 4 * std::exp(8.0)}, 1e-9 * std::exp(8.0));
}

// Under grad() the hooks of its inputs run on the gradient that is returned;
// a leaf that is not an input keeps its hooks unrun. With create_graph the
// hook sees a recorded gradient, and the result can still be differentiated
// again.
TEST(AutogradHooks, UnderGradTheInputsHooksRunOnTheReturnedGradient) {
  Tensor a = param({1, 2}), b = param({3, 4}), c = param({5});
  Tensor loss = ((b * 2.0).exp() * a).sum() + (c * c).sum();
  std::vector<std::string> order;
  bool recorded = false;
  a.register_hook([&](const Tensor& g) -> std::optional<Tensor> {
    order.push_back("a");
    recorded = g.requires_grad();
    return std::nullopt;
  });
  b.register_hook([&](const Tensor&) -> std::optional<Tensor> {
    order.push_back("b");
    return std::nullopt;
  });
  c.register_hook([&](const Tensor&) -> std::optional<Tensor> {
    order.push_back("c");
    return std::nullopt;
  });
  std::vector<Tensor> g = grad({loss}, {a, b}, {}, {.create_graph = true});
  EXPECT_EQ(order, (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(recorded) << "create_graph: the hook sees the recorded gradient";
  EXPECT_FALSE(a.grad().defined());
  expect_values(g[0], {std::exp(6.0), std::exp(8.0)});
  // d/db sum(dloss/da) = d/db sum(exp(2b)) = 2 exp(2b)
  expect_values(grad({g[0].sum()}, {b})[0], {2 * std::exp(6.0), 2 * std::exp(8.0)}, 1e-9 * std::exp(8.0));
}

// MulBackward and MatmulBackward save a factor only when the other input
// needs it; a freed factor must still report the second backward.
TEST(AutogradRegression, SecondBackwardThroughMul) {
  Tensor a = param({1, 2}), b = param({3, 4});
  Tensor y = (a * b).sum();
  y.backward();
  expect_error([&] { y.backward(); }, {"second time", "MulBackward"});
  Tensor m = param({1, 2}, {1, 2}), n = param({3, 4}, {2, 1});
  Tensor z = matmul(m, n).sum();
  z.backward();
  expect_error([&] { z.backward(); }, {"second time", "MatmulBackward"});
}

}  // namespace
