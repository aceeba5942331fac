// Stage 8, the reference solution: each rule written with stage 3's tensor
// ops, the state kept per parameter, the update applied with add_.
#include "mini/optim.h"

#include <cmath>
#include <utility>

#include "mini/error.h"

namespace mini {

namespace {

Tensor number(double v) { return Tensor({v}, {1}); }

// grad + λ p (λ = 0: grad itself)
Tensor decayed(const Tensor& grad, const Var& p, double weight_decay) {
  return weight_decay == 0 ? grad : add(grad, mul(number(weight_decay), p.data()));
}

void check_hyper(bool ok, const char* op, const char* what, double value) {
  MINI_CHECK(ok, op, what << " = " << value << " is out of range");
}

}  // namespace

void Optimizer::zero_grad() const {
  for (const Var& p : params_) p.zero_grad();
}

double train_step(Optimizer& opt, const std::function<Var()>& loss) {
  opt.zero_grad();  // else this step's gradients add to the last one's
  const Var l = loss();
  l.backward();
  opt.step();
  return l.data().values().at(0);
}

SGD::SGD(std::vector<Var> params, double lr, double momentum, double weight_decay)
    : Optimizer(std::move(params)), lr(lr), momentum_(momentum), weight_decay_(weight_decay), buffers_(params_.size()) {
  check_hyper(lr >= 0, "SGD", "lr", lr);
  check_hyper(momentum >= 0, "SGD", "momentum", momentum);
  check_hyper(weight_decay >= 0, "SGD", "weight_decay", weight_decay);
  for (const Var& p : params_) MINI_CHECK(p.requires_grad(), "SGD", "a parameter that requires no grad");
}

void SGD::step() {
  for (size_t i = 0; i < params_.size(); ++i) {
    const std::optional<Tensor> grad = params_[i].grad();
    if (!grad) continue;  // nothing reached it: it stays
    Tensor g = decayed(*grad, params_[i], weight_decay_);
    if (momentum_ != 0) {
      std::optional<Tensor>& b = buffers_[i];
      b = b ? add(mul(number(momentum_), *b), g) : Tensor(g.values(), g.shape());
      g = *b;
    }
    params_[i].add_(mul(number(-lr), g));
  }
}

Adam::Adam(std::vector<Var> params, double lr, double beta1, double beta2, double eps, double weight_decay)
    : Optimizer(std::move(params)), lr(lr), beta1_(beta1), beta2_(beta2), eps_(eps), weight_decay_(weight_decay),
      state_(params_.size()) {
  const char* op = "Adam";
  check_hyper(lr >= 0, op, "lr", lr);
  check_hyper(beta1 >= 0 && beta1 < 1, op, "beta1", beta1);
  check_hyper(beta2 >= 0 && beta2 < 1, op, "beta2", beta2);
  check_hyper(eps >= 0, op, "eps", eps);
  check_hyper(weight_decay >= 0, op, "weight_decay", weight_decay);
  for (const Var& p : params_) MINI_CHECK(p.requires_grad(), op, "a parameter that requires no grad");
}

void Adam::step() {
  for (size_t i = 0; i < params_.size(); ++i) {
    const Var& p = params_[i];
    const std::optional<Tensor> grad = p.grad();
    if (!grad) continue;
    if (decoupled_ && weight_decay_ != 0) p.add_(mul(number(-lr * weight_decay_), p.data()));
    const Tensor g = decoupled_ ? *grad : decayed(*grad, p, weight_decay_);
    if (!state_[i]) {
      const std::vector<double> zeros(static_cast<size_t>(g.numel()), 0.0);
      state_[i] = State{Tensor(zeros, g.shape()), Tensor(zeros, g.shape()), 0};
    }
    State& s = *state_[i];
    ++s.t;
    s.m = add(mul(number(beta1_), s.m), mul(number(1 - beta1_), g));
    s.v = add(mul(number(beta2_), s.v), mul(number(1 - beta2_), mul(g, g)));
    const double c1 = 1 - std::pow(beta1_, static_cast<double>(s.t)), c2 = 1 - std::pow(beta2_, static_cast<double>(s.t));
    const double eps = eps_;
    const Tensor denom = map(s.v, [c2, eps](double v) { return std::sqrt(v / c2) + eps; });
    p.add_(mul(number(-lr / c1), div(s.m, denom)));
  }
}

AdamW::AdamW(std::vector<Var> params, double lr, double beta1, double beta2, double eps, double weight_decay)
    : Adam(std::move(params), lr, beta1, beta2, eps, weight_decay) {
  decoupled_ = true;
}

}  // namespace mini
