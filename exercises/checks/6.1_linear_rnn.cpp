// Checks exercise 6.1: the lesson's h_3 = 1.5 and dh_3/dx = (0.25, 0.5, 1),
// then the vanishing 0.5^10 and the exploding 1.5^10, all through backward().
// A wrong h_3 or gradient is compared with the usual mistakes (w times the
// input too, or only, the inputs reversed, one left out, x_1 counted twice).
#include <cmath>

#include "exercises/checks/check.h"

namespace ex6_1 {
ember::Tensor linear_rnn(const ember::Tensor& x, double w);
}

namespace {
using namespace ember;

// The hint for a wrong h_3 of w = 0.5, x = (2, 0, 1), from the number it is.
std::string h_mistake(double h) {
  const auto is = [h](double v) { return std::abs(h - v) < 1e-12; };
  if (is(0.75)) return "0.75 is w (h_{t-1} + x_t): w multiplies the state only; the input enters as it is";
  if (is(2.25)) return "2.25 is the inputs taken last to first: x_1 = 2 enters first and fades the most";
  if (is(1.0)) return "1 is what two steps give: one of the three inputs was left out; each enters once";
  if (is(1.75)) return "1.75 counts x_1 twice: h_0 is 0, and then every input enters once";
  return "h_1 = 2, h_2 = 0.5 * 2 + 0 = 1, h_3 = 0.5 * 1 + 1";
}

// The hint for a wrong dh_3/dx, from the gradient it is.
std::string gradient_mistake(const Tensor& g) {
  const auto is = [&g](std::vector<double> v) { return check::matches(g, tensor(v), 1e-12); };
  if (is({0.5, 0.5, 0.5}))
    return "every input counts alike, w: w multiplied the input instead of the state, so nothing fades; in the "
           "lesson x_t reaches h_T through T - t multiplications by w";
  if (is({0.125, 0.25, 0.5})) return "one w too many on every input: w multiplies the state only";
  if (is({1.0, 0.5, 0.25})) return "the inputs went in last to first: the latest input, x_3, reaches h_3 whole";
  return "x_t reaches h_3 through 3 - t multiplications by w: dh_3/dx_t = w^(3 - t)";
}

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
       expect(h.defined() && h.dim() == 0,
              "linear_rnn should return h_T as a 0-d tensor, got " +
                  (h.defined() ? "shape " + show(h.shape()) : std::string("nothing")),
              "each x_t = select(x, 0, t) is 0-d: a state that starts 0-d stays 0-d, one that starts (1) stays (1)");
       expect_near(h.item<double>(), 1.5, "h_3", 1e-12, h_mistake(h.item<double>()));
     }},
    {"dh_3/dx = (0.25, 0.5, 1), by backward()", [] {
       Tensor x = tensor({2.0, 0.0, 1.0}, kFloat64).requires_grad_();
       Tensor h = ex6_1::linear_rnn(x, 0.5);
       expect(h.requires_grad(), "h_3 does not depend on x for autograd: no graph was recorded",
              "autograd follows only ops on x itself; a number read out of x is a constant to it");
       h.backward();
       expect_close(x.grad(), tensor({0.25, 0.5, 1.0}, kFloat64), "x.grad", 1e-12, gradient_mistake(x.grad()));
     }},
    {"ten steps back: 0.5^10 vanishes, 1.5^10 explodes", [] {
       expect_near(first_input_gradient(0.5, 10), std::pow(0.5, 10), "dh_11/dx_1 for w = 0.5", 1e-15,
                   "x_1 reaches h_11 through ten multiplications by w");
       expect_near(first_input_gradient(1.5, 10), std::pow(1.5, 10), "dh_11/dx_1 for w = 1.5", 1e-9,
                   "x_1 reaches h_11 through ten multiplications by w");
       note("dh/dx ten steps back: " + num(first_input_gradient(0.5, 10)) + " for w = 0.5, " +
            num(first_input_gradient(1.5, 10)) + " for w = 1.5");
     }},
  }};
}
