// Checks exercise 2.2: sum_dim's values, its node, its gradient and
// gradcheck for every dim, with and without keepdim. A refusal of the
// gradient's shape and a wrong gradient are named by the mistake they mean
// (the summed dim not put back, put back twice, g left out, a mean's rule).
#include "exercises/checks/check.h"

namespace ex2_2 {
ember::Tensor sum_dim(const ember::Tensor& x, int64_t d, bool keepdim);
}

namespace {

using namespace ember;

std::string call(int64_t d, bool keep) {
  return "sum_dim(x, " + std::to_string(d) + ", keepdim=" + (keep ? "true" : "false") + ")";
}

// The hint for a wrong sum of x over d, from the way it is wrong.
std::string value_mistake(const Tensor& got, const Tensor& x, int64_t d, bool keep) {
  if (check::matches(got, sum(x, {d}, !keep)))
    return keep ? "with keepdim the summed dim stays, with size 1" : "without keepdim the summed dim goes away";
  for (int64_t other = 0; other < x.dim(); ++other)
    if (check::matches(got, sum(x, {other}, keep)) || check::matches(got, sum(x, {other}, !keep)))
      return "that is the sum over dim " + std::to_string(other) + ": a negative d counts from the end (-1 is the "
             "last dim)";
  return "each output element is the sum of x along dim d, the other dims kept in their order";
}

// The hint for a wrong x.grad of sum(sum_dim(x, 1) * w), from the way it is wrong.
std::string gradient_mistake(const Tensor& got) {
  if (check::matches(got, ones({2, 3}, kFloat64)))
    return "every element received 1, its sum's own derivative: the chain rule multiplies it by g, the gradient "
           "that arrives for that sum";
  if (check::matches(got, tensor({10.0, 10.0, 10.0, 20.0, 20.0, 20.0}, {2, 3}, kFloat64) / 3.0))
    return "g was divided by the count, which is a mean's rule: each element goes into its sum whole";
  return "row i of x went into sum i, so every element of row i receives w[i]";
}

// What a refusal while sending g back to x means.
const std::vector<std::pair<std::string, std::string>> kRefusals = {
    {"fewer dims", "with keepdim the summed dim is still in g, with size 1: putting it back once more gives g "
                   "one dim too many"},
    {"expand", "g's dims do not line up with x's: the summed dim is missing from g, and repeating g along it "
               "needs it back first (size 1, at the place that was summed)"},
    {"sum_to", "the rule returned a gradient of the output's shape: each element of x receives a number, so the "
               "gradient has x's shape"},
    {"reshape", "the rule returned a gradient of the output's shape: each element of x receives a number, so the "
                "gradient has x's shape"},
};

}  // namespace

check::Exercise check::exercise() {
  return {"2.2", "Sum over a dim, differentiable", "docs/book/02_the_autograd_engine.md", {
    {"the values, for every dim, negative ones too", [] {
       Tensor x = arange(24, kFloat64).reshape({2, 3, 4});
       for (int64_t d : {0, 1, 2, -1, -3})
         for (bool keep : {false, true}) {
           const Tensor got = ex2_2::sum_dim(x, d, keep), want = sum(x, {d}, keep);
           if (check::matches(got, want)) continue;
           if (!got.defined() || got.shape() != want.shape())
             fail(call(d, keep) + " has shape " + (got.defined() ? show(got.shape()) : std::string("(undefined)")) +
                      ", but should have shape " + show(want.shape()),
                  value_mistake(got, x, d, keep));
           fail(call(d, keep) + " is " + show(got) + ", but should be " + show(want), value_mistake(got, x, d, keep));
         }
     }},
    {"it records a SumDimBackward", [] {
       Tensor x = ones({2, 3}, kFloat64).requires_grad_();
       Tensor y = ex2_2::sum_dim(x, 1, false);
       const std::string name = y.grad_fn() ? y.grad_fn()->name() : "";
       expect(name == "SumDimBackward",
              "sum_dim(x, 1) of an x that requires grad has " +
                  (name.empty() ? std::string("no grad_fn") : "the grad_fn " + name) + ", not a SumDimBackward",
              name.empty() ? "x requires grad, so the output needs a grad_fn: the node that turns its gradient "
                             "into x's"
                           : "the forward must record nothing (ember's sum op records its own node), so that "
                             "your SumDimBackward is the output's grad_fn");
     }},
    {"each summed element receives the gradient of its sum", [] {
       Tensor x = zeros({2, 3}, kFloat64).requires_grad_();
       Tensor w = tensor({10.0, 20.0}, kFloat64);  // d loss / d row-sum
       sum(ex2_2::sum_dim(x, 1, false) * w).backward();
       const Tensor want = tensor({10.0, 10.0, 10.0, 20.0, 20.0, 20.0}, {2, 3}, kFloat64);
       expect(x.grad().defined(), "x.grad is undefined after backward", "the rule returns the gradient of x");
       if (!check::matches(x.grad(), want, 1e-12))
         fail("x.grad of sum(sum_dim(x, 1) * (10, 20)) is " + show(x.grad()) + ", but should be " + show(want),
              gradient_mistake(x.grad()));
     }, kRefusals},
    {"gradcheck passes for every dim, with and without keepdim", [] {
       Generator gen(5);
       Tensor x = randn({2, 3, 4}, gen, kFloat64).requires_grad_();
       for (int64_t d : {0, 1, 2, -1})
         for (bool keep : {false, true}) {
           GradcheckResult r =
               gradcheck([&](const std::vector<Tensor>& in) { return ex2_2::sum_dim(in[0], d, keep); }, {x});
           expect(r.ok, "gradcheck of " + call(d, keep) + " failed:\n" + r.report,
                  "the element of x at index (i, j, k) receives g at the same index without the summed dim");
         }
     }, kRefusals},
  }};
}
