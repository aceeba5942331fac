// Exercise 2.1: SquareBackward, a reference solution.
#include "exercises/exercise.h"

using namespace ember;

namespace ex2_1 {

struct SquareBackward final : Node {
  EMBER_NODE_NAME(SquareBackward)
  SavedTensor x;
  explicit SquareBackward(const Tensor& input) : x(input) {}
  std::vector<SavedRef> saved() override { return {{"x", &x}}; }
  // d(x^2)/dx = 2x
  std::vector<Tensor> apply(const Tensor& g) override { return {g * x.get(*this) * 2.0}; }
};

Tensor square(const Tensor& x) {
  OpScope scope("square", x);
  Tensor out = kernel::binary(kernel::Binary::Mul, x, x);
  if (needs_grad({x})) record(out, std::make_shared<SquareBackward>(x), {x});
  return out;
}

}  // namespace ex2_1
