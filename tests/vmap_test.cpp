// vmap/: a function of one sample run on a batch.
//   * vmap equals the loop over the batch it replaces: mapped and unmapped
//     inputs, batch dims anywhere, out_dims, zero-size batches, nested vmap;
//   * per-sample gradients (vmap of a function that calls grad) equal a
//     loop of grad; vmap inside grad gives the loop's gradients;
//   * what vmap refuses is refused by name (in-place writes, random draws
//     unless a mode is chosen, reads of values, bad in_dims/out_dims);
//   * an op without a rule loops, with the same values, and says so once;
//   * modules: parameters mapped through functional_call, per-sample
//     gradients of a module; jvp inside vmap (and inside compile).
#include <gtest/gtest.h>

#include <cmath>

#include "autograd/engine.h"
#include "autograd/functional.h"
#include "compile/compile.h"
#include "autograd/ops.h"
#include "compile_checks.h"
#include "nn/functional_call.h"
#include "nn/layers.h"
#include "tensor/factory.h"
#include "tensor/random.h"
#include "test_util.h"
#include "vmap/vmap.h"
#include "vmap_checks.h"

namespace {

using namespace ember;
using ember::compile_checks::same_bits;
using ember::test::expect_close;
using ember::test::expect_error;
using ember::vmap_checks::loop_over_batch;
using Inputs = std::vector<Tensor>;

Inputs affine_relu(const Inputs& in) { return {relu(matmul(in[0], in[1]) + in[2]).sum({-1})}; }

TEST(Vmap, EqualsTheLoopWithSharedWeights) {
  Generator g(1);
  const Tensor x = randn({5, 4}, g, kFloat64), w = randn({4, 3}, g, kFloat64), b = randn({3}, g, kFloat64);
  const std::vector<std::optional<int64_t>> dims{0, not_mapped, not_mapped};
  const Tensor got = vmap(affine_relu, {.in_dims = dims})({x, w, b})[0];
  const Tensor want = loop_over_batch(affine_relu, {x, w, b}, dims)[0];
  expect_close(got, want, 1e-13);
  EXPECT_EQ(batching_stats::last().looped, 0);
  EXPECT_GE(batching_stats::last().by_rule, 3);
}

TEST(Vmap, BatchDimsAnywhereInAndOut) {
  Generator g(2);
  const Tensor x = randn({4, 6, 5}, g, kFloat64), w = randn({7, 4, 3}, g, kFloat64);  // batch: x dim 1, w dim 0
  const BatchFn f = [](const Inputs& in) { return Inputs{softmax(matmul(in[0].transpose(0, 1), in[1]), 0)}; };
  for (int64_t out : {0, 1, -1, 2}) {
    const std::vector<std::optional<int64_t>> dims{-2, not_mapped};
    // x (4, 6, 5) mapped along dim 1 (6 samples of (4, 5)); w shared
    const Tensor got = vmap(f, {.in_dims = dims, .out_dims = {out}})({x, w.select(0, 0)})[0];
    const Tensor want = loop_over_batch(f, {x, w.select(0, 0)}, {1, not_mapped}, {out < 0 ? out + 3 : out})[0];
    expect_close(got, want, 1e-13);
  }
  // both mapped, different dims
  const BatchFn mm = [](const Inputs& in) { return Inputs{matmul(in[0], in[1])}; };
  const Tensor a = randn({3, 7, 4}, g, kFloat64);  // 7 samples of (3, 4) along dim 1
  const Tensor got = vmap(mm, {.in_dims = {1, 0}})({a, w})[0];
  expect_close(got, loop_over_batch(mm, {a, w}, {1, 0})[0], 1e-13);
}

TEST(Vmap, ZeroSizeBatchGivesEmptyResultsOfTheRightShape) {
  const Tensor x = zeros({0, 4}, kFloat64), w = ones({4, 3}, kFloat64), b = ones({3}, kFloat64);
  const Tensor y = vmap(affine_relu, {.in_dims = {0, not_mapped, not_mapped}})({x, w, b})[0];
  EXPECT_EQ(y.shape(), (Shape{0}));
  const BatchFn two = [](const Inputs& in) { return Inputs{in[0] * 2.0, in[0].unsqueeze(0)}; };
  const Inputs r = vmap(two, {.out_dims = {0, -1}})({zeros({0, 2, 3})});
  EXPECT_EQ(r[0].shape(), (Shape{0, 2, 3}));
  EXPECT_EQ(r[1].shape(), (Shape{1, 2, 3, 0}));
}

TEST(Vmap, AnOutputNoSampleChangesIsRepeated) {
  const Tensor w = tensor(std::vector<double>{1, 2, 3});
  const BatchFn f = [&](const Inputs& in) { return Inputs{in[0] * 2.0, w * 1.0}; };
  const Inputs r = vmap(f)({tensor(std::vector<double>{5, 6})});
  EXPECT_EQ(r[1].shape(), (Shape{2, 3}));
  EXPECT_EQ(r[1].to_vector<double>(), (std::vector<double>{1, 2, 3, 1, 2, 3}));
}

TEST(Vmap, NestedGivesTwoBatchLevels) {
  Generator g(3);
  const Tensor x = randn({3, 5, 4}, g, kFloat64), y = randn({5, 4}, g, kFloat64);
  // inner: over y's rows and x's dim 1; outer: over x's dim 0
  const BatchFn dot = [](const Inputs& in) { return Inputs{(in[0] * in[1]).sum() + exp(in[0]).mean()}; };
  const BatchFn inner = vmap(dot);
  const BatchFn outer = vmap(inner, {.in_dims = {0, not_mapped}});
  const Tensor got = outer({x, y})[0];
  ASSERT_EQ(got.shape(), (Shape{3, 5}));
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 5; ++j)
      EXPECT_NEAR(got.select(0, i).select(0, j).item<double>(),
                  dot({x.select(0, i).select(0, j), y.select(0, j)})[0].item<double>(), 1e-13);
}

