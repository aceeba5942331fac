// Checks exercise 2.2: sum_dim's values, its node, its gradient and
// gradcheck for every dim, with and without keepdim.
#include "exercises/checks/check.h"

namespace ex2_2 {
ember::Tensor sum_dim(const ember::Tensor& x, int64_t d, bool keepdim);
}

namespace {
using namespace ember;
}  // namespace

check::Exercise check::exercise() {
  return {"2.2", "Sum over a dim, differentiable", "docs/book/02_the_autograd_engine.md", {
    {"the values, for every dim, negative ones too", [] {
       Tensor x = arange(24, kFloat64).reshape({2, 3, 4});
       for (int64_t d : {0, 1, 2, -1, -3})
         for (bool keep : {false, true})
           expect_close(ex2_2::sum_dim(x, d, keep), sum(x, {d}, keep),
                        "sum_dim(x, " + std::to_string(d) + ", keepdim=" + (keep ? "true" : "false") + ")");
     }},
    {"it records a SumDimBackward", [] {
       Tensor x = ones({2, 3}, kFloat64).requires_grad_();
       Tensor y = ex2_2::sum_dim(x, 1, false);
       expect(y.grad_fn() && std::string(y.grad_fn()->name()) == "SumDimBackward",
              "sum_dim(x, 1) of an x that requires grad has no SumDimBackward as its grad_fn",
              "if (needs_grad({x})) record(out, std::make_shared<SumDimBackward>(...), {x});");
     }},
    {"each summed element receives the gradient of its sum", [] {
       Tensor x = zeros({2, 3}, kFloat64).requires_grad_();
       Tensor w = tensor({10.0, 20.0}, kFloat64);  // d loss / d row-sum
       sum(ex2_2::sum_dim(x, 1, false) * w).backward();
       expect_close(x.grad(), tensor({10.0, 10.0, 10.0, 20.0, 20.0, 20.0}, {2, 3}, kFloat64),
                    "x.grad of sum(sum_dim(x, 1) * (10, 20))", 1e-12,
                    "row i of x gets w[i] in every column: unsqueeze the summed dim, then expand");
     }},
    {"gradcheck passes for every dim, with and without keepdim", [] {
       Generator gen(5);
       Tensor x = randn({2, 3, 4}, gen, kFloat64).requires_grad_();
       for (int64_t d : {0, 1, 2, -1})
         for (bool keep : {false, true}) {
           GradcheckResult r =
               gradcheck([&](const std::vector<Tensor>& in) { return ex2_2::sum_dim(in[0], d, keep); }, {x});
           expect(r.ok, "gradcheck of sum_dim(x, " + std::to_string(d) + ", keepdim=" + (keep ? "true" : "false") +
                            ") failed:\n" + r.report);
         }
     }},
  }};
}
