// Stage 8 of your framework: optimizers
// (docs/book/build_your_own/08_optimizers.md).
//
// An optimizer holds the parameters of a model (stage 7's parameters()) and,
// after each backward(), moves each one against its gradient. The rules are
// PyTorch's (and ember's), so that a model trained with yours and with
// ember from the same starting numbers follows the same path:
//
//   SGD, momentum μ, weight decay λ:   g = grad + λ p;  b = μ b + g (b = g on the first step);  p -= lr b
//   Adam:   g = grad + λ p;  m = β1 m + (1 − β1) g;  v = β2 v + (1 − β2) g²
//           p -= lr · (m / (1 − β1^t)) / (√(v / (1 − β2^t)) + ε)      t = the step, counted from 1
//   AdamW:  Adam with λ = 0 in g, and first p -= lr λ p (the decay decoupled from the gradient)
//
// A parameter with no gradient (none reached it) is left as it is, and its
// state too. The updates go through Var::add_ (stage 4), in place, so that a
// backward still holding the old numbers would be refused.
#pragma once

#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "mini/autograd.h"

namespace mini {

class Optimizer {
 public:
  explicit Optimizer(std::vector<Var> params) : params_(std::move(params)) {}
  virtual ~Optimizer() = default;
  /// Moves every parameter that has a gradient by the optimizer's rule.
  virtual void step() = 0;
  /// Forgets every parameter's gradient.
  void zero_grad() const;
  const std::vector<Var>& params() const { return params_; }

 protected:
  std::vector<Var> params_;
};

class SGD : public Optimizer {
 public:
  SGD(std::vector<Var> params, double lr, double momentum = 0, double weight_decay = 0);
  void step() override;
  double lr;

 private:
  double momentum_, weight_decay_;
  std::vector<std::optional<Tensor>> buffers_;  // the momentum b of each parameter, once it has one
};

class Adam : public Optimizer {
 public:
  Adam(std::vector<Var> params, double lr = 1e-3, double beta1 = 0.9, double beta2 = 0.999, double eps = 1e-8,
       double weight_decay = 0);
  void step() override;
  double lr;

 protected:
  bool decoupled_ = false;  // AdamW

 private:
  double beta1_, beta2_, eps_, weight_decay_;
  struct State {
    Tensor m, v;
    int64_t t = 0;  // the steps this parameter has taken
  };
  std::vector<std::optional<State>> state_;
};

/// Adam with the weight decay decoupled from the gradient.
class AdamW : public Adam {
 public:
  AdamW(std::vector<Var> params, double lr = 1e-3, double beta1 = 0.9, double beta2 = 0.999, double eps = 1e-8,
        double weight_decay = 0.01);
};

/// One step of training: the gradients of the last step forgotten, the loss
/// computed (loss(): a Var of one element), its backward, the optimizer's
/// step. Returns the loss's value.
double train_step(Optimizer& opt, const std::function<Var()>& loss);

}  // namespace mini
