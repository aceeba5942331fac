// cross_entropy as one fused op (autograd/composed_rule.h): log-softmax and the pick of the target's
// log-probability in one pass over each row of logits, with the textbook
// gradient softmax(logits) - one_hot(target) (kernel::cross_entropy_forward /
// cross_entropy_backward, side by side in tensor/fused.cpp). It stays exact at
// +-1e4 logits, and saves only one number per row beside the logits. Its
// composed fallback is -log_softmax(logits).gather(targets).
//
// Legend: N rows (B*T positions), C classes.
#include <vector>

#include "autograd/batching.h"
#include "autograd/composed_rule.h"
#include "autograd/op_scope.h"
#include "autograd/ops.h"
#include "tensor/factory.h"
#include "tensor/kernels.h"

namespace ember {

// The fallback, and the definition: loss_n = -log_softmax(logits_n)[target_n],
// 0 for an ignored row, then summed (Sum), averaged over the counted rows
// (Mean: `scale` is 1/count) or kept per row (None).
Tensor composed::cross_entropy(const Tensor& logits, const Tensor& targets, Reduction reduction,
                               int64_t ignore_index, double scale) {
  const int64_t C = logits.size(-1), N = targets.numel();
  Tensor flat_t = reshape(targets, {N, 1});
  Tensor ignored = eq(flat_t, static_cast<double>(ignore_index));
  Tensor picked = gather(log_softmax(reshape(logits, {N, C}), -1), 1, where(ignored, scalar_tensor(0, kInt64), flat_t));
  Tensor per = masked_fill(-picked, ignored, 0.0);
  if (reduction == Reduction::None) return reshape(per, targets.shape());
  if (reduction == Reduction::Sum) return sum(per);
  if (detail::capture_composes)  // a graph counts its run's targets: 1/count as ops, not this run's number
    return sum(per) * (1.0 / sum(to(ne(flat_t, static_cast<double>(ignore_index)), logits.dtype())));
  return sum(per) * scale;
}

// The kernel's backward: d loss_n / d logits_n = softmax_n - one_hot(target_n),
// times grad_out (and 1/count for Mean); ignored rows get 0. It saves the
// logits themselves (their memory exists anyway) and each row's log-sum-exp,
// from which the kernel recomputes softmax_n = exp(logits_n - lse_n): no
// (N, C) probabilities are kept.
struct CrossEntropyBackward final : ComposedBackward {
  EMBER_NODE_NAME(CrossEntropyBackward)
  SavedTensor logits, lse, targets;
  Reduction reduction;
  int64_t ignore_index;
  double scale;
  CrossEntropyBackward(const Tensor& x, const Tensor& l, const Tensor& t, Reduction r, int64_t ig, double sc)
      : logits(x), lse(l), targets(t), reduction(r), ignore_index(ig), scale(sc) {}
  std::vector<SavedRef> saved() override { return {{"logits", &logits}, {"lse", &lse}, {"targets", &targets}}; }
  std::vector<Tensor> fast_backward(const Tensor& g) override {
    return {kernel::cross_entropy_backward(logits.get(*this), targets.get(*this), lse.get(*this), g, scale,
                                           ignore_index)};
  }
  std::vector<Tensor> backward_as_op(const Tensor& g) override {
    return {cross_entropy_backward(g, logits.get(*this), targets.get(*this), lse.get(*this), reduction, ignore_index)};
  }
  Tensor fallback(const std::vector<Tensor>& in) const override {
    return composed::cross_entropy(in[0], in[1], reduction, ignore_index, scale);
  }
  std::vector<Tensor> fallback_inputs() override { return {logits.get(*this), targets.get(*this)}; }
};

// logits:(N,C) targets:(N) -> () or (N); leading dims (B,T) are flattened to N.
// The kernel checks the shapes, the dtypes and every target.
// The op's results are the loss and each row's log-sum-exp, which its
// backward reads: a captured graph holds it.
std::vector<Tensor> detail::cross_entropy_saving(const Tensor& logits, const Tensor& targets, Reduction reduction,
                                                 int64_t ignore_index) {
  OpScope scope("cross_entropy", logits, targets, reduction, ignore_index);
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
  composed_forward_rule(out, [&] { return composed::cross_entropy(logits, targets, reduction, ignore_index, scale); },
                        logits);
  return scope.out(std::vector<Tensor>{out, f.lse});
}
Tensor cross_entropy(const Tensor& logits, const Tensor& targets, Reduction reduction, int64_t ignore_index) {
  return detail::cross_entropy_saving(logits, targets, reduction, ignore_index)[0];
}

// The backward kernel as an op of its own, which a captured backward pass
// calls (compile/). Mean's 1/count is counted here from the targets, so a
// graph run on new targets (more or fewer ignored) scales by their count.
Tensor cross_entropy_backward(const Tensor& grad, const Tensor& logits, const Tensor& targets, const Tensor& lse,
                              Reduction reduction, int64_t ignore_index) {
  OpScope scope("cross_entropy_backward", grad, logits, targets, lse, reduction, ignore_index);
  refuse_to_record("cross_entropy_backward", {grad, logits, targets, lse});
  double scale = 1.0;
  if (reduction == Reduction::Mean) {
    EMBER_CHECK(targets.dtype() == kInt64, "cross_entropy_backward",
                "targets must be int64, got " << dtype_name(targets.dtype()));
    int64_t counted = 0;
    for (int64_t id : targets.to_vector<int64_t>()) counted += id != ignore_index;
    scale = 1.0 / static_cast<double>(counted);
  }
  return scope.out(kernel::cross_entropy_backward(logits, targets, lse, grad, scale, ignore_index));
}

// ---- vmap (autograd/batching.h) ----
// A batch of samples is more rows: the kernel runs on all of them with
// Reduction::None, and each sample's loss is then its own sum (Sum) or sum
// over its own count of targets (Mean), written in ops. Backward does the
// same in reverse: each sample's gradient of the loss spread over its rows.
namespace {
using batching::with_batch;
// dims 1 .. rank of a batched tensor: one sample's targets
Shape sample_dims(const Tensor& t) {
  Shape dims;
  for (int64_t d = 1; d < t.dim(); ++d) dims.push_back(d);
  return dims;
}
// each sample's count of targets, as targets' batch (B, 1, ..., 1) for dividing by
Tensor counted(const Tensor& targets, int64_t ignore_index, DType dt) {
  return sum(ne(targets, static_cast<double>(ignore_index)).to(dt), sample_dims(targets), false);
}
batching::Result cross_entropy_batched(const batching::Call& c) {
  const Tensor logits = with_batch(c.tensor(0), c.batched[0], c.size);
  const Tensor targets = with_batch(c.tensor(1), c.batched[1], c.size);
  const Reduction reduction = std::get<Reduction>(c.args[2]);
  const int64_t ignore = std::get<int64_t>(c.args[3]);
  std::vector<Tensor> out = detail::cross_entropy_saving(logits, targets, Reduction::None, ignore);
  if (reduction != Reduction::None) out[0] = sum(out[0], sample_dims(out[0]), false);
  if (reduction == Reduction::Mean) out[0] = out[0] / counted(targets, ignore, logits.dtype());
  out[1] = out[1].reshape(with_batch(c.sample_shapes.at(1), c.size));
  return batching::batched(std::move(out));
}
batching::Result cross_entropy_backward_batched(const batching::Call& c) {
  const Tensor logits = with_batch(c.tensor(1), c.batched[1], c.size);
  const Tensor targets = with_batch(c.tensor(2), c.batched[2], c.size);
  const Tensor lse = with_batch(c.tensor(3), c.batched[3], c.size);
  const Reduction reduction = std::get<Reduction>(c.args[4]);
  const int64_t ignore = std::get<int64_t>(c.args[5]);
  Tensor g = with_batch(c.tensor(0), c.batched[0], c.size);
  if (reduction != Reduction::None) {  // one number per sample, spread over its rows
    if (reduction == Reduction::Mean) g = g / counted(targets, ignore, g.dtype());
    Shape one_per_sample(static_cast<size_t>(targets.dim()), 1);
    one_per_sample[0] = c.size;
    g = g.reshape(one_per_sample).expand(targets.shape());
  }
  return batching::batched(
      {cross_entropy_backward(g, logits, targets, lse.reshape(Shape{targets.numel()}), Reduction::None, ignore)});
}
}  // namespace
void batching::detail::add_cross_entropy_batching_rules(Rules& r) {
  r.add("cross_entropy", &cross_entropy_batched);
  r.add("cross_entropy_backward", &cross_entropy_backward_batched);
}

}  // namespace ember
