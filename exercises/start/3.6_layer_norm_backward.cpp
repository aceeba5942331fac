// Exercise 3.6: layer norm's backward, by hand (chapter 3, docs/book/03_checking_gradients.md)
//
// Over the last dim, of size D: mu = mean(x), var = mean((x - mu)^2),
// rstd = 1 / sqrt(var + eps), y = (x - mu) * rstd (no weight or bias here:
// they are an elementwise product and sum after it, and chapter 2's rules
// cover those). The op below computes y and records MyLayerNormBackward,
// which keeps xhat = y and rstd (one per row, shape (..., 1)); write the
// rule: g is dL/dy, return dL/dx. mu and var depend on every x_j of the row,
// so x_j reaches y three ways: directly, through mu and through var.
//
// Check it:  bash scripts/exercise.sh 3.6
#include "exercises/exercise.h"

using namespace ember;

namespace ex3_6 {

struct MyLayerNormBackward final : Node {
  EMBER_NODE_NAME(MyLayerNormBackward)
  SavedTensor xhat, rstd;
  MyLayerNormBackward(const Tensor& y, const Tensor& r) : xhat(y), rstd(r) {}
  std::vector<SavedRef> saved() override { return {{"xhat", &xhat}, {"rstd", &rstd}}; }
  std::vector<Tensor> apply(const Tensor& g) override {
    Tensor X = xhat.get(*this), R = rstd.get(*this);
    (void)g, (void)X, (void)R;
    TODO("add up the three ways x_j reaches y: what are dmu/dx_j and d(rstd)/dx_j, and what is left when you "
         "write the sum with row means (mean(t, {-1}, true)) of g and of g * xhat?");
  }
};

// Given: the forward, and the node recorded when x requires grad.
Tensor my_layer_norm(const Tensor& x, double eps = 1e-5) {
  OpScope scope("my_layer_norm", x);
  Tensor y, r;
  {
    NoGradGuard no_grad;
    Tensor centred = x - mean(x, {-1}, true);
    r = rsqrt(mean(centred * centred, {-1}, true) + eps);
    y = centred * r;
  }
  if (needs_grad({x})) record(y, std::make_shared<MyLayerNormBackward>(y, r), {x});
  return y;
}

}  // namespace ex3_6
