// layer_norm as one fused op (autograd/composed_rule.h): one node whose rule
// is a pass over rows of length D (kernel::layer_norm_forward /
// layer_norm_backward, side by side in tensor/fused.cpp), instead of the ~10
// elementwise ops and reductions, and their temporaries, that its composed
// fallback records.
//
// Legend: N rows (all leading dims), D the normalized (last) dim.
#include <vector>

#include "autograd/batching.h"
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

// ---- vmap (autograd/batching.h) ----
// Every row of a batch is normalized on its own, so the batched input is
// just more rows; the statistics come back one per row, reshaped to (B, rows).
// Backward: dx per row as the kernel gives it, but dweight and dbias are
// sums over rows, which must stop at each sample's own rows: written in ops.
// A weight or bias that differs per sample has no rule: vmap loops.
namespace {
using batching::with_batch;
batching::Result layer_norm_batched(const batching::Call& c) {
  if (c.batched[1] || c.batched[2]) return {};
  std::vector<Tensor> out = c.run(c.args);
  for (size_t i = 1; i < out.size(); ++i) out[i] = out[i].reshape(with_batch(c.sample_shapes.at(i), c.size));
  return batching::batched(std::move(out));
}
batching::Result layer_norm_backward_batched(const batching::Call& c) {
  if (c.batched[2]) return {};
  const Tensor g = with_batch(c.tensor(0), c.batched[0], c.size), x = with_batch(c.tensor(1), c.batched[1], c.size);
  const Tensor m = with_batch(c.tensor(3), c.batched[3], c.size), r = with_batch(c.tensor(4), c.batched[4], c.size);
  const Shape rows{m.numel()};  // the kernel's statistics: one per row of every sample
  const Tensor dx = layer_norm_backward(g, x, c.tensor(2), m.reshape(rows), r.reshape(rows))[0];
  Shape per_row = x.shape();
  per_row.back() = 1;
  const Tensor gxhat = g * ((x - m.reshape(per_row)) * r.reshape(per_row));
  Shape sample_rows;  // the dims of one sample's rows: 1 .. rank-1
  for (int64_t d = 1; d < x.dim() - 1; ++d) sample_rows.push_back(d);
  if (sample_rows.empty()) return batching::batched({dx, gxhat, g});  // one row per sample
  return batching::batched({dx, sum(gxhat, sample_rows, false), sum(g, sample_rows, false)});
}
}  // namespace
void batching::detail::add_layer_norm_batching_rules(Rules& r) {
  r.add("layer_norm", &layer_norm_batched);
  r.add("layer_norm_backward", &layer_norm_backward_batched);
}

}  // namespace ember
