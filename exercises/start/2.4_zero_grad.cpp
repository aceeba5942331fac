// Exercise 2.4: The forgotten zero_grad (chapter 2, docs/book/02_the_autograd_engine.md)
//
// descend() minimizes f(w) = (w - 3)^2 by gradient descent: three steps with
// learning rate 0.1 from w = 0. By hand: the gradient is 2 (w - 3), so w goes
// 0 -> 0.6 -> 1.08 -> 1.464. The loop below ends somewhere else. Run the
// checker, then find what the loop forgets (autograd_basics shows it too,
// section 3) and add it where the TODO comment stands.
//
// Check it:  bash scripts/exercise.sh 2.4
#include "exercises/exercise.h"

using namespace ember;

namespace ex2_4 {

double descend() {
  Tensor w = scalar_tensor(0.0, kFloat64).requires_grad_();
  for (int step = 0; step < 3; ++step) {
    Tensor loss = pow(w - 3.0, 2.0);
    loss.backward();
    {
      NoGradGuard no_grad;  // the update is not part of any graph
      w.add_(w.grad(), -0.1);
    }
    // TODO: something is missing here
  }
  return w.item<double>();
}

}  // namespace ex2_4
