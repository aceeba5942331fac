// Exercise 6.1: The lesson's linear RNN, through autograd (chapter 6, docs/book/06_sequence_models.md)
//
// Write linear_rnn(x, w): h_0 = 0, h_t = w h_{t-1} + x_t for t = 1..T, with
// ember ops (so that backward() goes back through time), and return h_T as a
// 0-d tensor. x is a 1-D float64 tensor of T inputs; select(x, 0, t) is x_t.
// The lesson works it by hand: w = 0.5, x = (2, 0, 1) gives h = 2, 1, 1.5,
// and dh_3/dx = (0.25, 0.5, 1). The checker also goes ten steps back.
//
// Check it:  bash scripts/exercise.sh 6.1
#include "exercises/exercise.h"

using namespace ember;

namespace ex6_1 {

Tensor linear_rnn(const Tensor& x, double w) {
  (void)x;
  (void)w;
  TODO("start from h = zeros({}, kFloat64) and loop over the T inputs");
}

}  // namespace ex6_1