// ---- per-sample gradients ----

// The loss of one sample (x (4), y class) for an MLP's weights.
struct Mlp {
  Tensor w1, b1, w2, b2;
  explicit Mlp(Generator& g)
      : w1(randn({4, 8}, g, kFloat64).requires_grad_()), b1(randn({8}, g, kFloat64).requires_grad_()),
        w2(randn({8, 3}, g, kFloat64).requires_grad_()), b2(randn({3}, g, kFloat64).requires_grad_()) {}
  Inputs params() const { return {w1, b1, w2, b2}; }
  Tensor loss(const Tensor& x, const Tensor& y) const {
    const Tensor h = tanh(matmul(x.unsqueeze(0), w1) + b1);
    return cross_entropy(matmul(h, w2) + b2, y.unsqueeze(0));
  }
};

TEST(VmapGrad, PerSampleGradientsEqualALoopOfGrad) {
  Generator g(4);
  const Mlp mlp(g);
  const Tensor x = randn({6, 4}, g, kFloat64), y = tensor(std::vector<int64_t>{0, 2, 1, 1, 0, 2});
  const BatchFn grads = [&](const Inputs& in) { return grad({mlp.loss(in[0], in[1])}, mlp.params()); };
  const Inputs got = vmap(grads)({x, y});
  const Inputs want = loop_over_batch(grads, {x, y}, {0, 0});
  ASSERT_EQ(got.size(), 4u);
  for (size_t k = 0; k < 4; ++k) {
    SCOPED_TRACE(k);
    expect_close(got[k], want[k], 1e-12);
  }
  EXPECT_EQ(got[0].shape(), (Shape{6, 4, 8}));
  EXPECT_FALSE(got[0].requires_grad());  // values, as grad() without create_graph gives
  EXPECT_EQ(batching_stats::last().looped, 0);
}

TEST(VmapGrad, VmapInsideGradGivesTheLoopsGradients) {
  Generator g(5);
  const Tensor w = randn({4, 3}, g, kFloat64).requires_grad_();
  const Tensor x = randn({5, 4}, g, kFloat64).requires_grad_();
  const BatchFn f = [&](const Inputs& in) { return Inputs{sigmoid(matmul(in[0], w)).sum()}; };
  const Tensor batched = vmap(f)({x})[0].pow(2.0).sum();
  const Tensor looped = loop_over_batch(f, {x}, {0})[0].pow(2.0).sum();
  const Inputs gb = grad({batched}, {w, x}), gl = grad({looped}, {w, x});
  expect_close(gb[0], gl[0], 1e-13);
  expect_close(gb[1], gl[1], 1e-13);
}

// ---- refusals ----

