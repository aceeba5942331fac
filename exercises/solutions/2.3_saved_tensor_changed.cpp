// Exercise 2.3: A saved tensor changed, a reference solution.
//
// MulBackward saved w (the gradient of x * w with respect to x is w), and
// w.mul_ then wrote into w's storage: its version moved on, and backward
// refused to use it. A new tensor for the doubled weight leaves w alone.
#include "exercises/exercise.h"

using namespace ember;

namespace ex2_3 {

struct StepResult {
  Tensor loss;
  Tensor next_w;
};

StepResult step(const Tensor& x, Tensor w) {
  Tensor loss = sum(x * w);
  return {loss, w * 2.0};
}

}  // namespace ex2_3
