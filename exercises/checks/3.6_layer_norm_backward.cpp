// Checks exercise 3.6 (layer norm's backward by hand): the gradient against
// ember's layer_norm (and which of the three paths a wrong one leaves out),
// gradcheck on a batch and on a transposed input.
#include "exercises/checks/check.h"

namespace ex3_6 {
ember::Tensor my_layer_norm(const ember::Tensor& x, double eps);
}

namespace {

using namespace ember;

constexpr double kEps = 1e-5;

// ember's own layer norm without weight and bias: weight 1, bias 0.
Tensor reference(const Tensor& x) {
  const int64_t d = x.shape().back();
  return layer_norm(x, ones({d}, x.dtype()), zeros({d}, x.dtype()), kEps);
}

template <class F>
Tensor grad_of(F f, const Tensor& x0, const Tensor& w) {
  Tensor x = x0.clone().requires_grad_();
  sum(f(x) * w).backward();
  return x.grad();
}

std::string which_mistake(const Tensor& got, const Tensor& x, const Tensor& g) {
  Tensor centred = x - mean(x, {-1}, true);
  Tensor r = rsqrt(mean(centred * centred, {-1}, true) + kEps), xhat = centred * r;
  if (check::matches(got, g * r)) return "g rstd is only the direct path: mu and var depend on x_j too (dmu/dx_j = 1/D)";
  if (check::matches(got, r * (g - mean(g, {-1}, true))))
    return "the path through mu is there; the one through var is missing: d(rstd)/dx_j = -rstd^3 (x_j - mu) / D, "
           "which gives the term - xhat mean(g xhat)";
  if (check::matches(got, r * (g - xhat * mean(g * xhat, {-1}, true))))
    return "the path through var is there; the one through mu is missing: it gives the term - mean(g)";
  if (check::matches(got, r * (g - mean(g) - xhat * mean(g * xhat))))
    return "the means run over each row (mean(t, {-1}, true)), not over the whole tensor";
  return "x_j reaches y_i directly, through mu and through rstd: add the three, each a mean over the row";
}

const std::vector<std::pair<std::string, std::string>> kRefusals = {
    {"sum_to", "the gradient has x's shape: row means kept as (..., 1) broadcast back over their row"},
    {"returned", "the rule returns one gradient, dL/dx"},
};

}  // namespace

check::Exercise check::exercise() {
  return {"3.6", "layer norm's backward, by hand", "docs/book/03_checking_gradients.md", {
    {"dL/dx is ember's layer_norm's, for rows of 6", [] {
       Generator gen(1);
       Tensor x = randn({3, 6}, gen, kFloat64) * 2.0 + 1.0, w = randn({3, 6}, gen, kFloat64);
       Tensor want = grad_of(reference, x, w);
       Tensor got = grad_of([](const Tensor& t) { return ex3_6::my_layer_norm(t, kEps); }, x, w);
       expect(got.defined() && got.shape() == x.shape(),
              "dL/dx has shape " + (got.defined() ? show(got.shape()) : std::string("(undefined)")) + ", x has (3, 6)",
              "the gradient has x's shape");
       if (check::max_diff(got, want, "dL/dx") > 1e-9)
         fail("dL/dx is " + show(got) + ", but should be " + show(want), which_mistake(got, x, w));
       note("each row of dL/dx sums to 0 and is orthogonal to xhat: shifting or scaling a row changes nothing");
     }, kRefusals},
    {"gradcheck passes on a batch (2, 3, 5) and on a transposed (non-contiguous) input", [] {
       Generator gen(2);
       Tensor batch = randn({2, 3, 5}, gen, kFloat64).requires_grad_();
       Tensor transposed = randn({5, 3}, gen, kFloat64).t().requires_grad_();
       for (const Tensor& x : {batch, transposed}) {
         GradcheckResult r =
             gradcheck([](const std::vector<Tensor>& in) { return ex3_6::my_layer_norm(in[0], kEps); }, {x});
         expect(r.ok, "gradcheck failed on an input of shape " + show(x.shape()) + ":\n" + r.report,
                "the means run along the last dim ({-1}), whatever the number of dims");
       }
     }, kRefusals},
  }};
}
