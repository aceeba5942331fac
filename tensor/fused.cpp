// Fused kernels: a forward and its backward side by side, each one pass over
// the rows instead of the chain of elementwise ops and reductions (and their
// temporaries) that the composed formula would run. Each forward returns, beside
// its result, the few numbers per row that its backward needs, so that the
// backward recomputes the rest from the inputs instead of storing it.
// autograd/ops/layer_norm.cpp and cross_entropy.cpp hold the rules that call them.
//
// Legend:
//   N  rows: every leading dim flattened (B*T positions of a sequence batch)
//   D  the normalized (last) dim of layer_norm
//   C  the classes (last dim) of cross_entropy's logits
//
// Sums run in double, each row in a fixed order; a sum over rows is split into
// fixed blocks of rows whose partials are added in block order, so the bits do
// not depend on the thread count.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "base/hooks.h"
#include "tensor/factory.h"
#include "tensor/elementwise.h"
#include "tensor/fast_math.h"
#include "tensor/kernels.h"
#include "tensor/machine/at_each_width.h"
#include "tensor/parallel.h"

namespace ember::kernel {

namespace {
// Rows per piece of a parallel_for over rows of `row_len` elements: about
// kGrain elements a piece.
int64_t grain_rows(int64_t row_len) { return std::max<int64_t>(1, detail::kGrain / std::max<int64_t>(row_len, 1)); }

// What a kernel over `n` elements of `dt` reports: flops and bytes per element
// (read, written) times n.
void note_per_element(DType dt, int64_t n, double flops, double reads, double writes) {
  const double item = static_cast<double>(dtype_size(dt)), count = static_cast<double>(n);
  note_work(flops * count, reads * count * item, writes * count * item);
}

// How many targets are not ignore_index; each of those must be a class in [0, C).
int64_t count_targets(const Tensor& targets, int64_t C, int64_t ignore_index, const Tensor& logits, const char* op) {
  const std::vector<int64_t> tgt = targets.to_vector<int64_t>();
  int64_t counted = 0;
  for (size_t n = 0; n < tgt.size(); ++n) {
    if (tgt[n] == ignore_index) continue;
    ++counted;
    EMBER_CHECK(tgt[n] >= 0 && tgt[n] < C, op,
                "target " << tgt[n] << " at " << index_str(static_cast<int64_t>(n), targets.shape())
                          << " is outside the classes [0, " << C << ") (logits " << shape_str(logits.shape()) << ")");
  }
  return counted;
}

// A row's sum in double, vectorizable and the same at every width: kLanes
// partial sums, lane j taking the elements d = j mod kLanes in order, then
// added pairwise in a fixed order. (One running sum is a chain of dependent
// additions that no compiler may reorder; this order is the code's, not the
// vector width's.)
constexpr int64_t kLanes = 8;
template <typename F>
[[gnu::always_inline]] inline double lane_sum(int64_t D, const F& f) {
  double acc[kLanes] = {};
  int64_t d = 0;
  for (; d + kLanes <= D; d += kLanes)
    for (int64_t j = 0; j < kLanes; ++j) acc[j] += f(d + j);
  for (int64_t j = 0; d + j < D; ++j) acc[j] += f(d + j);
  return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

// The rows of layer_norm's forward, compiled for each SIMD width and run at
// vec_math's (tensor/machine/at_each_width.h).
template <typename T>
struct LnForwardRows {
  const T *x, *w, *b;
  T *out, *mean, *rstd;
  int64_t D;
  double eps;
};
struct LnForwardBlocks {
  template <typename T>
  [[gnu::always_inline]] static void run(const LnForwardRows<T>* rows, int64_t n0, int64_t n1) {
    const LnForwardRows<T>& a = *rows;
    const int64_t D = a.D;
    for (int64_t n = n0; n < n1; ++n) {
      const T* row = a.x + n * D;
      const double mean = lane_sum(D, [&](int64_t d) EMBER_INLINE { return static_cast<double>(row[d]); }) /
                          static_cast<double>(D);
      const double var = lane_sum(D, [&](int64_t d) EMBER_INLINE {
                           const double c = row[d] - mean;
                           return c * c;
                         }) /
                         static_cast<double>(D);
      const T r = static_cast<T>(1.0 / std::sqrt(var + a.eps)), m = static_cast<T>(mean);
      a.mean[n] = m;
      a.rstd[n] = r;
      T* o = a.out + n * D;
      for (int64_t d = 0; d < D; ++d) o[d] = (row[d] - m) * r * a.w[d] + a.b[d];
    }
  }
};

// The rows of layer_norm's backward, block by block (below), compiled for
// each SIMD width and run at vec_math's (tensor/machine/at_each_width.h: the
// same bits at every width). The per-row sums stay serial; the loops along a
// row are what the wider vectors speed up.
constexpr int64_t kLnRowBlock = 64;
template <typename T>
struct LnBackwardRows {
  const T *x, *mean, *rstd, *g, *w;
  T* dx;
  double *part_w, *part_b;  // one partial dweight, dbias per block of rows
  int64_t N, D;
};
struct LnBackwardBlocks {
  template <typename T>
  [[gnu::always_inline]] static void run(const LnBackwardRows<T>* rows, int64_t b0, int64_t b1) {
    const LnBackwardRows<T>& a = *rows;
    const int64_t D = a.D;
    std::vector<T> h(static_cast<size_t>(D));  // x̂ of one row
    for (int64_t b = b0; b < b1; ++b) {
      double *sw = a.part_w + b * D, *sb = a.part_b + b * D;
      for (int64_t n = b * kLnRowBlock; n < std::min(a.N, (b + 1) * kLnRowBlock); ++n) {
        const T *row = a.x + n * D, *gr = a.g + n * D;
        const T m = a.mean[n], r = a.rstd[n];
        for (int64_t d = 0; d < D; ++d) h[d] = (row[d] - m) * r;
        const double mean_g =
            lane_sum(D, [&](int64_t d) EMBER_INLINE { return static_cast<double>(gr[d] * a.w[d]); }) /
            static_cast<double>(D);
        const double mean_gh = lane_sum(D, [&](int64_t d) EMBER_INLINE {
                                 return static_cast<double>(gr[d] * a.w[d]) * static_cast<double>(h[d]);
                               }) /
                               static_cast<double>(D);
        for (int64_t d = 0; d < D; ++d) {
          a.dx[n * D + d] = static_cast<T>(r * (gr[d] * a.w[d] - mean_g - h[d] * mean_gh));
          sw[d] += static_cast<double>(gr[d]) * h[d];
          sb[d] += gr[d];
        }
      }
    }
  }
};
}  // namespace

// ---- layer_norm ----
// x:(N, D) weight, bias:(D) -> out:(N, D) mean, rstd:(N)
//   out = (x - mean) * rstd * weight + bias,  rstd = 1 / sqrt(var + eps)  (biased var)
LayerNormForward layer_norm_forward(const Tensor& x, const Tensor& weight, const Tensor& bias, double eps) {
  const int64_t D = x.dim() ? x.size(-1) : 0;
  EMBER_CHECK(x.dim() >= 1 && weight.shape() == Shape{D} && bias.shape() == Shape{D}, "layer_norm",
              "input " << shape_str(x.shape()) << " needs weight and bias of shape (" << D << "), got "
                       << shape_str(weight.shape()) << " and " << shape_str(bias.shape()));
  EMBER_CHECK(eps >= 0 && std::isfinite(eps), "layer_norm",
              "eps must be a finite number >= 0, got " << eps << " (input " << shape_str(x.shape()) << ")");
  EMBER_CHECK(x.dtype() == weight.dtype() && x.dtype() == bias.dtype() && x.is_floating_point(), "layer_norm",
              "dtypes must be one floating type: input " << dtype_name(x.dtype()) << ", weight "
                                                         << dtype_name(weight.dtype()) << ", bias " << dtype_name(bias.dtype()));
  const Tensor xc = contiguous(x), wc = contiguous(weight), bc = contiguous(bias);
  const int64_t N = D ? x.numel() / D : 0;
  LayerNormForward f{empty(x.shape(), x.dtype()), empty({N}, x.dtype()), empty({N}, x.dtype())};
  EMBER_DISPATCH_FLOAT(x.dtype(), "layer_norm", [&]<typename T>() {
    const T *px = xc.data_ptr<T>(), *pw = wc.data_ptr<T>(), *pb = bc.data_ptr<T>();
    T *po = f.out.data_ptr<T>(), *pm = f.mean.data_ptr<T>(), *pr = f.rstd.data_ptr<T>();
    const LnForwardRows<T> rows{px, pw, pb, po, pm, pr, D, eps};
    detail::parallel_for(N, grain_rows(D), [&](int64_t n0, int64_t n1) {
      detail::AtEachWidth<LnForwardBlocks>::run<T>(&rows, n0, n1);
    });
  });
  note_per_element(x.dtype(), x.numel(), 8, 1, 1);  // mean, variance, normalize, scale, shift; x read, out written
  return f;
}

// With x̂ = (x - mean) rstd and g' = grad_out ⊙ weight, per row:
//   dx = rstd (g' - mean(g') - x̂ mean(g' ⊙ x̂)),   dweight = Σ_rows grad_out ⊙ x̂,   dbias = Σ_rows grad_out
// x̂ is recomputed row by row, never stored. dweight and dbias are sums over
// rows: each block of kLnRowBlock rows adds into its own partial (in double),
// and the partials are added in block order.
LayerNormGrads layer_norm_backward(const Tensor& x, const Tensor& weight, const Tensor& mean, const Tensor& rstd,
                                   const Tensor& grad_out) {
  const int64_t D = x.dim() ? x.size(-1) : 0, N = D ? x.numel() / D : 0;
  const char* op = "layer_norm backward";
  EMBER_CHECK(grad_out.shape() == x.shape() && weight.shape() == Shape{D} && mean.shape() == Shape{N} &&
                  rstd.shape() == Shape{N},
              op, "input " << shape_str(x.shape()) << " needs a gradient of its shape, weight (" << D << ") and mean, rstd ("
                           << N << "), got gradient " << shape_str(grad_out.shape()) << ", weight "
                           << shape_str(weight.shape()) << ", mean " << shape_str(mean.shape()) << ", rstd "
                           << shape_str(rstd.shape()));
  for (const Tensor* t : {&grad_out, &weight, &mean, &rstd})
    EMBER_CHECK(t->dtype() == x.dtype(), op,
                "every tensor must be " << dtype_name(x.dtype()) << " like the input " << shape_str(x.shape()) << ", got "
                                        << dtype_name(t->dtype()) << " " << shape_str(t->shape()));
  const Tensor xc = contiguous(x), g = contiguous(grad_out), wc = contiguous(weight);
  const Tensor mc = contiguous(mean), rc = contiguous(rstd);
  LayerNormGrads grads{empty(x.shape(), x.dtype()), empty({D}, x.dtype()), empty({D}, x.dtype())};
  const int64_t blocks = (N + kLnRowBlock - 1) / kLnRowBlock;
  // From ember's caching allocator: a std::vector this size would come from
  // (and go back to) the system at every call, its pages faulted in again.
  const Tensor parts = zeros({2, blocks, D}, kFloat64);
  double* part_w = parts.data_ptr<double>();
  double* part_b = part_w + blocks * D;
  EMBER_DISPATCH_FLOAT(x.dtype(), op, [&]<typename T>() {
    const LnBackwardRows<T> rows{xc.data_ptr<T>(), mc.data_ptr<T>(), rc.data_ptr<T>(), g.data_ptr<T>(), wc.data_ptr<T>(),
                                 grads.x.data_ptr<T>(), part_w, part_b, N, D};
    detail::parallel_for(blocks, grain_rows(kLnRowBlock * D), [&](int64_t b0, int64_t b1) {
      detail::AtEachWidth<LnBackwardBlocks>::run<T>(&rows, b0, b1);
    });
    T *pdw = grads.weight.data_ptr<T>(), *pdb = grads.bias.data_ptr<T>();
    for (int64_t d = 0; d < D; ++d) {
      double w_sum = 0, b_sum = 0;
      for (int64_t b = 0; b < blocks; ++b) {
        w_sum += part_w[b * D + d];
        b_sum += part_b[b * D + d];
      }
      pdw[d] = static_cast<T>(w_sum);
      pdb[d] = static_cast<T>(b_sum);
    }
  });
  note_per_element(x.dtype(), x.numel(), 14, 2, 1);  // x̂, the two row means, the formula, the two sums; x and g read
  return grads;
}

// ---- cross_entropy ----
// logits:(N, C) targets:(N) -> losses, lse:(N)
//   lse_n = log Σ_c exp(logits_nc),   loss_n = lse_n - logits_n,target_n  (0 where target_n is ignore_index)
// computed as max + log Σ exp(x - max), exact at +-1e4 logits.
CrossEntropyForward cross_entropy_forward(const Tensor& logits, const Tensor& targets, int64_t ignore_index) {
  EMBER_CHECK(logits.dim() >= 2 && logits.is_floating_point(), "cross_entropy",
              "logits must be a floating (N, C) or (B, T, C) tensor, got " << dtype_name(logits.dtype()) << " "
                                                                           << shape_str(logits.shape()));
  const Shape lead(logits.shape().begin(), logits.shape().end() - 1);
  EMBER_CHECK(targets.shape() == lead, "cross_entropy",
              "targets have shape " << shape_str(targets.shape()) << " but logits " << shape_str(logits.shape())
                                    << " need targets of shape " << shape_str(lead));
  EMBER_CHECK(targets.dtype() == kInt64, "cross_entropy",
              "targets must be int64, got " << dtype_name(targets.dtype()) << " of shape " << shape_str(targets.shape()));
  const int64_t C = logits.size(-1), N = numel_of(lead);
  const int64_t counted = count_targets(targets, C, ignore_index, logits, "cross_entropy");
  const Tensor x = contiguous(logits), tc = contiguous(targets);
  CrossEntropyForward f{empty({N}, logits.dtype()), empty({N}, logits.dtype()), counted};
  EMBER_DISPATCH_FLOAT(logits.dtype(), "cross_entropy", [&]<typename T>() {
    const T* px = x.data_ptr<T>();
    const int64_t* tgt = tc.data_ptr<int64_t>();
    T *pl = f.losses.data_ptr<T>(), *pe = f.lse.data_ptr<T>();
    detail::parallel_for(N, grain_rows(C), [&](int64_t n0, int64_t n1) {
      std::vector<T> e(static_cast<size_t>(C));
      for (int64_t n = n0; n < n1; ++n) {
        const T* row = px + n * C;
        T mx = -std::numeric_limits<T>::infinity();
        for (int64_t c = 0; c < C; ++c) mx = std::max(mx, row[c]);
        const T shift = mx == -std::numeric_limits<T>::infinity() ? T(0) : mx;  // all -inf: no inf - inf
        detail::exp_shifted(row, shift, e.data(), C);
        double s = 0;
        for (int64_t c = 0; c < C; ++c) s += e[c];
        const T log_s = static_cast<T>(std::log(s));
        if (s == 0) {
          // Every logit -inf: softmax's rule (an all -inf row weighs every
          // class 0, log_softmax -inf) makes the target's probability 0, so
          // the loss is +inf, as composed::cross_entropy gives; lse = -inf.
          pe[n] = -std::numeric_limits<T>::infinity();
          pl[n] = tgt[n] == ignore_index ? T(0) : std::numeric_limits<T>::infinity();
          continue;
        }
        pe[n] = shift + log_s;
        // -log softmax[target] = log Σ exp(x - max) - (x_t - max)
        pl[n] = tgt[n] == ignore_index ? T(0) : log_s - (row[tgt[n]] - shift);
      }
    });
  });
  // ~4 operations per logit (max, subtract and exp, sum); logits read, losses and lse written
  const double item = static_cast<double>(dtype_size(logits.dtype()));
  note_work(4 * static_cast<double>(N * C), static_cast<double>(N * C) * item, static_cast<double>(N) * 2 * item);
  return f;
}

// d loss_n / d logits_n = softmax_n - one_hot(target_n), with softmax_n =
// exp(logits_n - lse_n) recomputed (no (N, C) probabilities were kept); times
// g_n = scale * grad_losses (its n-th value, or its one value for every row);
// 0 for ignored rows.
Tensor cross_entropy_backward(const Tensor& logits, const Tensor& targets, const Tensor& lse, const Tensor& grad_losses,
                              double scale, int64_t ignore_index) {
  const int64_t C = logits.dim() ? logits.size(-1) : 0, N = lse.numel();
  const char* op = "cross_entropy backward";
  EMBER_CHECK(logits.dim() >= 2 && logits.numel() == N * C && targets.numel() == N && lse.shape() == Shape{N} &&
                  (grad_losses.numel() == N || grad_losses.numel() == 1),
              op, "logits " << shape_str(logits.shape()) << " need " << N << " targets, lse (" << N
                            << ") and a gradient of 1 or " << N << " values, got targets " << shape_str(targets.shape())
                            << ", lse " << shape_str(lse.shape()) << ", gradient " << shape_str(grad_losses.shape()));
  EMBER_CHECK(targets.dtype() == kInt64 && lse.dtype() == logits.dtype() && grad_losses.dtype() == logits.dtype(), op,
              "targets must be int64 and lse and the gradient " << dtype_name(logits.dtype()) << " like the logits, got "
                                                                << dtype_name(targets.dtype()) << ", " << dtype_name(lse.dtype())
                                                                << " and " << dtype_name(grad_losses.dtype()));
  count_targets(targets, C, ignore_index, logits, op);  // each one is written to: checked again
  const Tensor x = contiguous(logits), tc = contiguous(targets), lc = contiguous(lse), g = contiguous(grad_losses);
  const bool shared = grad_losses.numel() == 1;
  Tensor grad = empty(logits.shape(), logits.dtype());
  EMBER_DISPATCH_FLOAT(logits.dtype(), op, [&]<typename T>() {
    const T *px = x.data_ptr<T>(), *pl = lc.data_ptr<T>(), *pg = g.data_ptr<T>();
    const int64_t* tgt = tc.data_ptr<int64_t>();
    T* out = grad.data_ptr<T>();
    detail::parallel_for(N, grain_rows(C), [&](int64_t n0, int64_t n1) {
      for (int64_t n = n0; n < n1; ++n) {
        const T gn = tgt[n] == ignore_index ? T(0) : static_cast<T>(pg[shared ? 0 : n] * scale);
        T* o = out + n * C;
        if (pl[n] == -std::numeric_limits<T>::infinity()) std::fill(o, o + C, T(0));  // all -inf: weighs 0
        else detail::exp_shifted(px + n * C, pl[n], o, C);                             // softmax
        for (int64_t c = 0; c < C; ++c) o[c] *= gn;
        if (tgt[n] != ignore_index) o[tgt[n]] -= gn;
      }
    });
  });
  note_per_element(logits.dtype(), grad.numel(), 4, 1, 1);  // (exp(x - lse) - onehot) * g: logits read, gradient written
  return grad;
}

}  // namespace ember::kernel
