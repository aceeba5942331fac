// Exercise 3.4: softmax's backward, by hand (chapter 3, docs/book/03_checking_gradients.md)
//
// y = softmax(x) along the last dim: y_i = exp(x_i) / sum_j exp(x_j), for
// every row. The op below computes y and records MySoftmaxBackward, which
// keeps y (the rule needs nothing else); write the rule. g is dL/dy, of y's
// shape; return dL/dx. Every y_i depends on every x_j of its row: find
// dy_i/dx_j first (two cases, i = j and i != j), then sum g_i dy_i/dx_j over i.
//
// Check it:  bash scripts/exercise.sh 3.4
#include "exercises/exercise.h"

using namespace ember;

namespace ex3_4 {

struct MySoftmaxBackward final : Node {
  EMBER_NODE_NAME(MySoftmaxBackward)
  SavedTensor y;  // the output
  explicit MySoftmaxBackward(const Tensor& out) : y(out) {}
  std::vector<SavedRef> saved() override { return {{"y", &y}}; }
  std::vector<Tensor> apply(const Tensor& g) override {
    Tensor Y = y.get(*this);
    // dy_i/dx_j = y_i (delta_ij - y_j), so dL/dx_j = y_j (g_j - sum_i g_i y_i)
    return {Y * (g - sum(g * Y, {-1}, true))};
  }
};

// Given: the forward, and the node recorded when x requires grad.
Tensor my_softmax(const Tensor& x) {
  OpScope scope("my_softmax", x);
  Tensor out;
  {
    NoGradGuard no_grad;
    out = softmax(x, -1);
  }
  if (needs_grad({x})) record(out, std::make_shared<MySoftmaxBackward>(out), {x});
  return out;
}

}  // namespace ex3_4
