// Checks exercise 2.1 (SquareBackward): the value, the node, the gradient
// (compared with the usual mistakes: no factor 2, no g, the output instead of
// the derivative), gradcheck, and the OpScope that lets the instruments see
// the op.
#include "exercises/checks/check.h"

namespace ex2_1 {
ember::Tensor square(const ember::Tensor& x);
}

namespace {

using namespace ember;

// Sees which ops begin while it is installed (what the profiler sees).
struct OpNames : AutogradObserver {
  std::vector<std::string> names;
  void op_begin(const char* op, const std::vector<const Tensor*>&) override { names.push_back(op); }
};

// The names of the ops that begin while f runs.
template <class F>
std::vector<std::string> ops_during(F f) {
  OpNames seen;
  set_autograd_observer(&seen);
  try {
    f();
  } catch (...) {
    set_autograd_observer(nullptr);
    throw;
  }
  set_autograd_observer(nullptr);
  return seen.names;
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out.empty() ? "none" : out;
}

// The hint for a wrong x.grad of sum(square(x) * w), from the way it is wrong.
std::string gradient_mistake(const Tensor& got, const Tensor& x, const Tensor& w) {
  if (check::matches(got, x * w, 1e-12)) return "the factor 2 is missing: d(x^2)/dx = 2x";
  if (check::matches(got, x * 2.0, 1e-12))
    return "that is 2x whatever arrives: the rule must multiply by g, the gradient of the output (here w), "
           "as the chain rule says";
  if (check::matches(got, w * 2.0, 1e-12)) return "the saved x is missing: d(x^2)/dx = 2x depends on x";
  if (check::matches(got, x * x * w, 1e-12))
    return "that is g times x^2, the output itself: the rule multiplies g by the derivative of x^2";
  return "the gradient of x is g times d(x^2)/dx, element by element";
}

// x.grad of sum(square(x) * w) must be 2 x w.
void expect_gradient(const Tensor& x0, const Tensor& w, const std::string& what) {
  Tensor x = x0.clone().requires_grad_();
  sum(ex2_1::square(x) * w).backward();
  check::expect(x.grad().defined(), what + " is undefined", "the rule returns the gradient of x");
  const Tensor want = x0 * w * 2.0;
  const double d = check::max_diff(x.grad(), want, what);
  if (d > 1e-12)
    check::fail(what + " is " + check::show(x.grad()) + ", but should be " + check::show(want) +
                    " (largest difference " + check::num(d) + ")",
                gradient_mistake(x.grad(), x0, w));
}

const std::vector<std::pair<std::string, std::string>> kRefusals = {
    {"gradient(s) for its", "the rule returns one gradient per input of the node, and square has one input, x"},
};

}  // namespace

check::Exercise check::exercise() {
  return {"2.1", "SquareBackward", "docs/book/02_the_autograd_engine.md", {
    {"square(x) computes x * x", [] {
       Tensor x = tensor({1.0, -2.0, 3.0}, kFloat64);
       Tensor y = ex2_1::square(x);
       expect_close(y, tensor({1.0, 4.0, 9.0}, kFloat64), "square((1, -2, 3))", 1e-6,
                    "square multiplies x by itself, element by element");
       expect(!y.grad_fn(), "square(x) recorded a node although x does not require grad",
              "a node is only for backward: when no input requires grad (or grad mode is off) an op records "
              "none; does square ask before it records?");
     }},
    {"square records a SquareBackward when x requires grad", [] {
       Tensor x = tensor({1.0, -2.0, 3.0}, kFloat64).requires_grad_();
       Tensor y = ex2_1::square(x);
       expect(y.grad_fn() != nullptr, "square(x) returned a tensor without grad_fn: no node was recorded",
              "x requires grad, so the output needs a grad_fn: the node that will turn its gradient into x's "
              "(autograd/node.h says how a node becomes the output's grad_fn)");
       const std::string name = y.grad_fn()->name();
       expect(name == "SquareBackward", "the output's grad_fn is " + name + ", not SquareBackward",
              name == "MulBackward"
                  ? "MulBackward is the node of the ember op x * x: an op records its node whenever it runs, so "
                    "the forward must be computed by something that records nothing, and the node be yours"
                  : "the forward must record nothing, so that your SquareBackward is the output's grad_fn");
       std::vector<std::string> inside = ops_during([&] { (void)ex2_1::square(x); });
       inside.erase(std::remove(inside.begin(), inside.end(), "square"), inside.end());
       expect(inside.empty(), "square ran the ember op(s) " + joined(inside) + " inside it",
              "an ember op records a node of its own (mul's is MulBackward), which is built and then dropped when "
              "your node takes its place: what computes the forward without recording anything?");
     }},
    {"the gradient of sum(square(x)) is 2x", [] {
       const Tensor x0 = tensor({1.0, -2.0, 3.0}, kFloat64);
       expect_gradient(x0, ones({3}, kFloat64), "x.grad after backward");
     }, kRefusals},
    {"with a gradient g that is not 1: sum(square(x) * w) gives 2 x w", [] {
       expect_gradient(tensor({1.0, -2.0, 3.0}, kFloat64), tensor({0.5, 2.0, -1.0}, kFloat64),
                       "x.grad of sum(square(x) * (0.5, 2, -1))");
     }, kRefusals},
    {"gradcheck passes, also on a transposed (non-contiguous) input", [] {
       Generator gen(3);
       for (bool transposed : {false, true}) {
         Tensor x = transposed ? randn({4, 3}, gen, kFloat64).t() : randn({3, 4}, gen, kFloat64);
         x.requires_grad_();
         GradcheckResult r = gradcheck([](const std::vector<Tensor>& in) { return ex2_1::square(in[0]); }, {x});
         expect(r.ok, "gradcheck failed" + std::string(transposed ? " on a transposed input" : "") + ":\n" + r.report,
                "gradcheck compares your rule with finite differences of your forward: do both follow x's "
                "elements, whatever its strides?");
       }
     }, kRefusals},
    {"the op opens an OpScope named \"square\" (what the profiler and the trace see)", [] {
       const std::vector<std::string> seen = ops_during([] { (void)ex2_1::square(tensor({2.0}, kFloat64)); });
       const bool found = std::find(seen.begin(), seen.end(), "square") != seen.end();
       expect(found, "no op named \"square\" began; the ops seen were: " + joined(seen),
              seen.empty() ? "the instruments only see an op that announces itself, by name, before it does "
                             "anything (autograd/op_scope.h)"
                           : "the name an op announces is what the profiler and the trace show: the function's "
                             "own name, \"square\"");
     }},
  }};
}