TEST(VmapErrors, BadInDimsOutDimsAndSizesNameWhatIsWrong) {
  const BatchFn f = [](const Inputs& in) { return Inputs{in[0] + in[1]}; };
  const Tensor a = zeros({3, 2}), b = zeros({4, 2});
  expect_error([&] { vmap(f)({a, b}); }, "vmap", {"different batch sizes", "(3, 2) has 3", "(4, 2) has 4"});
  expect_error([&] { vmap(f, {.in_dims = {0}})({a, a}); }, "vmap", {"in_dims has 1 entries for 2 inputs"});
  expect_error([&] { vmap(f, {.in_dims = {2, 0}})({a, a}); }, "vmap", {"in_dims[0] = 2", "(3, 2)"});
  expect_error([&] { vmap(f, {.in_dims = {not_mapped, not_mapped}})({a, a}); }, "vmap", {"no input is mapped"});
  expect_error([&] { vmap(f, {.out_dims = {3}})({a, a}); }, "vmap", {"out_dims[0] = 3", "(3, 2)"});
  expect_error([&] { vmap(f)({a, Tensor()}); }, "vmap", {"input 1 is an undefined tensor"});
  expect_error([&] { vmap(f)({scalar_tensor(1.0, kFloat32), a}); }, "vmap", {"0-d input cannot be mapped"});
}

TEST(VmapErrors, InPlaceWritesRandomDrawsAndReadsAreRefused) {
  const Tensor x = ones({3, 2});
  expect_error([&] { vmap([](const Inputs& in) { Tensor t = in[0] * 1.0; t.add_(in[0]); return Inputs{t}; })({x}); },
               "vmap", {"add_ writes in place", "under vmap"});
  expect_error([&] { vmap([](const Inputs& in) { return Inputs{in[0] + randn({2})}; })({x}); }, "vmap",
               {"draws random numbers", "Randomness::Different"});
  expect_error([&] { vmap([](const Inputs& in) { return Inputs{in[0] * in[0].sum().item<float>()}; })({x}); }, "vmap",
               {"reads a tensor's values"});
}

TEST(VmapRandomness, SameSharesOneDrawDifferentDrawsPerSample) {
  const Tensor x = zeros({4, 3});
  const BatchFn noisy = [](const Inputs& in) { return Inputs{in[0] + randn({3})}; };
  const Tensor same = vmap(noisy, {.randomness = Randomness::Same})({x})[0];
  for (int64_t b = 1; b < 4; ++b) EXPECT_TRUE(same_bits(same.select(0, b), same.select(0, 0)));
  const Tensor different = vmap(noisy, {.randomness = Randomness::Different})({x})[0];
  EXPECT_EQ(different.shape(), (Shape{4, 3}));
  EXPECT_FALSE(same_bits(different.select(0, 1), different.select(0, 0)));
  // Different is the loop: the same numbers as drawing sample by sample from one seed
  manual_seed(7);
  const Tensor d1 = vmap(noisy, {.randomness = Randomness::Different})({x})[0];
  manual_seed(7);
  const Tensor d2 = loop_over_batch(noisy, {x}, {0})[0];
  EXPECT_TRUE(same_bits(d1, d2));
}

TEST(VmapFallback, AnOpWithoutARuleForItsArgumentsLoopsWithTheSameValues) {
  Generator g(6);
  const Tensor weights = randn({3, 5, 2}, g, kFloat64), ids = tensor(std::vector<int64_t>{4, 0, 4});
  const BatchFn f = [&](const Inputs& in) { return Inputs{embedding(in[0], in[1])}; };
  testing::internal::CaptureStderr();
  const Tensor got = vmap(f, {.in_dims = {0, not_mapped}})({weights, ids})[0];
  const std::string said = testing::internal::GetCapturedStderr();
  EXPECT_TRUE(same_bits(got, loop_over_batch(f, {weights, ids}, {0, not_mapped})[0]));
  EXPECT_EQ(batching_stats::last().looped, 1);
  // (printed once per op for the process: another test may have printed it first)
  if (!said.empty()) {
    EXPECT_NE(said.find("vmap runs op embedding once per sample"), std::string::npos) << said;
  }
}


// A module's parameters mapped over (an ensemble of 3 weights for one
// Linear), through nn::functional_call; and per-sample gradients of a module.
TEST(VmapModules, ParametersMappedThroughFunctionalCall) {
  nn::Linear fc(4, 2, nn::LinearOptions{.generator = test::seeded(8)});
  fc.to(kFloat64);
  Generator g(9);
  const Tensor weights = randn({3, 2, 4}, g, kFloat64), x = randn({5, 4}, g, kFloat64);
  const BatchFn f = [&](const Inputs& in) {
    return Inputs{nn::functional_call(fc, {{"weight", in[0]}}, [&] { return fc.forward(in[1]); })};
  };
  const std::vector<std::optional<int64_t>> dims{0, not_mapped};
  expect_close(vmap(f, {.in_dims = dims})({weights, x})[0], loop_over_batch(f, {weights, x}, dims)[0], 1e-13);
  // and with weights that require grad (their gradient flows through the batch)
  const Tensor w = weights.clone().requires_grad_();
  const Tensor total = vmap(f, {.in_dims = dims})({w, x})[0].pow(2.0).sum();
  const Tensor looped = loop_over_batch(f, {w, x}, dims)[0].pow(2.0).sum();
  expect_close(grad({total}, {w})[0], grad({looped}, {w})[0], 1e-12);
}

