// Exercise 6.2: A GRU step in the lesson's convention, a reference solution.
#include "exercises/exercise.h"

using namespace ember;

namespace ex6_2 {

Tensor gru_step(nn::GRUCell& cell, const Tensor& x, const Tensor& h) {
  Tensor z = sigmoid(cell.w_z->forward(x) + cell.u_z->forward(h));
  Tensor r = sigmoid(cell.w_r->forward(x) + cell.u_r->forward(h));
  Tensor candidate = tanh(cell.w_h->forward(x) + cell.u_h->forward(r * h));
  return (1.0 - z) * h + z * candidate;
}

}  // namespace ex6_2
