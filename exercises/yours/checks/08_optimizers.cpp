// Checks stage 8 (docs/book/build_your_own/08_optimizers.md): mini's SGD,
// Adam and AdamW against ember's (float64), 20 steps on random parameters
// with random gradients (one parameter no gradient ever reaches, one that
// misses every third step), with and without momentum and weight decay;
// then an MLP trained 150 steps with train_step, its loss compared with
// ember's step by step from the same starting numbers; then the refusals.
//
// Tolerances: an optimizer step is a few operations on each number, the
// same ones in both (ember may take a square root in another order): the
// parameters agree within 1e-12 relative after a step, and 20 steps
// compound that to below 1e-10. The MLP: each step's loss comes from the
// parameters, which have drifted apart by the rounding of every earlier
// step, amplified by the training's own sensitivity; after 150 steps of
// Adam the two runs are held to 1e-7 relative.
//
// When a parameter differs, the checker replays the same steps with each
// typical mistake (momentum with dampening, the buffer ignored, the weight
// decay left out, Adam without its bias correction or with ε inside the
// square root, AdamW's decay added to the gradient) and names the one that
// matches; for the MLP, a train_step without zero_grad.
#include <cmath>
#include <optional>

#include "exercises/yours/checks/inputs.h"
#include "exercises/yours/checks/yours.h"
#include "mini/derived.h"
#include "mini/nn.h"
#include "mini/optim.h"

namespace {

using check::fail;
using check::show;
using yours::first_difference;

enum class Kind { SGD, Adam, AdamW };

struct Settings {
  Kind kind;
  double lr, momentum, weight_decay;

