// Exercise 3.2: Make gradcheck fail on purpose (chapter 3, docs/book/03_checking_gradients.md)
//
// The checker holds an op, scale_by_position(x): element j of x (in
// row-major order) times j + 1. Its backward rule is right. Its forward is
// not quite: it reads x's memory as if x were contiguous, the way a hasty
// loop over x.data_ptr<double>()[j] does. On a plain tensor from randn() that
// is the same thing, and gradcheck passes.
//
// Write the input on which gradcheck catches the bug: a float64 tensor that
// requires grad, and a leaf, as gradcheck wants. Think first: on which
// tensors is "the j-th number in memory" not "element j in row-major
// order"? And is a view of a tensor that requires grad still a leaf, or is
// it the output of an op? Then read the report the checker prints: which
// Jacobian entries disagree, and why those?
//
// Check it:  bash scripts/exercise.sh 3.2
#include "exercises/exercise.h"

using namespace ember;

namespace ex3_2 {

Tensor input_that_exposes_the_bug() {
  Generator gen(0);
  return randn({3, 4}, gen, kFloat64).requires_grad_();  // TODO: gradcheck passes on this one: why?
}

}  // namespace ex3_2
