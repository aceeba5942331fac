// Exercise 2.1: SquareBackward (chapter 2, docs/book/02_the_autograd_engine.md)
//
// Write the op square(x) = x * x the way every op in autograd/ops/ is
// written (open autograd/ops/matmul.cpp: MatmulBackward and matmul are a
// model; the elementwise ops of unary.cpp get the same Node written for them
// by UnaryBackward, autograd/elementwise_rule.h):
//   1. the first line of the op is an OpScope naming it, so that the
//      profiler and the backward trace see it (autograd/op_scope.h);
//   2. the forward is a kernel call, which records nothing;
//   3. when needs_grad({x}), record() makes a SquareBackward the output's
//      grad_fn; the node keeps x, since d(x^2)/dx = 2x.
//
// Check it:  bash scripts/exercise.sh 2.1
#include "exercises/exercise.h"

using namespace ember;

namespace ex2_1 {

struct SquareBackward final : Node {
  EMBER_NODE_NAME(SquareBackward)
  SavedTensor x;  // the input, kept for backward
  explicit SquareBackward(const Tensor& input) : x(input) {}
  std::vector<SavedRef> saved() override { return {{"x", &x}}; }
  // g is the gradient of the output; return the gradient of the input.
  std::vector<Tensor> apply(const Tensor& g) override {
    (void)g;
    TODO("return {g * 2x}, reading x with x.get(*this)");
  }
};

Tensor square(const Tensor& x) {
  TODO("an OpScope named \"square\", the forward with kernel::binary(kernel::Binary::Mul, x, x), then record()");
}

}  // namespace ex2_1
