// Exercise 6.2: A GRU step in the lesson's convention (chapter 6, docs/book/06_sequence_models.md)
//
// Write gru_step(cell, x, h): one step of the GRU with the weights of an
// nn::GRUCell (nn/recurrent.h), by the lesson's formulas, where z weights
// the NEW state:
//   z  = sigmoid(W_z x + U_z h + b_z)
//   r  = sigmoid(W_r x + U_r h + b_r)
//   h~ = tanh(W_h x + U_h (r * h) + b_h)
//   h' = (1 - z) * h + z * h~
// The cell's Linear modules hold them: cell.w_z->forward(x) is W_z x + b_z,
// cell.u_z->forward(h) is U_z h (no bias), and so on for r and h.
// x is (B, I), h is (B, H); return (B, H).
//
// Think it through: z near 1 means "take the new state": which of h and h~
// does z weight, and which 1 - z? (PyTorch's nn.GRU has it the other way
// round.) Where does r act: on h before U_h, or on U_h h after? With z = 1
// and h = 0, what must the step give?
//
// Check it:  bash scripts/exercise.sh 6.2
#include "exercises/exercise.h"

using namespace ember;

namespace ex6_2 {

Tensor gru_step(nn::GRUCell& cell, const Tensor& x, const Tensor& h) {
  (void)cell;
  (void)x;
  (void)h;
  TODO("the two gates, the candidate h~, and the mix of h and h~: which one does z weight?");
}

}  // namespace ex6_2