  std::string text() const {
    switch (kind) {
      case Kind::SGD:
        return "SGD(params, lr " + check::num(lr) + ", momentum " + check::num(momentum) + ", weight_decay " +
               check::num(weight_decay) + ")";
      case Kind::Adam: return "Adam(params, lr " + check::num(lr) + ", weight_decay " + check::num(weight_decay) + ")";
      default: return "AdamW(params, lr " + check::num(lr) + ", weight_decay " + check::num(weight_decay) + ")";
    }
  }
};

// ---- the rules, replayed with each typical mistake ----

enum class Mistake { None, Dampening, NoBuffer, NoDecay, NoCorrection, EpsInside, CoupledDecay, kCount };

const char* const kMistakes[] = {
    "",
    "momentum with dampening: b = μ b + (1 − μ) g shrinks every step's part; PyTorch's b = μ b + g adds it whole",
    "the momentum buffer was computed but not used: the step is lr · b, not lr · g",
    "the weight decay is missing: g = grad + λ p before anything else",
    "Adam without its bias correction: m and v start at 0, so the early steps' averages are too small by "
    "1 − β^t; divide them by it (t counted from 1)",
    "ε inside the square root: the rule is √(v / (1 − β2^t)) + ε",
    "AdamW's decay added to the gradient (that is Adam's L2): AdamW moves p by − lr λ p apart from the Adam "
    "update",
};

// One parameter's numbers and its state, replayed.
struct Replay {
  std::vector<double> p, b, m, v;
  int64_t t = 0;
};

void replay_step(Replay& r, const std::vector<double>& grad, const Settings& s, Mistake x) {
  const size_t n = r.p.size();
  const double wd = x == Mistake::NoDecay ? 0 : s.weight_decay;
  if (s.kind == Kind::SGD) {
    if (r.b.empty()) {
      r.b.assign(n, 0);
      for (size_t i = 0; i < n; ++i) r.b[i] = x == Mistake::Dampening ? (1 - s.momentum) * (grad[i] + wd * r.p[i])
                                                                       : grad[i] + wd * r.p[i];
    } else {
      for (size_t i = 0; i < n; ++i)
        r.b[i] = s.momentum * r.b[i] + (x == Mistake::Dampening ? 1 - s.momentum : 1.0) * (grad[i] + wd * r.p[i]);
    }
    for (size_t i = 0; i < n; ++i) {
      const double g = grad[i] + wd * r.p[i];
      r.p[i] -= s.lr * (s.momentum == 0 || x == Mistake::NoBuffer ? g : r.b[i]);
    }
    return;
  }
  const double b1 = 0.9, b2 = 0.999, eps = 1e-8;
  const bool decoupled = s.kind == Kind::AdamW && x != Mistake::CoupledDecay;
  if (r.m.empty()) r.m.assign(n, 0), r.v.assign(n, 0);
  ++r.t;
  const double c1 = x == Mistake::NoCorrection ? 1 : 1 - std::pow(b1, static_cast<double>(r.t));
  const double c2 = x == Mistake::NoCorrection ? 1 : 1 - std::pow(b2, static_cast<double>(r.t));
  for (size_t i = 0; i < n; ++i) {
    if (decoupled) r.p[i] -= s.lr * wd * r.p[i];
    const double g = decoupled ? grad[i] : grad[i] + wd * r.p[i];
    r.m[i] = b1 * r.m[i] + (1 - b1) * g;
    r.v[i] = b2 * r.v[i] + (1 - b2) * g * g;
    const double denom = x == Mistake::EpsInside ? std::sqrt(r.v[i] / c2 + eps) : std::sqrt(r.v[i] / c2) + eps;
    r.p[i] -= s.lr * (r.m[i] / c1) / denom;
  }
}

// ---- random parameters, random gradients ----

std::unique_ptr<mini::Optimizer> make_mini(const Settings& s, std::vector<mini::Var> params) {
  switch (s.kind) {
    case Kind::SGD: return std::make_unique<mini::SGD>(std::move(params), s.lr, s.momentum, s.weight_decay);
    case Kind::Adam: return std::make_unique<mini::Adam>(std::move(params), s.lr, 0.9, 0.999, 1e-8, s.weight_decay);
    default: return std::make_unique<mini::AdamW>(std::move(params), s.lr, 0.9, 0.999, 1e-8, s.weight_decay);
  }
}

std::unique_ptr<ember::optim::Optimizer> make_ember(const Settings& s, std::vector<ember::Tensor> params) {
  switch (s.kind) {
    case Kind::SGD: return std::make_unique<ember::optim::SGD>(std::move(params), s.lr, s.momentum, false, s.weight_decay);
    case Kind::Adam: return std::make_unique<ember::optim::Adam>(std::move(params), s.lr, 0.9, 0.999, 1e-8, s.weight_decay);
    default: return std::make_unique<ember::optim::AdamW>(std::move(params), s.lr, 0.9, 0.999, 1e-8, s.weight_decay);
  }
}

void rules(Kind kind, uint64_t seed) {
  ember::Generator gen(seed);
  const std::vector<Settings> settings =
      kind == Kind::SGD ? std::vector<Settings>{{kind, 0.1, 0, 0}, {kind, 0.05, 0.9, 0}, {kind, 0.1, 0.5, 0.01}}
                        : std::vector<Settings>{{kind, 0.01, 0, 0}, {kind, 0.003, 0, 0.1}};
  for (const Settings& s : settings) {
    // four parameters: two always reached, one every third step skipped, one never
    std::vector<mini::Var> pm;
    std::vector<ember::Tensor> pe;
    std::vector<Replay> replays[static_cast<int>(Mistake::kCount)];
    for (int i = 0; i < 4; ++i) {
      const ember::Shape shape = i == 3 ? ember::Shape{2} : ember::Shape{1 + static_cast<int64_t>(gen.next_below(3)), 2};
      const std::vector<double> v = yours::draw(yours::count(shape), gen, false, 0);
      pm.emplace_back(mini::Tensor(v, shape), true);
      pe.push_back(ember::tensor(v, shape).requires_grad_());
      for (auto& r : replays) r.push_back({v, {}, {}, {}, 0});
    }
    const std::unique_ptr<mini::Optimizer> om = make_mini(s, pm);
    const std::unique_ptr<ember::optim::Optimizer> oe = make_ember(s, pe);
    for (int step = 1; step <= 20; ++step) {
      om->zero_grad();
      oe->zero_grad();
      for (int i = 0; i < 3; ++i) {
        if (i == 2 && step % 3 == 0) continue;
        const std::vector<double> g = yours::draw(pe[static_cast<size_t>(i)].numel(), gen, false, 0);
        const ember::Shape shape = pe[static_cast<size_t>(i)].shape();
        mini::sum(mini::mul(pm[static_cast<size_t>(i)], mini::Var(mini::Tensor(g, shape)))).backward();
        pe[static_cast<size_t>(i)].mul(ember::tensor(g, shape)).sum().backward();
        for (int x = 1; x < static_cast<int>(Mistake::kCount); ++x)
          replay_step(replays[x][static_cast<size_t>(i)], g, s, static_cast<Mistake>(x));
      }
      om->step();
      oe->step();
      for (int i = 0; i < 4; ++i) {
        const mini::Tensor got = pm[static_cast<size_t>(i)].data();
        const std::string diff = first_difference(got, pe[static_cast<size_t>(i)].detach(), 1e-10);
        if (diff.empty()) continue;
        const std::string where = "\n  " + s.text() + ", after step " + std::to_string(step) + ": parameter " +
                                  std::to_string(i) +
                                  (i == 3   ? " (no gradient ever reaches it)"
                                   : i == 2 ? " (its gradient is missing on every third step)"
                                            : "");
        std::string hint = i == 3 ? "a parameter without a gradient is left as it is: there is nothing to move it by"
                                  : "the header's rule, number by number; ember's is PyTorch's";
        // AdamW's own mistake first: on the first steps Adam's normalized step
        // barely depends on the decay, so a decay in the gradient looks like none
        std::vector<int> order{static_cast<int>(Mistake::CoupledDecay)};
        for (int x = 1; x < static_cast<int>(Mistake::kCount); ++x)
          if (x != static_cast<int>(Mistake::CoupledDecay)) order.push_back(x);
        for (int x : order)
          if ((x != static_cast<int>(Mistake::CoupledDecay) || s.kind == Kind::AdamW) &&
              yours::same(got.values(), replays[x][static_cast<size_t>(i)].p, 1e-10)) {
            hint = kMistakes[x];
            break;
          }
        if (i == 2 && step % 3 == 0)
          hint = "this step no gradient reached it: it stays as it is, and so does its state (its own step count too)";
        fail("parameter " + std::to_string(i) + ": " + diff + where, hint);
      }
    }
  }
}

// ---- an MLP ----

struct MLP : mini::Module {
  mini::Linear fc1, fc2;
  MLP(mini::Generator& gen) : fc1(4, 16, gen), fc2(16, 3, gen) {
    register_module("fc1", fc1);
    register_module("fc2", fc2);
  }
};

void mlp() {
  // 48 points of 4 numbers, in 3 classes by a rule the MLP can learn
  ember::Generator gen(81);
  const int64_t n = 48;
  const std::vector<double> xs = yours::draw(n * 4, gen, false, 0);
  std::vector<int64_t> ys(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const double* x = &xs[static_cast<size_t>(i * 4)];
    ys[static_cast<size_t>(i)] = x[0] * x[1] > 0 ? 0 : x[2] + x[3] > 0 ? 1 : 2;
  }
  mini::Generator init(81);
  MLP model(init);
  std::vector<ember::Tensor> pe;
  for (const auto& [name, v] : model.named_parameters())
    pe.push_back(ember::tensor(v.data().values(), v.shape()).requires_grad_());
  mini::Adam om(model.parameters(), 0.01);
  ember::optim::Adam oe(pe, 0.01);
  // ember's run without zero_grad, for the hint
  std::vector<ember::Tensor> pz;
  for (const ember::Tensor& p : pe) pz.push_back(p.detach().clone().requires_grad_());
  ember::optim::Adam oz(pz, 0.01);
  const mini::Var x(mini::Tensor(xs, {n, 4}));
  const ember::Tensor xe = ember::tensor(xs, {n, 4}), ye = ember::tensor(ys, {n});
  auto ember_loss = [&](const std::vector<ember::Tensor>& p) {
    return ember::cross_entropy(ember::nn::linear(ember::nn::linear(xe, p[0], p[1]).tanh(), p[2], p[3]), ye);
  };
  double first = 0, last = 0;
  for (int step = 1; step <= 150; ++step) {
    const double got = mini::train_step(om, [&] { return mini::cross_entropy(model.fc2.forward(mini::tanh(model.fc1.forward(x))), ys); });
    oe.zero_grad();
    const ember::Tensor l = ember_loss(pe);
    l.backward();
    oe.step();
    const ember::Tensor lz = ember_loss(pz);
    lz.backward();
    oz.step();
    const double want = l.item<double>();
    if (step == 1) first = want;
    last = want;
    if (!yours::close(got, want, 1e-7))
      fail("the MLP's loss at step " + std::to_string(step) + " is " + check::num(got) + ", but ember's is " +
               check::num(want) +
               "\n  an MLP, Linear(4, 16), tanh, Linear(16, 3), cross_entropy over 48 points, Adam with lr 0.01, "
               "from the same starting numbers",
           yours::close(got, lz.item<double>(), 1e-7)
               ? "the gradients were not forgotten between steps: each backward() adds to the last step's (stage "
                 "4), so train_step begins with zero_grad"
               : step == 1 ? "the first loss comes before any step: does train_step compute the loss, then backward, "
                             "then step, and return the loss it computed?"
                           : "the optimizers passed alone: is each step's loss the one computed before the step?");
  }
  check::note("the loss went from " + check::num(first) + " to " + check::num(last) + " in 150 steps, as ember's");
}

void refusals() {
  const mini::Var p(mini::Tensor({1, 2}, {2}), true);
  yours::expect_refusal([&] { mini::SGD({p}, -0.1); }, {"SGD", "-0.1"}, "SGD with lr -0.1",
                        "a negative learning rate climbs the loss: refuse it, naming the setting and its value");
  yours::expect_refusal([&] { mini::Adam({p}, 0.01, 1.0); }, {"Adam", "1"}, "Adam with beta1 1",
                        "with β1 = 1 the average never moves, and 1 − β1^t is 0: beta1 is in [0, 1)");
  yours::expect_refusal([&] { mini::Adam({p}, 0.01, 0.9, 1.5); }, {"Adam", "1.5"}, "Adam with beta2 1.5",
                        "beta2 is in [0, 1)");
  yours::expect_refusal([&] { mini::SGD({mini::Var(mini::Tensor({1}, {1}))}, 0.1); }, {"SGD"},
                        "SGD of a Var that requires no grad",
                        "it never gets a gradient: a parameter given by mistake (a buffer, a constant)");
}

check::Exercise optimizers() {
  using yours::step;
  return {"8", "Optimizers", "docs/book/build_your_own/08_optimizers.md", {
    step("SGD, with and without momentum and weight decay, 20 steps against ember's", [] { rules(Kind::SGD, 80); }),
    step("Adam, with and without weight decay, 20 steps against ember's", [] { rules(Kind::Adam, 82); }),
    step("AdamW, 20 steps against ember's", [] { rules(Kind::AdamW, 83); }),
    step("an MLP trained 150 steps with train_step and Adam: the loss at every step against ember's", mlp),
    step("what must be refused is refused, with a message naming the setting and its value", refusals),
  }};
}

const yours::Stage stage{8, optimizers};

}  // namespace
