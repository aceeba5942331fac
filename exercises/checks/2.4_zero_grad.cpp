// Checks exercise 2.4: three steps of gradient descent end at 1.464; where
// they end instead names the mistake (gradients accumulated, cleared before
// the update used them).
#include "exercises/checks/check.h"

namespace ex2_4 {
double descend();
}

namespace {

// The hint for a wrong end point w, from where it is.
std::string hint_for(double w) {
  if (std::abs(w - 3.024) < 1e-9)
    return "3.024 is what you get when each step's gradient is added to all the earlier ones: backward() "
           "accumulates into .grad, so step 2 used the sum of two gradients and step 3 of three";
  if (std::abs(w) < 1e-12)
    return "w never moved: the gradient was cleared before the update used it; clear it once it is used, before "
           "the next backward";
  if (std::abs(w - 1.08) < 1e-9 || std::abs(w - 0.6) < 1e-9)
    return "that is where " + std::string(std::abs(w - 0.6) < 1e-9 ? "one step" : "two steps") +
           " end: did every step update w?";
  return "by hand the steps go 0 -> 0.6 -> 1.08 -> 1.464, each with the gradient 2 (w - 3) of its own w";
}

}  // namespace

check::Exercise check::exercise() {
  return {"2.4", "The forgotten zero_grad", "docs/book/02_the_autograd_engine.md", {
    {"three steps from w = 0 end at w = 1.464", [] {
       const double w = ex2_4::descend();
       expect_near(w, 1.464, "w after three steps", 1e-12, hint_for(w));
     }, {{"undefined", "the update read w.grad after it had been cleared: clear it once the update has used it, "
                       "before the next backward"}}},
  }};
}
