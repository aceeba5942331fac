// Exercise 7.2: SGD with momentum, a reference solution.
#include "exercises/exercise.h"

using namespace ember;

namespace ex7_2 {

class MomentumSGD : public optim::Optimizer {
 public:
  MomentumSGD(std::vector<Tensor> params, double lr, double momentum)
      : Optimizer({optim::ParamGroup{std::move(params), lr, 0.0}}), momentum(momentum) {}
  void step() override {
    NoGradGuard no_grad;
    ++steps_;
    for_each_param_with_grad([&](size_t g, size_t i, Tensor& p, const Tensor& grad, const optim::ParamGroup& group) {
      Tensor& b = slot(g, i, "velocity");
      b.mul_(momentum);
      b.add_(grad);           // b = momentum b + grad
      p.add_(b, -group.lr);   // p = p - lr b
    });
  }
  std::string type_name() const override { return "MomentumSGD"; }
  std::vector<std::string> slot_names() const override { return {"velocity"}; }
  double momentum;
};

std::unique_ptr<optim::Optimizer> make_momentum_sgd(std::vector<Tensor> params, double lr, double momentum) {
  return std::make_unique<MomentumSGD>(std::move(params), lr, momentum);
}

}  // namespace ex7_2
