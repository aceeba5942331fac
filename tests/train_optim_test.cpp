// Optimizers, gradient clipping and learning-rate schedules.
//
// Two kinds of evidence:
//  - closed forms: one or two steps on tiny tensors, the update written out
//    by hand next to the call (the formulas of train/optim.h);
//  - PyTorch: 5 steps of SGD / Adam / AdamW from tests/fixtures/optim.json
//    (made by make_optim_fixtures.py with torch 1.13, float64), to 1e-12.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <numbers>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ember.h"
#include "test_util.h"
#include "train/optim.h"

using namespace ember;
using namespace ember::optim;
using ember::test::expect_error;
using ember::test::expect_values;
using json = nlohmann::json;

namespace {

// A float64 leaf parameter with the given values.
Tensor param(const std::vector<double>& v) {
  Tensor p = tensor(v);
  p.requires_grad_();
  return p;
}

void set_grad(const Tensor& p, const std::vector<double>& g) { p.set_grad(tensor(g, p.shape())); }

}  // namespace

// ---- SGD ----

TEST(TrainOptimSGD, PlainStepIsLrTimesGrad) {
  Tensor p = param({1.0, 2.0});
  SGD opt({p}, /*lr=*/0.1);
  set_grad(p, {0.5, -1.0});
  opt.step();
  expect_values(p, {1.0 - 0.1 * 0.5, 2.0 + 0.1 * 1.0}, 1e-15);  // p -= lr g
  EXPECT_EQ(opt.steps(), 1);
}

TEST(TrainOptimSGD, MomentumTwoSteps) {
  Tensor p = param({1.0});
  SGD opt({p}, 0.1, /*momentum=*/0.9);
  set_grad(p, {1.0});
  opt.step();  // b = g = 1 (first step: no decay of an empty buffer); p = 1 - 0.1 = 0.9
  expect_values(p, {0.9}, 1e-15);
  set_grad(p, {2.0});
  opt.step();  // b = 0.9 * 1 + 2 = 2.9; p = 0.9 - 0.29 = 0.61
  expect_values(p, {0.61}, 1e-15);
}

TEST(TrainOptimSGD, NesterovTwoSteps) {
  Tensor p = param({1.0});
  SGD opt({p}, 0.1, 0.9, /*nesterov=*/true);
  set_grad(p, {1.0});
  opt.step();  // b = 1; d = g + 0.9 b = 1.9; p = 1 - 0.19 = 0.81
  expect_values(p, {0.81}, 1e-15);
  set_grad(p, {2.0});
  opt.step();  // b = 0.9 + 2 = 2.9; d = 2 + 0.9 * 2.9 = 4.61; p = 0.81 - 0.461 = 0.349
  expect_values(p, {0.349}, 1e-15);
}

TEST(TrainOptimSGD, WeightDecayIsAddedToTheGradient) {
  Tensor p = param({2.0, -1.0});
  SGD opt({p}, 0.1, 0.0, false, /*weight_decay=*/0.1);
  set_grad(p, {0.5, 0.0});
  opt.step();  // d = g + wd p = (0.7, -0.1); p -= 0.1 d
  expect_values(p, {2.0 - 0.07, -1.0 + 0.01}, 1e-15);
}

TEST(TrainOptimSGD, ArgumentErrors) {
  Tensor p = param({1.0});
  expect_error([&] { SGD({p}, 0.1, -0.5); }, {"SGD", "momentum", "-0.5"});
  expect_error([&] { SGD({p}, 0.1, 0.0, true); }, {"SGD", "Nesterov", "momentum > 0"});
  expect_error([&] { SGD({p}, -1.0); }, {"optimizer", "negative learning rate", "-1"});
  Tensor not_leaf = param({1.0}) * 2.0;
  expect_error([&] { SGD({not_leaf}, 0.1); }, {"optimizer", "parameter 0 of group 0", "leaf"});
}

// ---- Adam / AdamW ----

