// Checks exercise 6.1: the lesson's h_3 = 1.5 and dh_3/dx = (0.25, 0.5, 1),
// then the vanishing 0.5^10 and the exploding 1.5^10, all through backward().
#include <cmath>

#include "exercises/checks/check.h"

namespace ex6_1 {
ember::Tensor linear_rnn(const ember::Tensor& x, double w);
}

namespace {
using namespace ember;

// dh_T/dx_1 for T = steps + 1 inputs: the gradient from `steps` steps back.
double first_input_gradient(double w, int steps) {
  Tensor x = ones({steps + 1}, kFloat64).requires_grad_();
  ex6_1::linear_rnn(x, w).backward();
  return x.grad().to_vector<double>().front();
}
}  // namespace

check::Exercise check::exercise() {
  return {"6.1", "The lesson's linear RNN, through autograd", "docs/book/06_sequence_models.md", {
    {"h_3 = 1.5 for w = 0.5, x = (2, 0, 1)", [] {
       Tensor h = ex6_1::linear_rnn(tensor({2.0, 0.0, 1.0}, kFloat64), 0.5);
       expect(h.defined() && h.dim() == 0, "linear_rnn should return h_T as a 0-d tensor, got " +
                                               (h.defined() ? "shape " + show(h.shape()) : std::string("nothing")));
       expect_near(h.item<double>(), 1.5, "h_3", 1e-12, "h_1 = 2, h_2 = 0.5 * 2 + 0 = 1, h_3 = 0.5 * 1 + 1");
     }},
    {"dh_3/dx = (0.25, 0.5, 1), by backward()", [] {
       Tensor x = tensor({2.0, 0.0, 1.0}, kFloat64).requires_grad_();
       Tensor h = ex6_1::linear_rnn(x, 0.5);
       expect(h.requires_grad(), "h_3 does not depend on x for autograd: no graph was recorded",
              "compute with ember ops on x (select, *, +), not on numbers read out of it");
       h.backward();
       expect_close(x.grad(), tensor({0.25, 0.5, 1.0}, kFloat64), "x.grad", 1e-12);
     }},
    {"ten steps back: 0.5^10 vanishes, 1.5^10 explodes", [] {
       expect_near(first_input_gradient(0.5, 10), std::pow(0.5, 10), "dh_11/dx_1 for w = 0.5", 1e-15);
       expect_near(first_input_gradient(1.5, 10), std::pow(1.5, 10), "dh_11/dx_1 for w = 1.5", 1e-9);
       note("dh/dx ten steps back: " + num(first_input_gradient(0.5, 10)) + " for w = 0.5, " +
            num(first_input_gradient(1.5, 10)) + " for w = 1.5");
     }},
  }};
}
