// Exercise 2.2: Sum over a dim, differentiable (chapter 2, docs/book/02_the_autograd_engine.md)
//
// sum_dim(x, d, keepdim) sums x over one dim d (negative d counts from the
// end): (2, 3, 4) summed over d = 1 is (2, 4), or (2, 1, 4) with keepdim.
// Make it differentiable. Think it through:
//   * every element of x went into exactly one of the sums: how much does
//     that sum change when the element changes by a little?
//   * so which number of g (the gradient of the output, of the output's
//     shape) does x[i, j, k] receive?
//   * g has one dim fewer than x (unless keepdim kept it): where is it
//     missing, and how do you get a tensor of x's shape out of g without
//     copying (a view, chapter 1)?
//
// Tools: wrap_dim (tensor/shape.h), kernel::sum (tensor/kernels.h, records
// nothing), and the differentiable view ops of autograd/ops.h.
//
// Compare with, after you try: ember's own sum in autograd/ops/reduce.cpp.
//
// Check it:  bash scripts/exercise.sh 2.2
#include "exercises/exercise.h"

using namespace ember;

namespace ex2_2 {

struct SumDimBackward final : Node {
  EMBER_NODE_NAME(SumDimBackward)
  Shape input_shape;  // x's shape: what the gradient must have
  int64_t dim;        // the summed dim, already wrapped into [0, x.dim())
  bool keepdim;
  SumDimBackward(Shape s, int64_t d, bool k) : input_shape(std::move(s)), dim(d), keepdim(k) {}
  std::vector<Tensor> apply(const Tensor& g) override {
    (void)g;
    TODO("which number of g does each element of x receive, and how does g become a tensor of input_shape?");
  }
};

Tensor sum_dim(const Tensor& x, int64_t d, bool keepdim) {
  OpScope scope("sum_dim", x);
  (void)d;
  (void)keepdim;
  TODO("which dim is d when it is negative, what computes the sum without recording, and when is a node needed?");
}

}  // namespace ex2_2