// One Adam step from zero moments: m̂ = g, v̂ = g², so p -= lr g / (|g| + eps),
// a step of size ~lr whatever the gradient's scale.
TEST(TrainOptimAdam, FirstStepIsLrTimesSignOfGrad) {
  Tensor p = param({1.0, -2.0, 3.0});
  Adam opt({p}, /*lr=*/0.1, 0.9, 0.999, /*eps=*/1e-8);
  set_grad(p, {2.0, -0.001, 100.0});
  opt.step();
  expect_values(p, {1.0 - 0.1 * 2.0 / (2.0 + 1e-8), -2.0 + 0.1 * 0.001 / (0.001 + 1e-8), 3.0 - 0.1 * 100.0 / (100.0 + 1e-8)},
                1e-14);
}

TEST(TrainOptimAdam, TwoStepsWithBiasCorrection) {
  const double lr = 0.01, b1 = 0.9, b2 = 0.95, eps = 1e-8, g1 = 0.5, g2 = -1.5, p0 = 1.0;
  Tensor p = param({p0});
  Adam opt({p}, lr, b1, b2, eps);
  set_grad(p, {g1});
  opt.step();
  set_grad(p, {g2});
  opt.step();
  // m₂ = b1 (1-b1) g1 + (1-b1) g2,  v₂ = b2 (1-b2) g1² + (1-b2) g2²
  const double m2 = b1 * (1 - b1) * g1 + (1 - b1) * g2, v2 = b2 * (1 - b2) * g1 * g1 + (1 - b2) * g2 * g2;
  const double p1 = p0 - lr * g1 / (std::abs(g1) + eps);
  const double p2 = p1 - lr * (m2 / (1 - b1 * b1)) / (std::sqrt(v2 / (1 - b2 * b2)) + eps);
  expect_values(p, {p2}, 1e-14);
}

TEST(TrainOptimAdam, WeightDecayIsL2AddedToTheGradient) {
  // Adam (not W): g' = g + wd p enters the moments; the first step is still
  // lr g' / |g'|.
  Tensor p = param({2.0});
  Adam opt({p}, 0.1, 0.9, 0.999, 1e-8, /*weight_decay=*/0.5);
  set_grad(p, {-0.25});  // g' = -0.25 + 0.5 * 2 = 0.75
  opt.step();
  expect_values(p, {2.0 - 0.1 * 0.75 / (0.75 + 1e-8)}, 1e-14);
  EXPECT_EQ(opt.type_name(), "Adam");
}

TEST(TrainOptimAdam, AdamWDecaysTheWeightSeparately) {
  // AdamW: p ← p (1 - lr wd), then the plain Adam update from the raw g.
  Tensor p = param({2.0});
  AdamW opt({p}, 0.1, 0.9, 0.999, 1e-8, /*weight_decay=*/0.5);
  set_grad(p, {-0.25});
  opt.step();
  expect_values(p, {2.0 * (1 - 0.1 * 0.5) + 0.1 * 0.25 / (0.25 + 1e-8)}, 1e-14);
  EXPECT_EQ(opt.type_name(), "AdamW");
}

TEST(TrainOptimAdam, ArgumentErrors) {
  Tensor p = param({1.0});
  expect_error([&] { Adam({p}, 0.1, 1.0, 0.9); }, {"Adam", "betas", "(1, 0.9)"});
  expect_error([&] { Adam({p}, 0.1, 0.9, -0.1); }, {"Adam", "betas", "-0.1"});
  expect_error([&] { Adam({p}, 0.1, 0.9, 0.999, -1.0); }, {"Adam", "eps", "-1"});
}

TEST(TrainOptimAdam, Float32ParametersStepToo) {
  Tensor p = tensor({1.0f, -1.0f});
  p.requires_grad_();
  AdamW opt({p}, 0.1);
  p.set_grad(tensor({1.0f, -1.0f}));
  opt.step();
  expect_values(p, {1.0 * (1 - 0.1 * 0.01) - 0.1, -1.0 * (1 - 0.1 * 0.01) + 0.1}, 1e-6);
}

// ---- parameter groups, skipped parameters, zero_grad ----

