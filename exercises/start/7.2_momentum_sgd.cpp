// Exercise 7.2: SGD with momentum (chapter 7, docs/book/07_training_a_gpt.md)
//
// Write step() of an optimizer that keeps a velocity b per parameter:
//   b = momentum * b + grad      (b starts at 0, so the first step has b = grad)
//   p = p - lr * b
// The base class optim::Optimizer gives you:
//   for_each_param_with_grad(f): calls f(g, i, p, grad, group) for every
//     parameter with a gradient (group.lr is its learning rate);
//   slot(g, i, "velocity"): parameter (g, i)'s own state tensor, zeros the
//     first time (it is saved in checkpoints by that name).
//
// Think about:
//   * the velocity must survive from one step() to the next: where does it
//     live, and does your code write into that tensor or into a copy?
//   * which comes first, the new velocity or the move of p?
//   * an update is not part of any model's graph: what must autograd not do
//     while you change p in place, and what does ember say if it does?
//   * steps() counts the steps taken: who counts them?
//
// Compare with, after you try: SGD::step in train/optim.cpp.
//
// Check it:  bash scripts/exercise.sh 7.2
#include "exercises/exercise.h"

using namespace ember;

namespace ex7_2 {

class MomentumSGD : public optim::Optimizer {
 public:
  MomentumSGD(std::vector<Tensor> params, double lr, double momentum)
      : Optimizer({optim::ParamGroup{std::move(params), lr, 0.0}}), momentum(momentum) {}
  void step() override { TODO("for every parameter with a gradient: its new velocity, then the parameter's move"); }
  std::string type_name() const override { return "MomentumSGD"; }
  std::vector<std::string> slot_names() const override { return {"velocity"}; }
  double momentum;
};

// How the checker makes one (keep this function as it is).
std::unique_ptr<optim::Optimizer> make_momentum_sgd(std::vector<Tensor> params, double lr, double momentum) {
  return std::make_unique<MomentumSGD>(std::move(params), lr, momentum);
}

}  // namespace ex7_2
