// Checks exercise 3.4 (softmax's backward by hand): the gradient against
// ember's own softmax (and which mistake a wrong one is), a row that gets the
// same gradient everywhere, gradcheck on batches and transposed inputs.
#include "exercises/checks/check.h"

namespace ex3_4 {
ember::Tensor my_softmax(const ember::Tensor& x);
}

namespace {

using namespace ember;

// The gradient of sum(f(x) * w) with respect to x.
template <class F>
Tensor grad_of(F f, const Tensor& x0, const Tensor& w) {
  Tensor x = x0.clone().requires_grad_();
  sum(f(x) * w).backward();
  return x.grad();
}

std::string which_mistake(const Tensor& got, const Tensor& x, const Tensor& g) {
  Tensor y = softmax(x, -1);
  if (check::matches(got, g * y * (1.0 - y)))
    return "g y (1 - y) is only the diagonal, dy_i/dx_i: y_i also depends on every other x_j of its row, "
           "dy_i/dx_j = -y_i y_j, and those terms add up too";
  if (check::matches(got, g * y)) return "g y leaves out what every y_i's denominator gives: dy_i/dx_j = y_i (delta_ij - y_j)";
  if (check::matches(got, y * (g - sum(g * y)))) return "the sum of g y runs over one row (the softmax's dim), not the whole tensor";
  if (check::matches(got, y * (g - sum(g * y, {0}, true)))) return "the sum of g y runs along the last dim, the one softmax normalises";
  return "dy_i/dx_j = y_i (delta_ij - y_j); sum g_i times it over i";
}

const std::vector<std::pair<std::string, std::string>> kRefusals = {
    {"sum_to", "the gradient has x's shape: a row sum kept as (..., 1) broadcasts back over its row"},
    {"returned", "the rule returns one gradient, dL/dx"},
};

}  // namespace

check::Exercise check::exercise() {
  return {"3.4", "softmax's backward, by hand", "docs/book/03_checking_gradients.md", {
    {"dL/dx is ember's softmax's, for rows of 5", [] {
       Generator gen(1);
       Tensor x = randn({3, 5}, gen, kFloat64), w = randn({3, 5}, gen, kFloat64);
       Tensor want = grad_of([](const Tensor& t) { return softmax(t, -1); }, x, w);
       Tensor got = grad_of(ex3_4::my_softmax, x, w);
       expect(got.defined() && got.shape() == x.shape(),
              "dL/dx has shape " + (got.defined() ? show(got.shape()) : std::string("(undefined)")) + ", x has (3, 5)",
              "the gradient has x's shape");
       if (check::max_diff(got, want, "dL/dx") > 1e-9)
         fail("dL/dx is " + show(got) + ", but should be " + show(want), which_mistake(got, x, w));
     }, kRefusals},
    {"a gradient that is the same on a whole row gives zero (softmax ignores a shift of its row)", [] {
       Generator gen(2);
       Tensor x = randn({2, 4}, gen, kFloat64);
       Tensor w = tensor({3.0, 3.0, 3.0, 3.0, -1.0, -1.0, -1.0, -1.0}, {2, 4}, kFloat64);
       Tensor got = grad_of(ex3_4::my_softmax, x, w);
       expect_close(got, zeros({2, 4}, kFloat64), "dL/dx for g constant on each row", 1e-12,
                    "the outputs of a row sum to 1, so a change of x that moves them all alike changes nothing: "
                    "y (g - sum(g y)) is 0 when g is constant on the row");
     }, kRefusals},
    {"gradcheck passes on a batch (2, 3, 4) and on a transposed (non-contiguous) input", [] {
       Generator gen(3);
       Tensor batch = randn({2, 3, 4}, gen, kFloat64).requires_grad_();
       Tensor transposed = randn({4, 3}, gen, kFloat64).t().requires_grad_();
       for (const Tensor& x : {batch, transposed}) {
         GradcheckResult r = gradcheck([](const std::vector<Tensor>& in) { return ex3_4::my_softmax(in[0]); }, {x});
         expect(r.ok, "gradcheck failed on an input of shape " + show(x.shape()) + ":\n" + r.report,
                "sum along the last dim ({-1}), whatever the number of dims");
       }
     }, kRefusals},
  }};
}