TEST(TrainOptimGroups, EachGroupUsesItsOwnLrAndWeightDecay) {
  Tensor a = param({1.0}), b = param({1.0});
  SGD opt(std::vector<ParamGroup>{{{a}, /*lr=*/0.1, /*wd=*/0.0}, {{b}, /*lr=*/0.01, /*wd=*/0.5}});
  set_grad(a, {1.0});
  set_grad(b, {1.0});
  opt.step();
  expect_values(a, {1.0 - 0.1 * 1.0}, 1e-15);
  expect_values(b, {1.0 - 0.01 * (1.0 + 0.5 * 1.0)}, 1e-15);
  opt.set_lr(1.0);  // every group
  EXPECT_EQ(opt.groups()[0].lr, 1.0);
  EXPECT_EQ(opt.groups()[1].lr, 1.0);
  EXPECT_EQ(opt.groups()[1].weight_decay, 0.5);  // untouched
}

TEST(TrainOptimGroups, ParametersWithoutGradAreSkipped) {
  for (bool adam : {false, true}) {
    SCOPED_TRACE(adam ? "AdamW" : "SGD momentum");
    Tensor with = param({1.0, 2.0}), without = param({3.0, 4.0});
    std::unique_ptr<Optimizer> opt;
    if (adam) opt = std::make_unique<AdamW>(std::vector<Tensor>{with, without}, 0.1, 0.9, 0.999, 1e-8, 0.1);
    else opt = std::make_unique<SGD>(std::vector<Tensor>{with, without}, 0.1, 0.9, false, 0.1);
    set_grad(with, {1.0, 1.0});
    const uint64_t version = without.version();
    opt->step();
    // not even weight decay touches a parameter without a gradient (as in PyTorch)
    expect_values(without, {3.0, 4.0}, 0.0);
    EXPECT_EQ(without.version(), version);
    EXPECT_LT(with.to_vector<double>()[0], 1.0);
    // and no state is created for it
    for (const auto& [name, t] : opt->state()) EXPECT_EQ(name.rfind("0.1.", 0), std::string::npos) << name;
    EXPECT_FALSE(opt->state().empty());
  }
}

TEST(TrainOptimGroups, ZeroGrad) {
  Tensor p = param({1.0, 2.0});
  SGD opt({p}, 0.1);
  set_grad(p, {1.0, 1.0});
  opt.zero_grad(/*set_to_none=*/false);
  ASSERT_TRUE(p.grad().defined());
  expect_values(p.grad(), {0.0, 0.0}, 0.0);
  opt.zero_grad();
  EXPECT_FALSE(p.grad().defined());
}

// A parameter that never had a gradient has no state: that is complete.
TEST(TrainOptimState, AParameterNeverUpdatedMayHaveNoState) {
  Tensor a = param({1.0}), b = param({2.0});
  AdamW opt({a, b}, 0.1);
  set_grad(a, {1.0});
  opt.step();  // b has no grad: skipped
  AdamW other({param({1.0}), param({2.0})}, 0.1);
  other.load_state(opt.state(), opt.steps());
  EXPECT_EQ(other.state().size(), 3u);  // a's three slots
  expect_error([&] { other.load_state(opt.state(), opt.steps(), /*require_every_parameter=*/true); },
               {"parameter 0.1", "lacks"});
}

// state() / load_state(): a fresh optimizer given another's state and step
// count takes the identical next step (what resuming a checkpoint relies on).
TEST(TrainOptimState, LoadStateContinuesExactly) {
  Tensor a = param({1.0, -2.0}), b = param({1.0, -2.0});
  AdamW first({a}, 0.1, 0.9, 0.95);
  set_grad(a, {0.5, 0.25});
  first.step();
  AdamW second({b}, 0.1, 0.9, 0.95);
  {
    NoGradGuard no_grad;
    b.copy_(a);
  }
  second.load_state(first.state(), first.steps());
  EXPECT_EQ(second.steps(), 1);
  set_grad(a, {-1.0, 0.75});
  set_grad(b, {-1.0, 0.75});
  first.step();
  second.step();
  expect_values(b, ember::test::values(a), 0.0);  // bit for bit
}

