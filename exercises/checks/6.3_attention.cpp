// Checks exercise 6.3: the lesson's two-score example, equality with
// nn::scaled_dot_product_attention, and no gradient from the future.
#include "exercises/checks/check.h"
#include "nn/attention.h"

namespace ex6_3 {
ember::Tensor attention(const ember::Tensor& q, const ember::Tensor& k, const ember::Tensor& v, bool causal);
}

namespace {
using namespace ember;
}  // namespace

check::Exercise check::exercise() {
  return {"6.3", "Scaled dot-product attention, with a causal mask", "docs/book/06_sequence_models.md", {
    {"the lesson's example: scores (2, 1), values (10, 4) -> 8.386", [] {
       Tensor q = tensor({1.0}, {1, 1}, kFloat64), k = tensor({2.0, 1.0}, {2, 1}, kFloat64),
              v = tensor({10.0, 4.0}, {2, 1}, kFloat64);
       Tensor out = ex6_3::attention(q, k, v, false);
       expect_close(out, tensor({8.386}, {1, 1}, kFloat64), "the context", 5e-4,
                    "d = 1: the scores are q k^T = (2, 1), their softmax (0.731, 0.269)");
     }},
    {"equal to nn::scaled_dot_product_attention, (2, 3) batch of 5 queries, 6 keys", [] {
       Generator gen(21);
       Tensor q = randn({2, 3, 5, 4}, gen, kFloat64), k = randn({2, 3, 6, 4}, gen, kFloat64),
              v = randn({2, 3, 6, 7}, gen, kFloat64);
       expect_close(ex6_3::attention(q, k, v, false), nn::scaled_dot_product_attention(q, k, v).output, "attention",
                    1e-12, "divide the scores by sqrt(d), d = q.size(-1)");
     }},
    {"causal: equal to ember's, with the upper triangle's weights 0", [] {
       Generator gen(22);
       Tensor x = randn({2, 5, 4}, gen, kFloat64);
       expect_close(ex6_3::attention(x, x, x, true), nn::scaled_dot_product_attention(x, x, x, Tensor(), true).output,
                    "causal attention", 1e-12, "mask key j for query i when j > i: triu(ones, 1)");
     }},
    {"causal: output t gets no gradient from inputs after t", [] {
       Generator gen(23);
       const int64_t T = 5;
       Tensor x = randn({1, T, 3}, gen, kFloat64).requires_grad_();
       Tensor out = ex6_3::attention(x, x, x, true);
       for (int64_t t = 0; t + 1 < T; ++t) {
         x.set_grad(Tensor());
         sum(select(out, 1, t)).backward(Tensor(), /*retain_graph=*/true);
         const double future = sum(abs(narrow(x.grad(), 1, t + 1, T - t - 1))).item<double>();
         expect(future == 0.0, "output " + std::to_string(t) + " receives gradient " + num(future) +
                                   " from inputs after it: the mask leaks the future");
       }
     }},
  }};
}
