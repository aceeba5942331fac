// Exercise 2.4: The forgotten zero_grad, a reference solution.
//
// backward() adds into .grad: without clearing it, step 2 used the sum of the
// gradients of steps 1 and 2, step 3 the sum of all three.
#include "exercises/exercise.h"

using namespace ember;

namespace ex2_4 {

double descend() {
  Tensor w = scalar_tensor(0.0, kFloat64).requires_grad_();
  for (int step = 0; step < 3; ++step) {
    Tensor loss = pow(w - 3.0, 2.0);
    loss.backward();
    {
      NoGradGuard no_grad;
      w.add_(w.grad(), -0.1);
    }
    w.set_grad(Tensor());  // zero_grad: the next backward starts from nothing
  }
  return w.item<double>();
}

}  // namespace ex2_4
