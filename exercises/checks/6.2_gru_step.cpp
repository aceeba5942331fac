// Checks exercise 6.2: the learner's step equals nn::GRUCell's, and so do
// the gradients it sends to x, h and the weights.
#include "exercises/checks/check.h"

namespace ex6_2 {
ember::Tensor gru_step(ember::nn::GRUCell& cell, const ember::Tensor& x, const ember::Tensor& h);
}

namespace {
using namespace ember;
}  // namespace

check::Exercise check::exercise() {
  return {"6.2", "A GRU step in the lesson's convention", "docs/book/06_sequence_models.md", {
    {"one step equals nn::GRUCell's, batch of 3, I = 4, H = 5", [] {
       Generator gen(11);
       nn::GRUCell cell(4, 5, {.dtype = kFloat64, .generator = &gen});
       Tensor x = randn({3, 4}, gen, kFloat64), h = randn({3, 5}, gen, kFloat64);
       expect_close(ex6_2::gru_step(cell, x, h), cell.forward(x, h), "gru_step(cell, x, h)", 1e-12,
                    "z weights the new state: (1 - z) * h + z * h~; r multiplies h inside U_h");
     }},
    {"with h = 0 and z forced to 1 the new state is tanh(W_h x + b_h)", [] {
       Generator gen(12);
       nn::GRUCell cell(2, 3, {.dtype = kFloat64, .generator = &gen});
       {
         NoGradGuard no_grad;
         cell.w_z->bias.fill_(50.0);  // sigmoid(50) = 1 to float64 precision
       }
       Tensor x = randn({1, 2}, gen, kFloat64), h = zeros({1, 3}, kFloat64);
       expect_close(ex6_2::gru_step(cell, x, h), tanh(cell.w_h->forward(x)), "gru_step with z = 1", 1e-12);
     }},
    {"the gradients to x, h and the weights equal the cell's", [] {
       Generator gen(13);
       nn::GRUCell cell(4, 5, {.dtype = kFloat64, .generator = &gen});
       Tensor x = randn({3, 4}, gen, kFloat64).requires_grad_(), h = randn({3, 5}, gen, kFloat64).requires_grad_();
       Tensor R = randn({3, 5}, gen, kFloat64);
       sum(ex6_2::gru_step(cell, x, h) * R).backward();
       const Tensor gx = x.grad(), gh = h.grad(), gw = cell.u_h->weight.grad();
       x.set_grad(Tensor());
       h.set_grad(Tensor());
       cell.zero_grad();
       sum(cell.forward(x, h) * R).backward();
       expect_close(gx, x.grad(), "x.grad", 1e-12);
       expect_close(gh, h.grad(), "h.grad", 1e-12);
       expect_close(gw, cell.u_h->weight.grad(), "U_h's gradient", 1e-12);
     }},
  }};
}