TEST(TrainOptimState, LoadStateErrorsLeaveTheOptimizerUnchanged) {
  Tensor p = param({1.0, 2.0});
  Adam opt({p}, 0.1);
  set_grad(p, {1.0, 1.0});
  opt.step();
  const auto before = opt.state();
  Tensor ok = tensor(std::vector<double>{0.0, 0.0});
  expect_error([&] { opt.load_state({{"x.0.exp_avg", ok}}, 5); }, {"load_state", "malformed state name \"x.0.exp_avg\""});
  expect_error([&] { opt.load_state({{"0.exp_avg", ok}}, 5); }, {"load_state", "malformed state name"});
  expect_error([&] { opt.load_state({{"0.1.exp_avg", ok}}, 5); }, {"load_state", "\"0.1.exp_avg\"", "does not have"});
  expect_error([&] { opt.load_state({{"0.0.exp_avg", ok}, {"0.0.exp_avg_sq", tensor(std::vector<double>{0.0})}}, 5); },
               {"load_state", "\"0.0.exp_avg_sq\"", "(1)", "(2)"});
  // Incomplete state is refused, naming what is missing: it would resume
  // without error and then diverge from the run it came from.
  const Tensor one_step = scalar_tensor(1, kInt64);
  expect_error([&] { opt.load_state({{"0.0.exp_avg_sq", ok}, {"0.0.step", one_step}}, 1); },
               {"load_state", "parameter 0.0", "lacks its exp_avg state", "incomplete"});
  expect_error([&] { opt.load_state({{"0.0.exp_avg", ok}, {"0.0.exp_avg_sq", ok}}, 1); },
               {"load_state", "lacks its step state"});
  expect_error([&] { opt.load_state({}, 1, /*require_every_parameter=*/true); },
               {"load_state", "lacks its exp_avg, exp_avg_sq, step state"});
  expect_error([&] { opt.load_state({{"0.0.momentum", ok}}, 1); }, {"load_state", "Adam has no slot \"momentum\""});
  expect_error([&] { opt.load_state({{"0.0.exp_avg", ok}, {"0.0.exp_avg_sq", ok}, {"0.0.step", scalar_tensor(7, kInt64)}}, 1); },
               {"load_state", "counts 7 updates", "took 1"});
  expect_error([&] { opt.load_state({}, -1); }, {"load_state", "-1"});
  EXPECT_EQ(opt.steps(), 1);
  ASSERT_EQ(opt.state().size(), before.size());
  for (size_t i = 0; i < before.size(); ++i) {
    EXPECT_EQ(opt.state()[i].first, before[i].first);
    EXPECT_TRUE(opt.state()[i].second.is_same(before[i].second));
  }
}

// ---- clip_grad_norm_ ----

TEST(TrainOptimClip, ScalesToMaxNormAndReturnsTheNormBefore) {
  // global norm over both tensors: sqrt(3² + 4² + 0²) = 5
  Tensor a = param({3.0}), b = param({4.0, 0.0}), none = param({7.0});
  set_grad(a, {3.0});
  set_grad(b, {4.0, 0.0});
  double norm = clip_grad_norm_({a, b, none}, 1.0);
  EXPECT_NEAR(norm, 5.0, 1e-15);
  const double coef = 1.0 / (5.0 + 1e-6);  // PyTorch's max_norm / (norm + 1e-6)
  expect_values(a.grad(), {3.0 * coef}, 1e-15);
  expect_values(b.grad(), {4.0 * coef, 0.0}, 1e-15);
  EXPECT_FALSE(none.grad().defined());
}

TEST(TrainOptimClip, BelowMaxNormNothingChanges) {
  Tensor a = param({0.0, 0.0});
  set_grad(a, {0.3, -0.4});
  EXPECT_NEAR(clip_grad_norm_({a}, 1.0), 0.5, 1e-15);
  expect_values(a.grad(), {0.3, -0.4}, 0.0);  // bit for bit
}

TEST(TrainOptimClip, Errors) {
  Tensor a = param({1.0});
  expect_error([&] { clip_grad_norm_({a}, 0.0); }, {"clip_grad_norm_", "max_norm", "0"});
}

// ---- schedules ----

