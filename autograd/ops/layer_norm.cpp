// layer_norm as one fused op: forward and backward are plain loops over rows
// of length D, instead of the ~10 elementwise ops and reductions (and their
// temporaries) that the composed formula would record. The composed version,
// (x - mean) / sqrt(var + eps) * w + b, is in the tests as the reference.
//
// Legend: N rows (all leading dims), D the normalized (last) dim.
#include <algorithm>
#include <cmath>
#include <vector>

#include "autograd/node.h"
#include "autograd/op_scope.h"
#include "autograd/ops.h"
#include "tensor/factory.h"
#include "tensor/hooks.h"
#include "tensor/kernels.h"
#include "tensor/parallel.h"

namespace ember {

// With x̂ = (x - μ) r and g' = g ⊙ w (per row of length D):
//   dx = r (g' - mean(g') - x̂ mean(g' ⊙ x̂)),   dw = Σ_rows g ⊙ x̂,   db = Σ_rows g
// It saves the input x itself (whose memory exists anyway), μ and r per row;
// x̂ is recomputed row by row. When backward records (create_graph), the same
// formula in ember ops, with μ and r recomputed from x so that they depend on it.
struct LayerNormBackward final : Node {
  EMBER_NODE_NAME(LayerNormBackward)
  SavedTensor x, mean, rstd, weight;
  double eps;
  LayerNormBackward(const Tensor& x_, const Tensor& m, const Tensor& r, const Tensor& w, double e)
      : x(x_), mean(m), rstd(r), weight(w), eps(e) {}
  std::vector<SavedRef> saved() override { return {{"x", &x}, {"mean", &mean}, {"rstd", &rstd}, {"weight", &weight}}; }
  std::vector<Tensor> apply(const Tensor& g_in) override {
    const Tensor X = x.get(*this), W = weight.get(*this);
    if (recording_backward()) {
      Tensor centered = X - ember::mean(X, {-1}, true);
      Tensor r = rsqrt(var(X, {-1}, /*correction=*/0, true) + eps);
      Tensor h = centered * r, gw = g_in * W;
      Tensor dx = r * (gw - ember::mean(gw, {-1}, true) - h * ember::mean(gw * h, {-1}, true));
      return {dx, sum_to(g_in * h, W.shape()), sum_to(g_in, W.shape())};
    }
    const Tensor M = mean.get(*this), R = rstd.get(*this);
    Tensor xc = kernel::contiguous(X), g = kernel::contiguous(g_in), wc = kernel::contiguous(W);
    const int64_t D = X.size(-1), N = D ? X.numel() / D : 0;
    Tensor dx = empty(X.shape(), X.dtype()), dw = empty({D}, X.dtype()), db = empty({D}, X.dtype());
    // dw and db are sums over rows: each block of 64 rows adds into its own
    // partial (in double), and the partials are added in block order, so the
    // bits do not depend on the threads, and x̂ is never stored.
    constexpr int64_t kRowBlock = 64;
    const int64_t blocks = (N + kRowBlock - 1) / kRowBlock;
    std::vector<double> part_w(static_cast<size_t>(blocks * D), 0.0), part_b(part_w.size(), 0.0);
    EMBER_DISPATCH_FLOAT(X.dtype(), "layer_norm backward", [&]<typename T>() {
      const T *px = xc.data_ptr<T>(), *pm = M.data_ptr<T>(), *pr = R.data_ptr<T>(), *pg = g.data_ptr<T>(),
              *pw = wc.data_ptr<T>();
      T* pdx = dx.data_ptr<T>();
      const int64_t grain = std::max<int64_t>(1, detail::kGrain / std::max<int64_t>(kRowBlock * D, 1));
      detail::parallel_for(blocks, grain, [&](int64_t b0, int64_t b1) {
        std::vector<T> h(static_cast<size_t>(D));
        for (int64_t b = b0; b < b1; ++b) {
          double *sw = part_w.data() + b * D, *sb = part_b.data() + b * D;
          for (int64_t n = b * kRowBlock; n < std::min(N, (b + 1) * kRowBlock); ++n) {
            const T *row = px + n * D, *gr = pg + n * D;
            double mean_g = 0, mean_gh = 0;
            for (int64_t d = 0; d < D; ++d) {
              h[d] = (row[d] - pm[n]) * pr[n];
              double gw = gr[d] * pw[d];
              mean_g += gw;
              mean_gh += gw * h[d];
            }
            mean_g /= static_cast<double>(D);
            mean_gh /= static_cast<double>(D);
            for (int64_t d = 0; d < D; ++d) {
              pdx[n * D + d] = static_cast<T>(pr[n] * (gr[d] * pw[d] - mean_g - h[d] * mean_gh));
              sw[d] += static_cast<double>(gr[d]) * h[d];
              sb[d] += gr[d];
            }
          }
        }
      });
      T *pdw = dw.data_ptr<T>(), *pdb = db.data_ptr<T>();
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
    // ~14 operations per element (x̂, the two row means, the formula, the two
    // sums); x and g read, dx written
    const double item = static_cast<double>(dtype_size(X.dtype())), n = static_cast<double>(X.numel());
    note_work(14 * n, 2 * n * item, n * item);
    return {dx, dw, db};
  }
};

// x:(N, D) rows (any leading dims), weight/bias:(D)
Tensor layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, double eps) {
  OpScope scope("layer_norm", x, weight, bias);
  const int64_t D = x.dim() ? x.size(-1) : 0;
  EMBER_CHECK(x.dim() >= 1 && weight.shape() == Shape{D} && bias.shape() == Shape{D}, "layer_norm",
              "input " << shape_str(x.shape()) << " needs weight and bias of shape (" << D << "), got "
                       << shape_str(weight.shape()) << " and " << shape_str(bias.shape()));
  EMBER_CHECK(x.dtype() == weight.dtype() && x.dtype() == bias.dtype() && x.is_floating_point(), "layer_norm",
              "dtypes must be one floating type: input " << dtype_name(x.dtype()) << ", weight "
                                                         << dtype_name(weight.dtype()) << ", bias " << dtype_name(bias.dtype()));
  Tensor xc = kernel::contiguous(x), wc = kernel::contiguous(weight), bc = kernel::contiguous(bias);
  const int64_t N = D ? x.numel() / D : 0;
  Tensor out = empty(x.shape(), x.dtype());
  Tensor mean_t = empty({N}, x.dtype());  // saved for backward: the mean of each row
  Tensor rstd = empty({N}, x.dtype());    // and 1 / sqrt(var + eps)
  EMBER_DISPATCH_FLOAT(x.dtype(), "layer_norm", [&]<typename T>() {
    const T *px = xc.data_ptr<T>(), *pw = wc.data_ptr<T>(), *pb = bc.data_ptr<T>();
    T *po = out.data_ptr<T>(), *pm = mean_t.data_ptr<T>(), *pr = rstd.data_ptr<T>();
    detail::parallel_for(N, std::max<int64_t>(1, detail::kGrain / std::max<int64_t>(D, 1)), [&](int64_t n0, int64_t n1) {
      for (int64_t n = n0; n < n1; ++n) {
        const T* row = px + n * D;
        double mean = 0, var = 0;
        for (int64_t d = 0; d < D; ++d) mean += row[d];
        mean /= static_cast<double>(D);
        for (int64_t d = 0; d < D; ++d) var += (row[d] - mean) * (row[d] - mean);
        var /= static_cast<double>(D);
        const T r = static_cast<T>(1.0 / std::sqrt(var + eps)), m = static_cast<T>(mean);
        pm[n] = m;
        pr[n] = r;
        for (int64_t d = 0; d < D; ++d) po[n * D + d] = (row[d] - m) * r * pw[d] + pb[d];
      }
    });
  });
  // ~8 operations per element (mean, variance, normalize, scale, shift); x read, out written
  const double item = static_cast<double>(dtype_size(x.dtype())), n = static_cast<double>(x.numel());
  note_work(8 * n, n * item, n * item);
  if (needs_grad({x, weight, bias}))
    record(out, std::make_shared<LayerNormBackward>(x, mean_t, rstd, weight, eps), {x, weight, bias});
  return out;
}

}  // namespace ember
