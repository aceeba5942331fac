// Exercise 3.7: GELU's backward, by hand (chapter 3, docs/book/03_checking_gradients.md)
//
// gelu(x) = x Phi(x), where Phi(x) = (1 + erf(x / sqrt 2)) / 2 is the normal
// distribution's cumulative probability, and its derivative is the normal
// density phi(x) = exp(-x^2 / 2) / sqrt(2 pi). The op below computes gelu
// (the exact form, as nn::GELU's default) and records MyGeluBackward, which
// keeps x; write the rule: g is dL/dy, return dL/dx.
//
// Check it:  bash scripts/exercise.sh 3.7
#include <cmath>

#include "exercises/exercise.h"

using namespace ember;

namespace ex3_7 {

struct MyGeluBackward final : Node {
  EMBER_NODE_NAME(MyGeluBackward)
  SavedTensor x;
  explicit MyGeluBackward(const Tensor& input) : x(input) {}
  std::vector<SavedRef> saved() override { return {{"x", &x}}; }
  std::vector<Tensor> apply(const Tensor& g) override {
    Tensor X = x.get(*this);
    // d(x Phi(x))/dx = Phi(x) + x phi(x)
    const double pi = 3.14159265358979323846;
    Tensor Phi = (1.0 + erf(X / std::sqrt(2.0))) * 0.5;
    Tensor phi = exp(X * X * -0.5) / std::sqrt(2.0 * pi);
    return {g * (Phi + X * phi)};
  }
};

// Given: the forward, and the node recorded when x requires grad.
Tensor my_gelu(const Tensor& x) {
  OpScope scope("my_gelu", x);
  Tensor out;
  {
    NoGradGuard no_grad;
    out = gelu(x);
  }
  if (needs_grad({x})) record(out, std::make_shared<MyGeluBackward>(x), {x});
  return out;
}

}  // namespace ex3_7
