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
// Check it:  bash scripts/exercise.sh 6.2
#include "exercises/exercise.h"

using namespace ember;

namespace ex6_2 {

Tensor gru_step(nn::GRUCell& cell, const Tensor& x, const Tensor& h) {
  (void)cell;
  (void)x;
  (void)h;
  TODO("z, r, the candidate h~, then (1 - z) * h + z * h~");
}

}  // namespace ex6_2
