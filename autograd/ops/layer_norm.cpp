// layer_norm as one fused op (autograd/composed_rule.h): one node whose rule
// is a pass over rows of length D (kernel::layer_norm_forward /
// layer_norm_backward, side by side in tensor/fused.cpp), instead of the ~10
// elementwise ops and reductions, and their temporaries, that its composed
// fallback records.
//
// Legend: N rows (all leading dims), D the normalized (last) dim.
#include <vector>

#include "autograd/composed_rule.h"
#include "autograd/op_scope.h"
#include "autograd/ops.h"
#include "tensor/kernels.h"

namespace ember {

// The fallback, and the definition: x̂ = (x - μ) / sqrt(σ² + eps) per row
// (biased variance), then x̂ ⊙ w + b.
Tensor composed::layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, double eps) {
  Tensor centered = x - mean(x, {-1}, true);
  return centered * rsqrt(var(x, {-1}, /*correction=*/0, true) + eps) * weight + bias;
}

// The kernel's backward, with x̂ = (x - μ) r and g' = g ⊙ w per row:
//   dx = r (g' - mean(g') - x̂ mean(g' ⊙ x̂)),   dw = Σ_rows g ⊙ x̂,   db = Σ_rows g
// It saves the input x itself (whose memory exists anyway), μ and r per row.
struct LayerNormBackward final : ComposedBackward {
  EMBER_NODE_NAME(LayerNormBackward)
  SavedTensor x, mean, rstd, weight, bias;
  double eps;
  LayerNormBackward(const Tensor& x_, const Tensor& m, const Tensor& r, const Tensor& w, const Tensor& b, double e)
      : x(x_), mean(m), rstd(r), weight(w), bias(b), eps(e) {}
  std::vector<SavedRef> saved() override {
    return {{"x", &x}, {"mean", &mean}, {"rstd", &rstd}, {"weight", &weight}, {"bias", &bias}};
  }
  std::vector<Tensor> fast_backward(const Tensor& g) override {
    kernel::LayerNormGrads d = kernel::layer_norm_backward(x.get(*this), weight.get(*this), mean.get(*this),
                                                           rstd.get(*this), g);
    return {d.x, d.weight, d.bias};
  }
  std::vector<Tensor> backward_as_op(const Tensor& g) override {
    return layer_norm_backward(g, x.get(*this), weight.get(*this), mean.get(*this), rstd.get(*this));
  }
  Tensor fallback(const std::vector<Tensor>& in) const override { return composed::layer_norm(in[0], in[1], in[2], eps); }
  std::vector<Tensor> fallback_inputs() override { return {x.get(*this), weight.get(*this), bias.get(*this)}; }
};

// x:(N, D) rows (any leading dims), weight/bias:(D); the kernel checks the
// shapes and dtypes. The op's results are out, mean and rstd: the two rows of
// statistics are what its backward reads, so a captured graph holds them.
std::vector<Tensor> detail::layer_norm_saving(const Tensor& x, const Tensor& weight, const Tensor& bias, double eps) {
  OpScope scope("layer_norm", x, weight, bias, eps);
  kernel::LayerNormForward f = kernel::layer_norm_forward(x, weight, bias, eps);
  if (needs_grad({x, weight, bias}))
    record(f.out, std::make_shared<LayerNormBackward>(x, f.mean, f.rstd, weight, bias, eps), {x, weight, bias});
  composed_forward_rule(f.out, [&] { return composed::layer_norm(x, weight, bias, eps); }, x, weight, bias);
  return scope.out(std::vector<Tensor>{f.out, f.mean, f.rstd});
}
Tensor layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, double eps) {
  return detail::layer_norm_saving(x, weight, bias, eps)[0];
}

// The backward kernel as an op of its own, which a captured backward pass
// calls (compile/): the gradients of x, weight and bias.
std::vector<Tensor> layer_norm_backward(const Tensor& grad, const Tensor& x, const Tensor& weight, const Tensor& mean,
                                        const Tensor& rstd) {
  OpScope scope("layer_norm_backward", grad, x, weight, mean, rstd);
  refuse_to_record("layer_norm_backward", {grad, x, weight, mean, rstd});
  kernel::LayerNormGrads d = kernel::layer_norm_backward(x, weight, mean, rstd, grad);
  return scope.out(std::vector<Tensor>{d.x, d.weight, d.bias});
}

}  // namespace ember
