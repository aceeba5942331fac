// Exercise 6.1: The lesson's linear RNN, through autograd (chapter 6, docs/book/06_sequence_models.md)
//
// Write linear_rnn(x, w): h_0 = 0, h_t = w h_{t-1} + x_t for t = 1..T, with
// ember ops (so that backward() goes back through time), and return h_T as a
// 0-d tensor. x is a 1-D float64 tensor of T inputs; select(x, 0, t) is x_t.
// The lesson works it by hand: w = 0.5, x = (2, 0, 1) gives h = 2, 1, 1.5,
// and dh_3/dx = (0.25, 0.5, 1). The checker also goes ten steps back.
//
// Think it through: which of h_{t-1} and x_t does w multiply, and in which
// order do the inputs come? Which shape has h before the first step, so
// that h_T comes out 0-d? And for backward() to reach x, what must every
// step be computed with: numbers read out of x, or ops on x?
//
// Check it:  bash scripts/exercise.sh 6.1
#include "exercises/exercise.h"

using namespace ember;

namespace ex6_1 {

Tensor linear_rnn(const Tensor& x, double w) {
  (void)x;
  (void)w;
  TODO("what is h before the first input, and what does each of the T steps do to it?");
}

}  // namespace ex6_1
