// Checks exercise 7.2: the learner's optimizer takes the same steps as
// optim::SGD with momentum (a wrong trajectory is compared with those of the
// usual mistakes: plain SGD, an averaged velocity, p moved before b), keeps
// its velocity as state, and skips parameters without a gradient.
#include "exercises/checks/check.h"

namespace ex7_2 {
std::unique_ptr<ember::optim::Optimizer> make_momentum_sgd(std::vector<ember::Tensor> params, double lr,
                                                           double momentum);
}

namespace {

using namespace ember;

// Five steps on a least-squares problem; returns the weights after each.
std::vector<Tensor> run_five_steps(optim::Optimizer& opt, Tensor& w, const Tensor& x, const Tensor& y) {
  std::vector<Tensor> after;
  for (int s = 0; s < 5; ++s) {
    opt.zero_grad();
    mean(pow(matmul(x, w) - y, 2.0)).backward();
    opt.step();
    after.push_back(w.detach().clone());
  }
  return after;
}

// One update of p and its velocity b, the right one or a typical wrong one.
using Rule = std::function<void(Tensor& p, Tensor& b, const Tensor& grad, double lr, double mu)>;

// The same five steps with a rule written here.
std::vector<Tensor> run_rule(const Rule& rule, Tensor w, const Tensor& x, const Tensor& y, double lr, double mu) {
  w = w.detach().clone().requires_grad_();
  Tensor b = zeros_like(w);
  std::vector<Tensor> after;
  for (int s = 0; s < 5; ++s) {
    w.set_grad(Tensor());
    mean(pow(matmul(x, w) - y, 2.0)).backward();
    NoGradGuard no_grad;
    rule(w, b, w.grad(), lr, mu);
    after.push_back(w.detach().clone());
  }
  return after;
}

bool same(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  for (size_t s = 0; s < a.size(); ++s)
    if (!check::matches(a[s], b[s], 1e-12)) return false;
  return true;
}

// The mistake whose five steps are the learner's, or a general hint.
std::string trajectory_mistake(const std::vector<Tensor>& got, const Tensor& w0, const Tensor& x, const Tensor& y,
                               double lr, double mu) {
  const std::vector<std::pair<Rule, std::string>> mistakes = {
      {[](Tensor& p, Tensor&, const Tensor& g, double lr, double) { p.add_(g, -lr); },
       "w moves as in plain gradient descent, so nothing carries over from one step to the next: does p move by "
       "this step's gradient instead of the velocity, or does the new velocity go into a copy that the slot "
       "never sees?"},
      {[](Tensor& p, Tensor& b, const Tensor& g, double lr, double mu) {
         b.mul_(mu).add_(g, 1 - mu);
         p.add_(b, -lr);
       },
       "the gradient was weighted by (1 - momentum): that makes b an average of the gradients (Adam's first "
       "moment); the velocity adds each gradient whole"},
      {[](Tensor& p, Tensor& b, const Tensor& g, double lr, double mu) {
         p.add_(b, -lr);
         b.mul_(mu).add_(g);
       },
       "p moved by the velocity of the step before: the new velocity, with this step's gradient in it, moves p"},
      {[](Tensor& p, Tensor& b, const Tensor& g, double lr, double mu) {
         b.add_(g).mul_(mu);
         p.add_(b, -lr);
       },
       "the momentum also scaled this step's gradient: the old velocity is multiplied, then the gradient added"},
  };
  for (const auto& [rule, hint] : mistakes)
    if (same(got, run_rule(rule, w0, x, y, lr, mu))) return hint;
  return "b = momentum * b + grad, then p = p - lr * b; b starts at zero and is kept from step to step";
}

// The first step without momentum, from w = (1, -2) with grad 2 w.
std::string first_step_mistake(const Tensor& w) {
  if (check::matches(w, tensor({1.0, -2.0}, kFloat64), 0.0))
    return "w did not move: was p moved by b while b still held its starting zeros?";
  if (check::matches(w, tensor({1.2, -2.4}, kFloat64), 1e-12)) return "w moved up the gradient, not down it";
  if (check::matches(w, tensor({-1.0, 2.0}, kFloat64), 1e-12))
    return "w moved by the whole gradient: the move is lr * b";
  return "p = p - lr * b, and b = grad here";
}

const std::vector<std::pair<std::string, std::string>> kRefusals = {
    {"in an in-place operation",
     "changing p is not a computation for autograd to record, and ember refuses to record an in-place change "
     "of a leaf: the whole update runs where autograd records nothing"},
};

}  // namespace

