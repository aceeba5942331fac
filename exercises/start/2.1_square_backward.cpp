// Exercise 2.1: SquareBackward (chapter 2, docs/book/02_the_autograd_engine.md)
//
// Write the op square(x) = x * x the way every op in autograd/ops/ is
// written (autograd/ops/matmul.cpp, MatmulBackward and matmul, shows the
// pattern on another op). An op has three parts; think each one through:
//   1. the instruments (the profiler, the backward trace) see an op only if
//      it announces itself first, by name (autograd/op_scope.h): which name?
//   2. the forward: the ember op x * x would record a node of its own; what
//      computes the product without recording anything (tensor/kernels.h)?
//   3. the node: when must square record one (not for every x), and what
//      must SquareBackward keep to turn g, the gradient of the output, into
//      the gradient of x? What is d(x^2)/dx?
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
    TODO("the chain rule: what does g get multiplied by? (x.get(*this) reads the saved x)");
  }
};

Tensor square(const Tensor& x) {
  (void)x;
  TODO("the three parts above: the op's name, a forward that records nothing, and the node when it is needed");
}

}  // namespace ex2_1
