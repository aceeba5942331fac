// Exercise 2.2: Sum over a dim, differentiable, a reference solution.
#include "exercises/exercise.h"

using namespace ember;

namespace ex2_2 {

// d sum_j x_j / d x_i = 1: every summed element gets g
struct SumDimBackward final : Node {
  EMBER_NODE_NAME(SumDimBackward)
  Shape input_shape;
  int64_t dim;
  bool keepdim;
  SumDimBackward(Shape s, int64_t d, bool k) : input_shape(std::move(s)), dim(d), keepdim(k) {}
  std::vector<Tensor> apply(const Tensor& g) override {
    const Tensor kept = keepdim ? g : unsqueeze(g, dim);
    return {expand(kept, input_shape)};
  }
};

Tensor sum_dim(const Tensor& x, int64_t d, bool keepdim) {
  OpScope scope("sum_dim", x);
  const int64_t dim = wrap_dim(d, x.dim(), "sum_dim");
  Tensor out = kernel::sum(x, {dim}, keepdim);
  if (needs_grad({x})) record(out, std::make_shared<SumDimBackward>(x.shape(), dim, keepdim), {x});
  return out;
}

}  // namespace ex2_2
