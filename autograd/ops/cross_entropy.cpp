// cross_entropy as one fused op: log-softmax and the pick of the target's
// log-probability in one pass over each row of logits, with the textbook
// gradient softmax(logits) - one_hot(target) (kernel::cross_entropy_forward /
// cross_entropy_backward, side by side in tensor/fused.cpp). It stays exact at
// +-1e4 logits, and saves only one number per row beside the logits. The
// composed reference, -log_softmax(logits).gather(targets), is in the tests.
//
// Legend: N rows (B*T positions), C classes.
#include <vector>

#include "autograd/forward.h"
#include "autograd/node.h"
#include "autograd/op_scope.h"
#include "autograd/ops.h"
#include "tensor/factory.h"
#include "tensor/kernels.h"

namespace ember {

// d loss_n / d logits_n = softmax_n - one_hot(target_n), times grad_out (and
// 1/count for Mean); ignored rows get 0. It saves the logits themselves
// (their memory exists anyway) and each row's log-sum-exp, from which the
// kernel recomputes softmax_n = exp(logits_n - lse_n): no (N, C) probabilities
// are kept. The gradient exists twice: as loops in kernel::cross_entropy_backward,
// and here in ember ops for when backward records (create_graph).
// tests/autograd_fused_test.cpp checks the two against each other; the
// registry gradchecks the loops and gradgradchecks the ops
// (tests/gradcheck_samples/samples_fused.cpp).
struct CrossEntropyBackward final : Node {
  EMBER_NODE_NAME(CrossEntropyBackward)
  SavedTensor logits, lse, targets;
  Reduction reduction;
  int64_t ignore_index;
  double scale;
  CrossEntropyBackward(const Tensor& x, const Tensor& l, const Tensor& t, Reduction r, int64_t ig, double sc)
      : logits(x), lse(l), targets(t), reduction(r), ignore_index(ig), scale(sc) {}
  std::vector<SavedRef> saved() override { return {{"logits", &logits}, {"lse", &lse}, {"targets", &targets}}; }
  std::vector<Tensor> apply(const Tensor& g_in) override {
    const Tensor X = logits.get(*this), L = lse.get(*this), Tg = targets.get(*this);
    if (!backward_composes()) return {kernel::cross_entropy_backward(X, Tg, L, g_in, scale, ignore_index)};
    const int64_t C = X.size(-1), N = L.numel();
    Tensor flat = reshape(X, {N, C});
    Tensor keep = kernel::to(kernel::compare_scalar(kernel::Compare::Ne, Tg, static_cast<double>(ignore_index)), X.dtype());
    Tensor safe = where(kernel::compare_scalar(kernel::Compare::Eq, Tg, static_cast<double>(ignore_index)),
                        scalar_tensor(0, kInt64), Tg);
    Tensor onehot = kernel::reshape(kernel::to(kernel::one_hot(safe, C), X.dtype()), {N, C});
    Tensor gn = reduction == Reduction::None ? reshape(g_in, {N, 1}) : reshape(g_in * scale, {1, 1});
    Tensor grad = (softmax(flat, -1) - onehot) * (gn * reshape(keep, {N, 1}));
    return {reshape(grad, X.shape())};
  }
};

// logits:(N,C) targets:(N) -> () or (N); leading dims (B,T) are flattened to N.
// The kernel checks the shapes, the dtypes and every target.
Tensor cross_entropy(const Tensor& logits, const Tensor& targets, Reduction reduction, int64_t ignore_index) {
  OpScope scope("cross_entropy", logits, targets);
  kernel::CrossEntropyForward f = kernel::cross_entropy_forward(logits, targets, ignore_index);
  Tensor out;
  double scale = 1.0;
  if (reduction == Reduction::None) {
    out = kernel::reshape(f.losses, targets.shape());
  } else {
    out = kernel::sum(f.losses, {}, false);
    if (reduction == Reduction::Mean) {
      scale = 1.0 / static_cast<double>(f.counted);  // 1/0 -> inf, and 0*inf = NaN: PyTorch's NaN for all-ignored
      out = kernel::binary_scalar(kernel::Binary::Mul, out, scale);
    }
  }
  if (needs_grad({logits}))
    record(out, std::make_shared<CrossEntropyBackward>(logits, f.lse, targets, reduction, ignore_index, scale), {logits});
  // Forward: d loss_n = Σ_c (softmax_nc - one_hot_nc) dlogits_nc, the gradient above
  // dotted with the tangent; 0 for ignored rows, then summed (times 1/count for Mean).
  forward_rule(out, [&] {
    const int64_t C = logits.size(-1), N = f.lse.numel();
    Tensor d = reshape(dx(logits), {N, C}), flat_t = reshape(targets, {N, 1});
    Tensor ignored = eq(flat_t, static_cast<double>(ignore_index));
    Tensor picked = gather(d, 1, where(ignored, scalar_tensor(0, kInt64), flat_t));
    Tensor per = masked_fill(sum(softmax(reshape(logits, {N, C}), -1) * d, {1}, true) - picked, ignored, 0.0);
    if (reduction == Reduction::None) return reshape(per, targets.shape());
    Tensor total = sum(per);
    return reduction == Reduction::Mean ? total * scale : total;
  }, logits);
  return out;
}

}  // namespace ember
