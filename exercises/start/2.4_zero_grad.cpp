// Exercise 2.4: The forgotten zero_grad (chapter 2, docs/book/02_the_autograd_engine.md)
//
// descend() minimizes f(w) = (w - 3)^2 by gradient descent: three steps with
// learning rate 0.1 from w = 0. By hand: the gradient is 2 (w - 3), so w goes
// 0 -> 0.6 -> 1.08 -> 1.464. The loop below ends somewhere else. Run the
// checker and read where it ends. Then think: backward() puts the gradient
// into w.grad, but what does it do when w.grad already holds one, from the
// step before? Which gradient does step 2's update then use, and what must
// happen to w.grad before the next backward? Add it where the TODO stands.
//
// Compare with, after you try: section 3 of examples/autograd_basics.cpp.
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
    // TODO: what must happen to w.grad before the next step's backward?
  }
  return w.item<double>();
}

}  // namespace ex2_4
