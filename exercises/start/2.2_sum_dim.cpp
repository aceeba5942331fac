// Exercise 2.2: Sum over a dim, differentiable (chapter 2, docs/book/02_the_autograd_engine.md)
//
// sum_dim(x, d, keepdim) sums x over one dim d (negative d counts from the
// end): (2, 3, 4) summed over d = 1 is (2, 4), or (2, 1, 4) with keepdim.
// Make it differentiable: every element that went into a sum receives the
// gradient of that sum. So the rule takes g, of the output's shape, puts the
// summed dim back (unsqueeze, unless keepdim kept it) and repeats g along it
// (expand, a view: chapter 1).
//
// Useful: wrap_dim (tensor/shape.h), kernel::sum (tensor/kernels.h), and
// the ops unsqueeze and expand (autograd/ops.h). autograd/ops/reduce.cpp has
// ember's own sum: read it after you are done.
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
    TODO("return {g with the summed dim back (if !keepdim) and expanded to input_shape}");
  }
};

Tensor sum_dim(const Tensor& x, int64_t d, bool keepdim) {
  OpScope scope("sum_dim", x);
  (void)d;
  (void)keepdim;
  TODO("wrap d, compute kernel::sum(x, {d}, keepdim), and record a SumDimBackward when needs_grad({x})");
}

}  // namespace ex2_2
