// cross_entropy as one fused op: log-softmax and the pick of the target's
// log-probability in one pass over each row of logits, with the textbook
// gradient softmax(logits) - one_hot(target). It stays exact at +-1e4 logits,
// and saves only one number per row beside the logits. The composed reference,
// -log_softmax(logits).gather(targets), is in the tests.
//
// Legend: N rows (B*T positions), C classes.
#include <cmath>
#include <limits>
#include <vector>

#include "autograd/node.h"
#include "autograd/op_scope.h"
#include "autograd/ops.h"
#include "tensor/factory.h"
#include "tensor/hooks.h"
#include "tensor/fast_math.h"
#include "tensor/kernels.h"
#include "tensor/parallel.h"

namespace ember {

// d loss_n / d logits_n = softmax_n - one_hot(target_n), times grad_out (and
// 1/count for Mean); ignored rows get 0. It saves the logits themselves
// (their memory exists anyway) and each row's log-sum-exp, and recomputes
// softmax_n = exp(logits_n - lse_n): no (N, C) probabilities are kept. When
// backward records (create_graph), the same gradient in ember ops.
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
    const int64_t C = X.size(-1), N = C ? X.numel() / C : 0;
    if (recording_backward()) {
      Tensor flat = reshape(X, {N, C});
      Tensor keep = kernel::to(kernel::compare_scalar(kernel::Compare::Ne, Tg, static_cast<double>(ignore_index)), X.dtype());
      Tensor safe = where(kernel::compare_scalar(kernel::Compare::Eq, Tg, static_cast<double>(ignore_index)),
                          scalar_tensor(0, kInt64), Tg);
      Tensor onehot = kernel::reshape(kernel::to(kernel::one_hot(safe, C), X.dtype()), {N, C});
      Tensor gn = reduction == Reduction::None ? reshape(g_in, {N, 1}) : reshape(g_in * scale, {1, 1});
      Tensor grad = (softmax(flat, -1) - onehot) * (gn * reshape(keep, {N, 1}));
      return {reshape(grad, X.shape())};
    }
    Tensor x = kernel::contiguous(X), g = kernel::contiguous(g_in);
    Tensor grad = empty(X.shape(), X.dtype());
    EMBER_DISPATCH_FLOAT(X.dtype(), "cross_entropy backward", [&]<typename T>() {
      const T *px = x.data_ptr<T>(), *pl = L.data_ptr<T>(), *pg = g.data_ptr<T>();
      const int64_t* tgt = Tg.data_ptr<int64_t>();
      T* out = grad.data_ptr<T>();
      detail::parallel_for(N, std::max<int64_t>(1, detail::kGrain / std::max<int64_t>(C, 1)), [&](int64_t n0, int64_t n1) {
        for (int64_t n = n0; n < n1; ++n) {
          T gn = reduction == Reduction::None ? pg[n] : static_cast<T>(pg[0] * scale);
          if (tgt[n] == ignore_index) gn = 0;
          T* o = out + n * C;
          const T* row = px + n * C;
          detail::exp_shifted(row, pl[n], o, C);  // softmax
          for (int64_t c = 0; c < C; ++c) o[c] *= gn;
          if (tgt[n] != ignore_index) o[tgt[n]] -= gn;
        }
      });
    });
    const double n = static_cast<double>(grad.numel()), item = static_cast<double>(dtype_size(grad.dtype()));
    note_work(4 * n, n * item, n * item);  // (exp(x - lse) - onehot) * g: logits read, gradient written
    return {grad};
  }
};

// logits:(N,C) targets:(N) -> () or (N); leading dims (B,T) are flattened to N
Tensor cross_entropy(const Tensor& logits, const Tensor& targets, Reduction reduction, int64_t ignore_index) {
  OpScope scope("cross_entropy", logits, targets);
  EMBER_CHECK(logits.dim() >= 2 && logits.is_floating_point(), "cross_entropy",
              "logits must be a floating (N, C) or (B, T, C) tensor, got " << dtype_name(logits.dtype()) << " "
                                                                           << shape_str(logits.shape()));
  Shape lead(logits.shape().begin(), logits.shape().end() - 1);
  EMBER_CHECK(targets.shape() == lead, "cross_entropy",
              "targets have shape " << shape_str(targets.shape()) << " but logits " << shape_str(logits.shape())
                                    << " need targets of shape " << shape_str(lead));
  EMBER_CHECK(targets.dtype() == kInt64, "cross_entropy",
              "targets must be int64, got " << dtype_name(targets.dtype()) << " of shape " << shape_str(targets.shape()));
  const int64_t C = logits.size(-1), N = numel_of(lead);
  Tensor tc = kernel::contiguous(targets);
  const int64_t* tgt = tc.data_ptr<int64_t>();
  int64_t counted = 0;
  for (int64_t n = 0; n < N; ++n) {
    if (tgt[n] == ignore_index) continue;
    ++counted;
    if (tgt[n] < 0 || tgt[n] >= C) {
      EMBER_FAIL("cross_entropy", "target " << tgt[n] << " at " << index_str(n, lead) << " is outside the classes [0, " << C
                                            << ") (logits " << shape_str(logits.shape()) << ")");
    }
  }
  Tensor x = kernel::contiguous(logits);
  Tensor lse = empty({N}, logits.dtype());  // log Σ exp(x) per row, saved for backward
  Tensor losses = empty({N}, logits.dtype());
  EMBER_DISPATCH_FLOAT(logits.dtype(), "cross_entropy", [&]<typename T>() {
    const T* px = x.data_ptr<T>();
    T *pe = lse.data_ptr<T>(), *pl = losses.data_ptr<T>();
    detail::parallel_for(N, std::max<int64_t>(1, detail::kGrain / std::max<int64_t>(C, 1)), [&](int64_t n0, int64_t n1) {
      std::vector<T> e(static_cast<size_t>(C));
      for (int64_t n = n0; n < n1; ++n) {
        const T* row = px + n * C;
        T mx = -std::numeric_limits<T>::infinity();
        for (int64_t c = 0; c < C; ++c) mx = std::max(mx, row[c]);
        detail::exp_shifted(row, mx, e.data(), C);
        double s = 0;
        for (int64_t c = 0; c < C; ++c) s += e[c];
        const T log_s = static_cast<T>(std::log(s));
        pe[n] = mx + log_s;
        // -log softmax[target] = log Σ exp(x - max) - (x_t - max)
        pl[n] = tgt[n] == ignore_index ? T(0) : log_s - (row[tgt[n]] - mx);
      }
    });
  });
  Tensor out;
  double scale = 1.0;
  if (reduction == Reduction::None) {
    out = kernel::reshape(losses, lead);
  } else {
    out = kernel::sum(losses, {}, false);
    if (reduction == Reduction::Mean) {
      scale = 1.0 / static_cast<double>(counted);  // 1/0 -> inf, and 0*inf = NaN: PyTorch's NaN for all-ignored
      out = kernel::binary_scalar(kernel::Binary::Mul, out, scale);
    }
  }
  if (needs_grad({logits}))
    record(out, std::make_shared<CrossEntropyBackward>(logits, lse, tc, reduction, ignore_index, scale), {logits});
  // ~4 operations per logit (max, subtract and exp, sum); logits read
  const double n = static_cast<double>(N * C), item = static_cast<double>(dtype_size(logits.dtype()));
  note_work(4 * n, n * item, static_cast<double>(N) * 2 * item);
  return out;
}

}  // namespace ember
