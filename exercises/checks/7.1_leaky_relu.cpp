// Checks exercise 7.1: values, gradient, gradcheck, its place in a
// Sequential, its repr and its ModuleScope.
#include "exercises/checks/check.h"

namespace ex7_1 {
std::shared_ptr<ember::nn::UnaryModule> make_leaky_relu(double negative_slope);
}

namespace {

using namespace ember;

// Which modules begin while it is installed (what the profiler's labels come from).
struct Modules : AutogradObserver {
  std::vector<std::string> types;
  void module_begin(const std::string&, const std::string& type) override { types.push_back(type); }
};

}  // namespace

check::Exercise check::exercise() {
  return {"7.1", "A LeakyReLU module", "docs/book/07_training_a_gpt.md", {
    {"the values: x where x > 0, slope x elsewhere", [] {
       auto m = ex7_1::make_leaky_relu(0.1);
       expect_close(m->forward(tensor({-2.0, -0.5, 0.0, 1.0, 3.0}, kFloat64)),
                    tensor({-0.2, -0.05, 0.0, 1.0, 3.0}, kFloat64), "LeakyReLU(0.1) of (-2, -0.5, 0, 1, 3)", 1e-12);
     }},
    {"the gradient: 1 where x > 0, the slope elsewhere", [] {
       auto m = ex7_1::make_leaky_relu(0.1);
       Tensor x = tensor({-2.0, -0.5, 0.0, 1.0, 3.0}, kFloat64).requires_grad_();
       sum(m->forward(x)).backward();
       expect(x.grad().defined(), "x.grad is undefined after backward: no graph was recorded",
              "compute with ember ops on x: they record");
       expect_close(x.grad(), tensor({0.1, 0.1, 0.1, 1.0, 1.0}, kFloat64), "x.grad", 1e-12,
                    "at 0 the gradient is the slope, as for PyTorch's leaky_relu");
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
       const std::string repr = m->to_string();
       expect(repr.find("LeakyReLU(negative_slope=0.1)") != std::string::npos,
              "to_string() is \"" + repr + "\", not LeakyReLU(negative_slope=0.1)", "extra_repr() returns the inside");
     }},
    {"forward opens a ModuleScope (the instruments see the module)", [] {
       auto m = ex7_1::make_leaky_relu(0.1);
       Modules seen;
       set_autograd_observer(&seen);
       try {
         (void)m->forward(ones({2}));
       } catch (...) {
         set_autograd_observer(nullptr);
         throw;
       }
       set_autograd_observer(nullptr);
       expect(std::find(seen.types.begin(), seen.types.end(), "LeakyReLU") != seen.types.end(),
              "no module named LeakyReLU began during forward", "nn::ModuleScope scope(*this); first in forward()");
     }},
  }};
}
