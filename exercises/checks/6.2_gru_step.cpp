// Checks exercise 6.2: the learner's step equals nn::GRUCell's, and so do
// the gradients it sends to x, h and the weights. A wrong step is compared
// with the usual mistakes (PyTorch's z, r after U_h, no r, z and r swapped)
// to name the one it is.
#include "exercises/checks/check.h"

namespace ex6_2 {
ember::Tensor gru_step(ember::nn::GRUCell& cell, const ember::Tensor& x, const ember::Tensor& h);
}

namespace {
using namespace ember;

// The hint for a wrong step, from the way it is wrong: each candidate is the
// step with one usual mistake.
std::string hint_for(const Tensor& got, nn::GRUCell& c, const Tensor& x, const Tensor& h) {
  NoGradGuard no_grad;
  const Tensor z = sigmoid(c.w_z->forward(x) + c.u_z->forward(h)), r = sigmoid(c.w_r->forward(x) + c.u_r->forward(h));
  const Tensor candidate = tanh(c.w_h->forward(x) + c.u_h->forward(r * h));
  if (check::matches(got, z * h + (1.0 - z) * candidate, 1e-12))
    return "z weights the old state here: that is PyTorch's convention; in the lesson's, z near 1 takes the new "
           "state h~";
  if (check::matches(got, (1.0 - z) * h + z * tanh(c.w_h->forward(x) + r * c.u_h->forward(h)), 1e-12))
    return "r was applied to U_h h, after the product: in the lesson's formula r resets h itself, before U_h";
  if (check::matches(got, (1.0 - z) * h + z * tanh(c.w_h->forward(x) + c.u_h->forward(h)), 1e-12))
    return "the candidate ignores r: the reset gate decides how much of h goes into h~";
  const Tensor z_from_r = sigmoid(c.w_r->forward(x) + c.u_r->forward(h)),
               r_from_z = sigmoid(c.w_z->forward(x) + c.u_z->forward(h));
  if (check::matches(got, (1.0 - z_from_r) * h + z_from_r * tanh(c.w_h->forward(x) + c.u_h->forward(r_from_z * h)),
                     1e-12))
    return "z and r are swapped: z is made by w_z and u_z, r by w_r and u_r";
  return "the four formulas above, in order: z, r, h~ from r * h, then (1 - z) h + z h~";
}

void same_as_cell(nn::GRUCell& cell, const Tensor& x, const Tensor& h, const Tensor& want, const std::string& what) {
  const Tensor got = ex6_2::gru_step(cell, x, h);
  check::expect_close(got, want, what, 1e-12, hint_for(got, cell, x, h));
}
}  // namespace

check::Exercise check::exercise() {
  return {"6.2", "A GRU step in the lesson's convention", "docs/book/06_sequence_models.md", {
    {"one step equals nn::GRUCell's, batch of 3, I = 4, H = 5", [] {
       Generator gen(11);
       nn::GRUCell cell(4, 5, {.dtype = kFloat64, .generator = &gen});
       Tensor x = randn({3, 4}, gen, kFloat64), h = randn({3, 5}, gen, kFloat64);
       same_as_cell(cell, x, h, cell.forward(x, h), "gru_step(cell, x, h)");
     }},
    {"with h = 0 and z forced to 1 the new state is tanh(W_h x + b_h)", [] {
       Generator gen(12);
       nn::GRUCell cell(2, 3, {.dtype = kFloat64, .generator = &gen});
       {
         NoGradGuard no_grad;
         cell.w_z->bias.fill_(50.0);  // sigmoid(50) = 1 to float64 precision
       }
       Tensor x = randn({1, 2}, gen, kFloat64), h = zeros({1, 3}, kFloat64);
       same_as_cell(cell, x, h, tanh(cell.w_h->forward(x)), "gru_step with z = 1");
     }},
    {"the gradients to x, h and the weights equal the cell's", [] {
       Generator gen(13);
       nn::GRUCell cell(4, 5, {.dtype = kFloat64, .generator = &gen});
       Tensor x = randn({3, 4}, gen, kFloat64).requires_grad_(), h = randn({3, 5}, gen, kFloat64).requires_grad_();
       Tensor R = randn({3, 5}, gen, kFloat64);
       sum(ex6_2::gru_step(cell, x, h) * R).backward();
       const Tensor gx = x.grad(), gh = h.grad(), gw = cell.u_h->weight.grad();
       expect(gx.defined() && gh.defined() && gw.defined(), "after backward, the gradient of " +
                  std::string(!gx.defined() ? "x" : !gh.defined() ? "h" : "U_h's weight") + " is undefined",
              "autograd follows only ember ops on x, h and the cell's own weights: was anything detached, or "
              "computed where nothing records?");
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
