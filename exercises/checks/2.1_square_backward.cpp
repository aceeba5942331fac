// Checks exercise 2.1 (SquareBackward): the value, the node, the gradient,
// gradcheck, and the OpScope that lets the instruments see the op.
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

}  // namespace

check::Exercise check::exercise() {
  return {"2.1", "SquareBackward", "docs/book/02_the_autograd_engine.md", {
    {"square(x) computes x * x", [] {
       Tensor x = tensor({1.0, -2.0, 3.0}, kFloat64);
       Tensor y = ex2_1::square(x);
       expect_close(y, tensor({1.0, 4.0, 9.0}, kFloat64), "square((1, -2, 3))");
       expect(!y.grad_fn(), "square(x) recorded a node although x does not require grad",
              "record only when needs_grad({x}) says so");
     }},
    {"square records a SquareBackward when x requires grad", [] {
       Tensor x = tensor({1.0, -2.0, 3.0}, kFloat64).requires_grad_();
       Tensor y = ex2_1::square(x);
       expect(y.grad_fn() != nullptr, "square(x) returned a tensor without grad_fn: no node was recorded",
              "if (needs_grad({x})) record(out, std::make_shared<SquareBackward>(x), {x});");
       expect(std::string(y.grad_fn()->name()) == "SquareBackward",
              std::string("the output's grad_fn is ") + y.grad_fn()->name() + ", not SquareBackward",
              "compute the forward with a kernel:: call (it records nothing) and record your own node");
     }},
    {"the gradient of sum(square(x)) is 2x", [] {
       Tensor x = tensor({1.0, -2.0, 3.0}, kFloat64).requires_grad_();
       sum(ex2_1::square(x)).backward();
       expect_close(x.grad(), tensor({2.0, -4.0, 6.0}, kFloat64), "x.grad after backward", 1e-12,
                    "d(x^2)/dx = 2x, times g, the gradient that arrives");
     }},
    {"gradcheck passes, also on a transposed (non-contiguous) input", [] {
       Generator gen(3);
       for (bool transposed : {false, true}) {
         Tensor x = transposed ? randn({4, 3}, gen, kFloat64).t() : randn({3, 4}, gen, kFloat64);
         x.requires_grad_();
         GradcheckResult r = gradcheck([](const std::vector<Tensor>& in) { return ex2_1::square(in[0]); }, {x});
         expect(r.ok, "gradcheck failed" + std::string(transposed ? " on a transposed input" : "") + ":\n" + r.report);
       }
     }},
    {"the op opens an OpScope named \"square\" (what the profiler and the trace see)", [] {
       OpNames seen;
       set_autograd_observer(&seen);
       Tensor y;
       try {
         y = ex2_1::square(tensor({2.0}, kFloat64));
       } catch (...) {
         set_autograd_observer(nullptr);
         throw;
       }
       set_autograd_observer(nullptr);
       const bool found = std::find(seen.names.begin(), seen.names.end(), "square") != seen.names.end();
       std::string ops;
       for (const std::string& n : seen.names) ops += (ops.empty() ? "" : ", ") + n;
       expect(found, "no op named \"square\" began; the ops seen were: " + (ops.empty() ? "none" : ops),
              "make OpScope scope(\"square\", x); the first line of square()");
     }},
  }};
}
