// Checks exercise 9.2: Newton's method finds the minimum of three functions
// the learner's code does not know, from their autograd derivatives. A wrong
// x is compared with where the usual mistakes end (the step's sign flipped,
// no division by f'', the derivatives always taken at x0, one step fewer),
// computed here from the functions' closed-form derivatives.
#include <cmath>
#include <functional>

#include "exercises/checks/check.h"

namespace ex9_2 {
double newton_minimum(const std::function<ember::Tensor(const ember::Tensor&)>& f, double x0, int steps);
}

namespace {

using namespace ember;

// A test function, with its derivatives written out by hand.
struct Function {
  std::function<Tensor(const Tensor&)> f;
  std::function<double(double)> d1, d2;
};

// One Newton-like update of x from f'(x) and f''(x), right or wrong.
using Update = std::function<double(double x, double d1, double d2)>;

// Where x ends after `steps` updates of one kind (with the derivatives at x0
// each time when at_x0).
double run(const Function& fn, double x0, int steps, const Update& update, bool at_x0 = false) {
  double x = x0;
  for (int s = 0; s < steps; ++s) {
    const double at = at_x0 ? x0 : x;
    x = update(x, fn.d1(at), fn.d2(at));
  }
  return x;
}

std::string mistake(const Function& fn, double x0, int steps, double got) {
  const auto near = [got](double x) {
    return std::isfinite(x) && std::abs(got - x) <= 1e-9 * std::max(1.0, std::abs(x));
  };
  const auto newton = [](double x, double d1, double d2) { return x - d1 / d2; };
  if (near(x0)) return "x did not move from x0: did the loop run, and did the update change x?";
  if (near(run(fn, x0, steps, [](double x, double d1, double d2) { return x + d1 / d2; })))
    return "x moved away from the minimum: the step goes against f'(x) (downhill), not along it";
  if (near(run(fn, x0, steps, [](double x, double d1, double) { return x - d1; })))
    return "a step of f'(x) alone is gradient descent with a rate of 1: Newton divides it by the curvature f''(x)";
  if (near(run(fn, x0, steps, [](double x, double d1, double d2) { return x - d2 / d1; })))
    return "the step is upside down: f'(x) over f''(x), not f''(x) over f'(x)";
  if (near(run(fn, x0, steps, newton, true)))
    return "the derivatives were taken at x0 in every step: the tensor f gets must hold the x of this step";
  if (steps > 1 && near(run(fn, x0, steps - 1, newton))) return "x took one update fewer than `steps`";
  return "each step: f'(x) and f''(x) at the current x, then x <- x - f'(x) / f''(x)";
}

void expect_minimum(const Function& fn, double x0, int steps, double want, const std::string& what) {
  const double got = ex9_2::newton_minimum(fn.f, x0, steps);
  if (!(std::abs(got - want) <= 1e-12))
    check::fail(what + " is " + check::num(got) + ", but should be " + check::num(want), mistake(fn, x0, steps, got));
}

const std::vector<std::pair<std::string, std::string>> kRefusals = {
    {"does not require grad and has no grad_fn",
     "ember was asked to differentiate a result that has no graph: is the tensor f gets a leaf that requires "
     "grad? and f'(x), which you differentiate again: did the grad that made it record its own computation "
     "(chapter 9)?"},
    {"does not require grad",
     "ember::grad differentiates with respect to a tensor that requires grad: the tensor f gets must be one"},
};

}  // namespace

check::Exercise check::exercise() {
  return {"9.2", "Newton's method with second derivatives", "docs/book/09_higher_order_gradients.md", {
    {"a parabola in one step: (x - 3)^2 from 0", [] {
       const Function fn{[](const Tensor& x) { return pow(x - 3.0, 2.0); }, [](double x) { return 2 * (x - 3); },
                         [](double) { return 2.0; }};
       expect_minimum(fn, 0.0, 1, 3.0, "x after one step");
     }, kRefusals},
    {"exp(x) - 2x: the minimum is ln 2", [] {
       const Function fn{[](const Tensor& x) { return exp(x) - x * 2.0; }, [](double x) { return std::exp(x) - 2; },
                         [](double x) { return std::exp(x); }};
       expect_minimum(fn, 0.0, 8, std::log(2.0), "x after 8 steps");
     }, kRefusals},
    {"cosh(x - 0.7) from 2: the minimum is 0.7", [] {
       const Function fn{[](const Tensor& x) { return (exp(x - 0.7) + exp(0.7 - x)) * 0.5; },
                         [](double x) { return std::sinh(x - 0.7); }, [](double x) { return std::cosh(x - 0.7); }};
       expect_minimum(fn, 2.0, 10, 0.7, "x after 10 steps");
     }, kRefusals},
  }};
}