check::Exercise check::exercise() {
  return {"7.2", "SGD with momentum", "docs/book/07_training_a_gpt.md", {
    {"one step without momentum is plain gradient descent", [] {
       Tensor w = tensor({1.0, -2.0}, kFloat64).requires_grad_();
       auto opt = ex7_2::make_momentum_sgd({w}, 0.1, 0.0);
       sum(w * w).backward();  // grad = 2 w
       opt->step();
       const Tensor want = tensor({0.8, -1.6}, kFloat64);
       if (check::max_diff(w, want, "w after one step") > 1e-12)
         fail("w after one step is " + show(w) + ", but should be " + show(want), first_step_mistake(w));
     }, kRefusals},
    {"five steps with momentum 0.9 equal optim::SGD's", [] {
       Generator gen(41);
       Tensor x = randn({8, 3}, gen, kFloat64), y = randn({8, 1}, gen, kFloat64);
       Tensor w1 = randn({3, 1}, gen, kFloat64);
       const Tensor w0 = w1.clone();
       Tensor w2 = w1.clone().requires_grad_();
       w1.requires_grad_();
       auto mine = ex7_2::make_momentum_sgd({w1}, 0.05, 0.9);
       optim::SGD ref({w2}, 0.05, 0.9);
       const std::vector<Tensor> a = run_five_steps(*mine, w1, x, y), b = run_five_steps(ref, w2, x, y);
       for (size_t s = 0; s < a.size(); ++s)
         if (check::max_diff(a[s], b[s], "w after step " + std::to_string(s + 1)) > 1e-12)
           fail("w after step " + std::to_string(s + 1) + " is " + show(a[s]) + ", but should be " + show(b[s]),
                trajectory_mistake(a, w0, x, y, 0.05, 0.9));
       expect(mine->steps() == 5, "steps() is " + std::to_string(mine->steps()) + " after five steps",
              "the base class keeps the count, but only step() knows a step was taken: it adds each one");
     }, kRefusals},
    {"the velocity is the optimizer's state", [] {
       Tensor w = tensor({1.0, -2.0}, kFloat64).requires_grad_();
       auto opt = ex7_2::make_momentum_sgd({w}, 0.1, 0.5);
       sum(w * w).backward();
       opt->step();
       const auto state = opt->state();
       bool found = false;
       for (const auto& [name, t] : state)
         if (name.find("velocity") != std::string::npos) {
           found = true;
           expect_close(t, tensor({2.0, -4.0}, kFloat64), "the velocity after one step", 1e-12,
                        check::matches(t, zeros_like(t), 0.0)
                            ? "the slot still holds its starting zeros: the new velocity went into another tensor"
                            : "after one step the velocity is the first gradient, 2 w = (2, -4)");
         }
       expect(found, "the optimizer's state has no velocity",
              "the state holds the slots the optimizer asked the base class for, by name: does step() keep b in "
              "one?");
     }, kRefusals},
    {"a parameter without a gradient is left alone", [] {
       Tensor used = tensor({1.0}, kFloat64).requires_grad_(), unused = tensor({5.0}, kFloat64).requires_grad_();
       auto opt = ex7_2::make_momentum_sgd({used, unused}, 0.1, 0.9);
       sum(used * used).backward();
       opt->step();
       expect_close(unused, tensor({5.0}, kFloat64), "the unused parameter", 0.0,
                    "a parameter without a gradient was not used: it has no step to take (for_each_param_with_grad "
                    "skips it)");
     }, kRefusals},
  }};
}
