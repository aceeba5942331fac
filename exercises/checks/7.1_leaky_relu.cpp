// Checks exercise 7.1: values, gradient, gradcheck, its place in a
// Sequential, its repr and its ModuleScope; a wrong value or gradient is
// compared with the usual mistakes (branches swapped, x = 0 on the wrong
// side, a fixed slope) to name the one it is.
#include "exercises/checks/check.h"

namespace ex7_1 {
std::shared_ptr<ember::nn::UnaryModule> make_leaky_relu(double negative_slope);
}

namespace {

using namespace ember;

Tensor inputs() { return tensor({-2.0, -0.5, 0.0, 1.0, 3.0}, kFloat64); }

std::string value_mistake(const Tensor& got, const Tensor& x, double slope) {
  const Tensor pos = gt(x, 0.0);
  if (check::matches(got, where(pos, x * slope, x), 1e-12))
    return "the branches are swapped: x > 0 passes unchanged, the rest is scaled by the slope";
  if (check::matches(got, where(pos, x, zeros_like(x)), 1e-12))
    return "the negative values became 0: that is ReLU; a leaky one lets slope * x through";
  if (check::matches(got, where(pos, x, x * 0.01), 1e-12))
    return "the slope is 0.01, the constructor's default, not the slope this module was made with (0.1)";
  if (check::matches(got, x * slope, 1e-12)) return "every value was scaled: only x <= 0 takes the slope";
  return "x > 0 keeps x, every other value becomes slope * x";
}

std::string gradient_mistake(const Tensor& got, const Tensor& x, double slope) {
  if (check::matches(got, where(ge(x, 0.0), ones_like(x), full_like(x, slope)), 1e-12))
    return "at x = 0 the gradient is 1, so 0 went to the x branch: LeakyReLU scales x <= 0 (0 included, as "
           "PyTorch's leaky_relu), so only x > 0 keeps x";
  return "the gradient is 1 where x > 0 and the slope elsewhere (0 included)";
}

// The sequence of what the observer saw: "[LeakyReLU", op names, "]".
struct Events : AutogradObserver {
  std::vector<std::string> seen;
  void module_begin(const std::string&, const std::string& type) override { seen.push_back("[" + type); }
  void module_end() override { seen.push_back("]"); }
  void op_begin(const char* op, const std::vector<const Tensor*>&) override { seen.push_back(op); }
};

// Whether an op ran while the LeakyReLU module was open.
bool op_inside(const std::vector<std::string>& seen) {
  int depth = 0;
  for (const std::string& e : seen) {
    if (e == "[LeakyReLU") ++depth;
    else if (e == "]") depth = std::max(0, depth - 1);
    else if (e[0] != '[' && depth > 0) return true;
  }
  return false;
}

}  // namespace

check::Exercise check::exercise() {
  return {"7.1", "A LeakyReLU module", "docs/book/07_training_a_gpt.md", {
    {"the values: x where x > 0, slope x elsewhere", [] {
       auto m = ex7_1::make_leaky_relu(0.1);
       const Tensor x = inputs(), want = tensor({-0.2, -0.05, 0.0, 1.0, 3.0}, kFloat64);
       const Tensor got = m->forward(x);
       if (check::max_diff(got, want, "LeakyReLU(0.1) of (-2, -0.5, 0, 1, 3)") > 1e-12)
         fail("LeakyReLU(0.1) of (-2, -0.5, 0, 1, 3) is " + show(got) + ", but should be " + show(want),
              value_mistake(got, x, 0.1));
     }},
    {"the gradient: 1 where x > 0, the slope elsewhere", [] {
       auto m = ex7_1::make_leaky_relu(0.1);
       Tensor x = inputs().requires_grad_();
       sum(m->forward(x)).backward();
       expect(x.grad().defined(), "x.grad is undefined after backward: no graph was recorded",
              "was forward computed where autograd does not record (under a NoGradGuard, on detached or raw "
              "numbers)? ember ops on x itself record their nodes");
       const Tensor want = tensor({0.1, 0.1, 0.1, 1.0, 1.0}, kFloat64);
       if (check::max_diff(x.grad(), want, "x.grad") > 1e-12)
         fail("x.grad is " + show(x.grad()) + ", but should be " + show(want),
              gradient_mistake(x.grad(), inputs(), 0.1));
     }},
    {"gradcheck passes inside a Linear -> LeakyReLU -> Linear Sequential", [] {
       Generator gen(31);
       nn::Sequential net({std::make_shared<nn::Linear>(3, 4, nn::LinearOptions{.dtype = kFloat64, .generator = &gen}),
                           ex7_1::make_leaky_relu(0.2),
                           std::make_shared<nn::Linear>(4, 2, nn::LinearOptions{.dtype = kFloat64, .generator = &gen})});
       Tensor x = randn({5, 3}, gen, kFloat64).requires_grad_();
       GradcheckResult r = nn::gradcheck(net, [&](const std::vector<Tensor>& in) { return net.forward(in[0]); }, {x});
       expect(r.ok, "gradcheck failed:\n" + r.report);
       note(net.to_string());
     }},
    {"to_string() shows LeakyReLU(negative_slope=0.1)", [] {
       auto m = ex7_1::make_leaky_relu(0.1);
       const std::string repr = m->to_string(), want = "LeakyReLU(negative_slope=0.1)";
       std::string hint = "to_string() writes the type name and the parentheses; extra_repr() gives what goes inside";
       if (repr.find("0.100000") != std::string::npos)
         hint = "0.100000 is the number with six fixed decimals; PyTorch writes the shortest form, 0.1, as an "
                "output stream does by default";
       else if (repr.find("LeakyReLU(LeakyReLU") != std::string::npos)
         hint = "the type name appears twice: to_string() already writes it and the parentheses around extra_repr()";
       else if (repr.find("negative_slope=") == std::string::npos)
         hint = "the inside names the argument as PyTorch does: negative_slope=";
       expect(repr == want, "to_string() is \"" + repr + "\", not " + want, hint);
     }},
    {"forward opens a ModuleScope (the instruments see the module)", [] {
       auto m = ex7_1::make_leaky_relu(0.1);
       Events events;
       set_autograd_observer(&events);
       try {
         (void)m->forward(ones({2}));
       } catch (...) {
         set_autograd_observer(nullptr);
         throw;
       }
       set_autograd_observer(nullptr);
       const auto& seen = events.seen;
       expect(std::find(seen.begin(), seen.end(), "[LeakyReLU") != seen.end(),
              "no module named LeakyReLU began during forward",
              "the instruments only know a module runs if its forward says so before its first op (chapter 8: "
              "what do ReLU and GELU do first?)");
       expect(op_inside(seen), "the LeakyReLU module began and ended before any of its ops ran",
              "the scope ends when its object dies: a temporary (an object without a name) dies at the end of "
              "its own statement, before the ops");
     }},
  }};
}
