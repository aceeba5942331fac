// Checks exercise 7.2: the learner's optimizer takes the same steps as
// optim::SGD with momentum, keeps its velocity as state, and skips
// parameters without a gradient.
#include "exercises/checks/check.h"

namespace ex7_2 {
std::unique_ptr<ember::optim::Optimizer> make_momentum_sgd(std::vector<ember::Tensor> params, double lr,
                                                           double momentum);
}

namespace {

using namespace ember;

// Five steps on a least-squares problem; returns the weights after each.
std::vector<Tensor> run_five_steps(optim::Optimizer& opt, Tensor& w, const Tensor& x, const Tensor& y) {
  std::vector<Tensor> after;
  for (int s = 0; s < 5; ++s) {
    opt.zero_grad();
    mean(pow(matmul(x, w) - y, 2.0)).backward();
    opt.step();
    after.push_back(w.detach().clone());
  }
  return after;
}

}  // namespace

check::Exercise check::exercise() {
  return {"7.2", "SGD with momentum", "docs/book/07_training_a_gpt.md", {
    {"one step without momentum is plain gradient descent", [] {
       Tensor w = tensor({1.0, -2.0}, kFloat64).requires_grad_();
       auto opt = ex7_2::make_momentum_sgd({w}, 0.1, 0.0);
       sum(w * w).backward();  // grad = 2 w
       opt->step();
       expect_close(w, tensor({0.8, -1.6}, kFloat64), "w after one step", 1e-12, "p = p - lr * b, and b = grad here");
     }},
    {"five steps with momentum 0.9 equal optim::SGD's", [] {
       Generator gen(41);
       Tensor x = randn({8, 3}, gen, kFloat64), y = randn({8, 1}, gen, kFloat64);
       Tensor w1 = randn({3, 1}, gen, kFloat64);
       Tensor w2 = w1.clone().requires_grad_();
       w1.requires_grad_();
       auto mine = ex7_2::make_momentum_sgd({w1}, 0.05, 0.9);
       optim::SGD ref({w2}, 0.05, 0.9);
       const std::vector<Tensor> a = run_five_steps(*mine, w1, x, y), b = run_five_steps(ref, w2, x, y);
       for (size_t s = 0; s < a.size(); ++s)
         expect_close(a[s], b[s], "w after step " + std::to_string(s + 1), 1e-12,
                      "b = momentum * b + grad, then p = p - lr * b; b starts at zero");
       expect(mine->steps() == 5, "steps() is " + std::to_string(mine->steps()) + " after five steps", "++steps_;");
     }},
    {"the velocity is the optimizer's state", [] {
       Tensor w = tensor({1.0, -2.0}, kFloat64).requires_grad_();
       auto opt = ex7_2::make_momentum_sgd({w}, 0.1, 0.5);
       sum(w * w).backward();
       opt->step();
       const auto state = opt->state();
       bool found = false;
       for (const auto& [name, t] : state)
         if (name.find("velocity") != std::string::npos) {
           found = true;
           expect_close(t, tensor({2.0, -4.0}, kFloat64), "the velocity after one step", 1e-12);
         }
       expect(found, "the optimizer's state has no velocity", "keep it in slot(g, i, \"velocity\")");
     }},
    {"a parameter without a gradient is left alone", [] {
       Tensor used = tensor({1.0}, kFloat64).requires_grad_(), unused = tensor({5.0}, kFloat64).requires_grad_();
       auto opt = ex7_2::make_momentum_sgd({used, unused}, 0.1, 0.9);
       sum(used * used).backward();
       opt->step();
       expect_close(unused, tensor({5.0}, kFloat64), "the unused parameter", 0.0,
                    "for_each_param_with_grad skips it for you");
     }},
  }};
}
