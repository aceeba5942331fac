// Checks exercise 2.3: backward runs, the gradient is that of sum(x * w) with
// the given w, the next weight is 2 w, and the caller's w is untouched; a
// wrong loss, gradient or next_w is named by the mistake it means (doubled
// too early, the doubling lost).
#include "exercises/checks/check.h"

namespace ex2_3 {
struct StepResult {
  ember::Tensor loss;
  ember::Tensor next_w;
};
StepResult step(const ember::Tensor& x, ember::Tensor w);
}  // namespace ex2_3

namespace {
using namespace ember;
}  // namespace

check::Exercise check::exercise() {
  return {"2.3", "A saved tensor changed", "docs/book/02_the_autograd_engine.md", {
    {"backward() through the loss runs", [] {
       Tensor x = tensor({1.0, 2.0, 3.0}, kFloat64).requires_grad_();
       Tensor w = tensor({0.5, -1.0, 2.0}, kFloat64);
       ex2_3::StepResult r = ex2_3::step(x, w);
       try {
         r.loss.backward();
       } catch (const Error& e) {
         fail(std::string("backward() refused:\n") + e.what(),
              "which tensor did that node save, and which line wrote into it after it was saved?");
       }
     }},
    {"the loss and its gradient are those of sum(x * w) with w as given", [] {
       Tensor x = tensor({1.0, 2.0, 3.0}, kFloat64).requires_grad_();
       Tensor w = tensor({0.5, -1.0, 2.0}, kFloat64);
       ex2_3::StepResult r = ex2_3::step(x, w);
       const double loss = r.loss.item<double>();
       expect_near(loss, 4.5, "the loss", 1e-12,
                   std::abs(loss - 9.0) < 1e-12 ? "9 is sum(x * 2w): the weight was doubled before the loss used it"
                                                : "the loss is sum(x * w) = 0.5 - 2 + 6, with w as the caller gave it");
       r.loss.backward();
       const Tensor got = x.grad(), want = tensor({0.5, -1.0, 2.0}, kFloat64);
       expect_close(got, want, "x.grad", 1e-12,
                    check::matches(got, want * 2.0, 1e-12)
                        ? "x.grad is 2 w: backward read the doubled weight, so the loss's node saw the write after all"
                        : "the gradient of sum(x * w) with respect to x is w");
     }},
    {"next_w is 2 w, and the caller's w is unchanged", [] {
       Tensor x = tensor({1.0, 2.0, 3.0}, kFloat64).requires_grad_();
       Tensor w = tensor({0.5, -1.0, 2.0}, kFloat64);
       ex2_3::StepResult r = ex2_3::step(x, w);
       expect_close(r.next_w, tensor({1.0, -2.0, 4.0}, kFloat64), "next_w", 1e-12,
                    check::matches(r.next_w, tensor({0.5, -1.0, 2.0}, kFloat64), 1e-12)
                        ? "next_w is w as it came: the doubling was lost on the way"
                        : "next_w is the weight for the next step, 2 w");
       expect_close(w, tensor({0.5, -1.0, 2.0}, kFloat64), "the caller's w after step()", 1e-12,
                    "a Tensor passed by value is another handle to the same numbers: writing into it writes into the "
                    "caller's");
     }},
  }};
}
