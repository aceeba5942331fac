// Stage 8: optimizers (docs/book/build_your_own/08_optimizers.md).
// Each MINI_TODO asks a question; replace it with your code, then run
//   bash scripts/build_your_own.sh 8
#include "mini/optim.h"

#include <cmath>
#include <utility>

#include "mini/error.h"

namespace mini {

void Optimizer::zero_grad() const {
  MINI_TODO("which gradients, and what does stage 4 give you to forget one?");
}

double train_step(Optimizer& opt, const std::function<Var()>& loss) {
  (void)opt;
  (void)loss;
  MINI_TODO("four things in an order: which comes first, and what happens to the second step's gradients if it "
            "is left out?");
}

SGD::SGD(std::vector<Var> params, double lr, double momentum, double weight_decay)
    : Optimizer(std::move(params)), lr(lr), momentum_(momentum), weight_decay_(weight_decay), buffers_(params_.size()) {
  MINI_TODO("which settings make no sense (refuse them, naming the setting and its value), and which parameters "
            "could an optimizer not update?");
}

void SGD::step() {
  MINI_TODO("for each parameter with a gradient: the header's rule. What is b on the first step, and through "
            "which of stage 4's functions do you change p?");
}

Adam::Adam(std::vector<Var> params, double lr, double beta1, double beta2, double eps, double weight_decay)
    : Optimizer(std::move(params)), lr(lr), beta1_(beta1), beta2_(beta2), eps_(eps), weight_decay_(weight_decay),
      state_(params_.size()) {
  MINI_TODO("which betas make no sense?");
}

void Adam::step() {
  MINI_TODO("m and v start at 0: what does that do to the first steps, and what undoes it? Where does eps go, and "
            "where does AdamW's decay go?");
}

AdamW::AdamW(std::vector<Var> params, double lr, double beta1, double beta2, double eps, double weight_decay)
    : Adam(std::move(params), lr, beta1, beta2, eps, weight_decay) {
  decoupled_ = true;
}

}  // namespace mini