TEST(TrainOptimSchedule, Constant) {
  ConstantLR s(0.25);
  EXPECT_EQ(s.lr(0), 0.25);
  EXPECT_EQ(s.lr(1000000), 0.25);
}

TEST(TrainOptimSchedule, WarmupIsLinearToMaxLr) {
  WarmupCosineLR s(/*max=*/1.0, /*min=*/0.1, /*warmup=*/4, /*total=*/12);
  // step k of the warmup uses (k + 1) / warmup of max_lr: the first update is not 0
  EXPECT_DOUBLE_EQ(s.lr(0), 0.25);
  EXPECT_DOUBLE_EQ(s.lr(1), 0.5);
  EXPECT_DOUBLE_EQ(s.lr(2), 0.75);
  EXPECT_DOUBLE_EQ(s.lr(3), 1.0);
}

TEST(TrainOptimSchedule, CosineEndpointsAndMidpoint) {
  WarmupCosineLR s(1.0, 0.1, 4, 12);  // cosine over steps 4..12 (8 steps)
  EXPECT_DOUBLE_EQ(s.lr(4), 1.0);                // progress 0: max
  EXPECT_NEAR(s.lr(8), 0.55, 1e-15);             // progress 1/2: (max + min) / 2
  EXPECT_NEAR(s.lr(6), 0.1 + 0.45 * (1 + std::cos(std::numbers::pi / 4)), 1e-15);
  EXPECT_NEAR(s.lr(11), 0.1 + 0.45 * (1 + std::cos(std::numbers::pi * 7 / 8)), 1e-15);
  EXPECT_DOUBLE_EQ(s.lr(12), 0.1);               // the end: min
  EXPECT_DOUBLE_EQ(s.lr(1000), 0.1);             // and after
  for (int64_t k = 4; k < 12; ++k) EXPECT_GT(s.lr(k), s.lr(k + 1)) << "monotone decay at " << k;
}

TEST(TrainOptimSchedule, NoWarmup) {
  WarmupCosineLR s(2.0, 0.0, 0, 10);
  EXPECT_DOUBLE_EQ(s.lr(0), 2.0);
  EXPECT_NEAR(s.lr(5), 1.0, 1e-15);
  EXPECT_DOUBLE_EQ(s.lr(10), 0.0);
}

TEST(TrainOptimSchedule, Errors) {
  expect_error([] { WarmupCosineLR(1.0, 0.1, 20, 10); }, {"WarmupCosineLR", "warmup_steps (20)", "total_steps (10)"});
  expect_error([] { WarmupCosineLR(1.0, 0.1, -1, 10); }, {"WarmupCosineLR", "(-1)"});
}

// ---- PyTorch fixtures ----

namespace {

json load_fixture() {
  const std::string path = std::string(EMBER_FIXTURE_DIR) + "/optim.json";
  std::ifstream f(path);
  if (!f) throw std::runtime_error("cannot open fixture " + path);
  return json::parse(f);
}

Tensor to_tensor(const json& j) { return tensor(j.at("data").get<std::vector<double>>(), j.at("shape").get<Shape>()); }

}  // namespace

// The 5 steps torch.optim took, parameter after each step, to 1e-12: the
// same update order (weight decay, moments, bias correction) as PyTorch's
// single-tensor loops, not merely the same formulas.
TEST(TrainOptimFixture, MatchesPyTorchFiveSteps) {
  const json fx = load_fixture();
  for (const auto& [name, c] : fx.at("cases").items()) {
    SCOPED_TRACE(name);
    Tensor w = to_tensor(fx.at("initial")[0]), b = to_tensor(fx.at("initial")[1]);
    w.requires_grad_();
    b.requires_grad_();
    const json& h = c.at("hyper");
    std::unique_ptr<Optimizer> opt;
    const double lr = h.at("lr"), wd = h.at("weight_decay");
    if (name.rfind("sgd", 0) == 0) {
      opt = std::make_unique<SGD>(std::vector<Tensor>{w, b}, lr, h.at("momentum").get<double>(), h.value("nesterov", false), wd);
    } else if (name == "adam") {
      opt = std::make_unique<Adam>(std::vector<Tensor>{w, b}, lr, h.at("beta1"), h.at("beta2"), h.at("eps"), wd);
    } else if (name == "adamw") {
      opt = std::make_unique<AdamW>(std::vector<Tensor>{w, b}, lr, h.at("beta1"), h.at("beta2"), h.at("eps"), wd);
    } else {
      FAIL() << "unknown fixture case " << name;
    }
    const json& after = c.at("after");
    ASSERT_EQ(after.size(), fx.at("grads").size());
    for (size_t t = 0; t < after.size(); ++t) {
      SCOPED_TRACE("after step " + std::to_string(t + 1));
      w.set_grad(to_tensor(fx.at("grads")[t][0]));
      b.set_grad(to_tensor(fx.at("grads")[t][1]));
      opt->step();
      ember::test::expect_close(w, to_tensor(after[t][0]), 1e-12);
      ember::test::expect_close(b, to_tensor(after[t][1]), 1e-12);
    }
  }
}

