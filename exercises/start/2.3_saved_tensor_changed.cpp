// Exercise 2.3: A saved tensor changed (chapter 2, docs/book/02_the_autograd_engine.md)
//
// step(x, w) returns the loss sum(x * w), and the weight doubled, for the
// next step. Run the checker as the file is: backward() refuses, with a
// message. Read it: which node saved which tensor, and which line of step()
// changed that tensor afterwards? Then change step() so that
//   * the loss and its gradient are those of sum(x * w) with w as given,
//   * next_w is 2 w,
//   * the caller's w is left as it was.
//
// Check it:  bash scripts/exercise.sh 2.3
#include "exercises/exercise.h"

using namespace ember;

namespace ex2_3 {

struct StepResult {
  Tensor loss;
  Tensor next_w;
};

StepResult step(const Tensor& x, Tensor w) {
  Tensor loss = sum(x * w);
  w.mul_(2.0);  // the weight for the next step
  return {loss, w};
}

}  // namespace ex2_3