TEST(VmapModules, PerSampleGradientsOfAModule) {
  nn::Sequential net({std::make_shared<nn::Linear>(3, 4, nn::LinearOptions{.generator = test::seeded(10)}),
                      std::make_shared<nn::Tanh>(), std::make_shared<nn::Linear>(4, 1, nn::LinearOptions{.generator = test::seeded(11)})});
  net.to(kFloat64);
  Generator g(12);
  const Tensor x = randn({7, 3}, g, kFloat64), y = randn({7, 1}, g, kFloat64);
  const BatchFn grads = [&](const Inputs& in) {
    const Tensor d = net.forward(in[0].unsqueeze(0)) - in[1].unsqueeze(0);
    return grad({(d * d).sum()}, net.parameters());
  };
  const Inputs got = vmap(grads)({x, y}), want = loop_over_batch(grads, {x, y}, {0, 0});
  ASSERT_EQ(got.size(), 4u);
  for (size_t k = 0; k < got.size(); ++k) expect_close(got[k], want[k], 1e-13);
}


// jvp inside vmap: per-sample directional derivatives (x and v mapped), and
// the columns of a Jacobian (x shared, v mapped), against a loop of eager
// jvp (forward mode proper). Under the tracer jvp takes the pullback's
// derivative (autograd/functional.h): the same values up to rounding, and
// the same value of f bit for bit, -0 included.
TEST(VmapJvp, JvpInsideVmapEqualsALoopOfForwardMode) {
  Generator g(13);
  const Tensor w = randn({4, 3}, g, kFloat64), x = randn({6, 3}, g, kFloat64), v = randn({6, 3}, g, kFloat64);
  const TensorFn f = [&](const Inputs& in) { return softmax(matmul(w, tanh(in[0])), 0) * in[0].sum(); };
  const BatchFn both = [&](const Inputs& in) {
    const JvpResult r = jvp(f, {in[0]}, {in[1]});
    return Inputs{r.output, r.tangent};
  };
  const Inputs got = vmap(both)({x, v}), want = loop_over_batch(both, {x, v}, {0, 0});
  EXPECT_TRUE(same_bits(got[0], want[0]));
  expect_close(got[1], want[1], 1e-14);
  const std::vector<std::optional<int64_t>> shared{not_mapped, 0};
  const Inputs columns = vmap(both, {.in_dims = shared})({x.select(0, 0), v});
  expect_close(columns[1], loop_over_batch(both, {x.select(0, 0), v}, shared)[1], 1e-14);
  // a -0 stays -0 in f's value
  const Tensor signed_zero = tensor(std::vector<double>{-0.0, 1.0, 2.0});
  const BatchFn twice = [](const Inputs& in) { return Inputs{jvp([](const Inputs& a) { return a[0] * 2.0; }, {in[0]}, {in[1]}).output}; };
  const Tensor out = vmap(twice, {.in_dims = {not_mapped, 0}})({signed_zero, v})[0];
  EXPECT_TRUE(std::signbit(out.select(0, 0).select(0, 0).item<double>()));
}

TEST(VmapJvp, ACompiledJvpEqualsEagerForwardMode) {
  Generator g(14);
  const Tensor w = randn({4, 3}, g, kFloat64);
  const compiler::Function fn = [&](const Inputs& in) {
    const JvpResult r = jvp([&](const Inputs& a) { return gelu(matmul(w, a[0])).pow(2.0); }, {in[0]}, {in[1]});
    return Inputs{r.output, r.tangent};
  };
  compiler::Compiled f = compile(fn);
  for (int call = 0; call < 2; ++call) {
    const Inputs in{randn({3, 2}, g, kFloat64), randn({3, 2}, g, kFloat64)};
    const Inputs got = f(in), want = fn(in);
    EXPECT_TRUE(same_bits(got[0], want[0]));
    expect_close(got[1], want[1], 1e-13);
  }
}

}  // namespace
