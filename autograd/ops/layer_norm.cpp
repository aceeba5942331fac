// layer_norm as one fused op: one node whose rule is a pass over rows of
// length D (kernel::layer_norm_forward / layer_norm_backward, side by side in
// tensor/fused.cpp), instead of the ~10 elementwise ops and reductions (and
// their temporaries) that the composed formula would record. The composed
// version, (x - mean) / sqrt(var + eps) * w + b, is in the tests as the reference.
//
// Legend: N rows (all leading dims), D the normalized (last) dim.
#include <vector>

#include "autograd/forward.h"
#include "autograd/node.h"
#include "autograd/op_scope.h"
#include "autograd/ops.h"
#include "tensor/kernels.h"

namespace ember {

// With x̂ = (x - μ) r and g' = g ⊙ w (per row of length D):
//   dx = r (g' - mean(g') - x̂ mean(g' ⊙ x̂)),   dw = Σ_rows g ⊙ x̂,   db = Σ_rows g
// It saves the input x itself (whose memory exists anyway), μ and r per row.
// The formula exists twice: as loops in kernel::layer_norm_backward, and here
// in ember ops for when backward records (create_graph), with μ and r
// recomputed from x so that they depend on it. tests/autograd_fused_test.cpp
// checks the two against each other; the registry gradchecks the loops and
// gradgradchecks the ops (tests/gradcheck_samples/samples_fused.cpp).
struct LayerNormBackward final : Node {
  EMBER_NODE_NAME(LayerNormBackward)
  SavedTensor x, mean, rstd, weight;
  double eps;
  LayerNormBackward(const Tensor& x_, const Tensor& m, const Tensor& r, const Tensor& w, double e)
      : x(x_), mean(m), rstd(r), weight(w), eps(e) {}
  std::vector<SavedRef> saved() override { return {{"x", &x}, {"mean", &mean}, {"rstd", &rstd}, {"weight", &weight}}; }
  std::vector<Tensor> apply(const Tensor& g_in) override {
    const Tensor X = x.get(*this), W = weight.get(*this);
    if (!backward_composes()) {
      kernel::LayerNormGrads d = kernel::layer_norm_backward(X, W, mean.get(*this), rstd.get(*this), g_in);
      return {d.x, d.weight, d.bias};
    }
    Tensor centered = X - ember::mean(X, {-1}, true);
    Tensor r = rsqrt(var(X, {-1}, /*correction=*/0, true) + eps);
    Tensor h = centered * r, gw = g_in * W;
    Tensor dx = r * (gw - ember::mean(gw, {-1}, true) - h * ember::mean(gw * h, {-1}, true));
    return {dx, sum_to(g_in * h, W.shape()), sum_to(g_in, W.shape())};
  }
};

// x:(N, D) rows (any leading dims), weight/bias:(D); the kernel checks the
// shapes and dtypes
Tensor layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, double eps) {
  OpScope scope("layer_norm", x, weight, bias);
  kernel::LayerNormForward f = kernel::layer_norm_forward(x, weight, bias, eps);
  if (needs_grad({x, weight, bias}))
    record(f.out, std::make_shared<LayerNormBackward>(x, f.mean, f.rstd, weight, eps), {x, weight, bias});
  // Forward: d out = dx̂ ⊙ w + x̂ ⊙ dw + db, with dx̂ = r (dx - mean(dx) - x̂ mean(x̂ ⊙ dx)),
  // the same three terms as dx above, read the other way.
  forward_rule(f.out, [&] {
    Shape row = x.shape();
    row.back() = 1;  // μ and r per row, seen as (*, 1)
    Tensor r = reshape(to(f.rstd, x.dtype()), row), h = (x - reshape(to(f.mean, x.dtype()), row)) * r;
    Tensor t = term(x, [&](const Tensor& d) {
      return r * (d - ember::mean(d, {-1}, true) - h * ember::mean(h * d, {-1}, true)) * weight;
    });
    return plus(plus(t, term(weight, [&](const Tensor& dw) { return h * dw; })), term(bias, [&](const Tensor& db) {
      return expand(db, f.out.shape());
    }));
  }, x, weight, bias);
  return f.out;
}

}  // namespace ember