namespace {
// Bias correction counts each parameter's own updates, as PyTorch does: b
// gets its first gradient on step 2, so its first update is lr * sign(g).
TEST(TrainOptimAdam, BiasCorrectionCountsEachParametersOwnSteps) {
  using namespace ember;
  Tensor a = tensor(std::vector<double>{1.0}).requires_grad_();
  Tensor b = tensor(std::vector<double>{1.0}).requires_grad_();
  optim::Adam opt({a, b}, /*lr=*/0.1);
  a.set_grad(tensor(std::vector<double>{1.0}));
  opt.step();  // b has no grad: skipped
  a.set_grad(tensor(std::vector<double>{1.0}));
  b.set_grad(tensor(std::vector<double>{1.0}));
  opt.step();
  // m_hat / sqrt(v_hat) = 1 on a parameter's first update: b = 1 - 0.1 (up to eps)
  EXPECT_NEAR(b.item<double>(), 0.9, 1e-7);
  auto state = opt.state();
  bool found = false;
  for (auto& [name, t] : state)
    if (name == "0.1.step") {
      found = true;
      EXPECT_EQ(t.item<int64_t>(), 1);
    }
  EXPECT_TRUE(found);
}
}  // namespace

namespace {

// adamw_update (AdamW's update as ember ops, for a captured training step)
// gives AdamW::step's bits, step after step, with the bias correction and
// the decoupled weight decay, in float32 and float64.
TEST(Optim, AdamWUpdateAsOpsGivesStepsBits) {
  for (DType dt : {kFloat32, kFloat64}) {
    Generator g(21);
    Tensor p = randn({37, 5}, g, dt), q = p.clone();
    p.requires_grad_();
    AdamW opt({p}, /*lr=*/0.05, 0.9, 0.999, 1e-8, /*weight_decay=*/0.1);
    Tensor m = zeros({37, 5}, dt), v = zeros({37, 5}, dt);
    for (int64_t t = 1; t <= 4; ++t) {
      const Tensor grad = randn({37, 5}, g, dt);
      p.set_grad(grad);
      opt.step();
      const AdamWUpdate u = adamw_update(q, grad, m, v, adamw_scalars(0.05, 0.1, t, 0.9, 0.999, dt));
      q = u.param, m = u.exp_avg, v = u.exp_avg_sq;
      EXPECT_EQ(q.to_vector<double>(), p.to_vector<double>()) << dtype_name(dt) << " step " << t;
      for (const auto& [name, s] : opt.state()) {
        if (name == "0.0.exp_avg") {
          EXPECT_EQ(s.to_vector<double>(), m.to_vector<double>());
        } else if (name == "0.0.exp_avg_sq") {
          EXPECT_EQ(s.to_vector<double>(), v.to_vector<double>());
        }
      }
    }
  }
  expect_error([] { adamw_scalars(1e-3, 0.0, 0, 0.9, 0.999, kFloat32); }, "adamw_scalars", {"counts from 1", "0"});
  expect_error([] { adamw_scalars(1e-3, 0.0, 1, 0.9, 0.999, kInt64); }, "adamw_scalars", {"int64"});
}

}  // namespace
