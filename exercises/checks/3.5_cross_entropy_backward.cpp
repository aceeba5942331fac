// Checks exercise 3.5 (log-softmax with NLL, by hand): the gradient
// against ember's cross_entropy (and which mistake a wrong one is), a loss
// scaled after the op (the arriving g), gradcheck.
#include "exercises/checks/check.h"

namespace ex3_5 {
ember::Tensor my_cross_entropy(const ember::Tensor& z, const ember::Tensor& targets);
}

namespace {

using namespace ember;

template <class F>
Tensor grad_of(F f, const Tensor& z0, const Tensor& y, double scale) {
  Tensor z = z0.clone().requires_grad_();
  (f(z, y) * scale).backward();
  return z.grad();
}

std::string which_mistake(const Tensor& got, const Tensor& z, const Tensor& y, double scale) {
  const double n = static_cast<double>(z.shape()[0]);
  Tensor p = softmax(z, -1), hot = one_hot(y, z.shape()[1]).to(kFloat64);
  if (check::matches(got, (p - hot) * scale)) return "these are N times too large: the loss is the mean over the N rows, so divide by N";
  if (check::matches(got, (hot - p) * (scale / n))) return "the sign is the other way: the loss falls when the right class's score rises";
  if (check::matches(got, (p - hot) / n)) return "multiply by g, the gradient that arrives (here the loss was scaled by 3 after the op)";
  if (check::matches(got, p * (scale / n))) return "-z_y contributes too: subtract the one-hot row, p - onehot(y)";
  return "d(-z_y + log sum_j exp z_j)/dz_i = p_i - [i = y], then the mean's 1/N and g";
}

const std::vector<std::pair<std::string, std::string>> kRefusals = {
    {"sum_to", "the gradient has the scores' shape (N, V): p - onehot is, and g (0-d) and 1/N only scale it"},
    {"returned", "the rule returns one gradient, dL/dz (the targets get none)"},
};

}  // namespace

check::Exercise check::exercise() {
  return {"3.5", "log-softmax with NLL, by hand", "docs/book/03_checking_gradients.md", {
    {"the loss's gradient is ember's cross_entropy's", [] {
       Generator gen(1);
       Tensor z = randn({4, 5}, gen, kFloat64);
       Tensor y = tensor(std::vector<int64_t>{0, 3, 3, 1});
       Tensor want = grad_of([](const Tensor& s, const Tensor& t) { return cross_entropy(s, t); }, z, y, 1.0);
       Tensor got = grad_of(ex3_5::my_cross_entropy, z, y, 1.0);
       expect(got.defined() && got.shape() == z.shape(), "dL/dz has shape " +
              (got.defined() ? show(got.shape()) : std::string("(undefined)")) + ", the scores have (4, 5)",
              "the gradient has the scores' shape");
       if (check::max_diff(got, want, "dL/dz") > 1e-9)
         fail("dL/dz is " + show(got) + ", but should be " + show(want), which_mistake(got, z, y, 1.0));
     }, kRefusals},
    {"and 3 times it when the loss is scaled by 3 after the op (the arriving g)", [] {
       Generator gen(2);
       Tensor z = randn({3, 4}, gen, kFloat64);
       Tensor y = tensor(std::vector<int64_t>{2, 0, 2});
       Tensor want = grad_of([](const Tensor& s, const Tensor& t) { return cross_entropy(s, t); }, z, y, 3.0);
       Tensor got = grad_of(ex3_5::my_cross_entropy, z, y, 3.0);
       if (check::max_diff(got, want, "dL/dz") > 1e-9)
         fail("dL/dz of 3 times the loss is " + show(got) + ", but should be " + show(want),
              which_mistake(got, z, y, 3.0));
       note("each row sums to 0: the probabilities sum to 1, as the one-hot row does");
     }, kRefusals},
    {"gradcheck passes, also on transposed (non-contiguous) scores", [] {
       Generator gen(3);
       Tensor y = tensor(std::vector<int64_t>{1, 4, 0});
       for (bool transposed : {false, true}) {
         Tensor z = transposed ? randn({5, 3}, gen, kFloat64).t() : randn({3, 5}, gen, kFloat64);
         z.requires_grad_();
         GradcheckResult r = gradcheck([&](const std::vector<Tensor>& in) { return ex3_5::my_cross_entropy(in[0], y); },
                                       {z});
         expect(r.ok, "gradcheck failed" + std::string(transposed ? " on transposed scores" : "") + ":\n" + r.report);
       }
     }, kRefusals},
  }};
}
