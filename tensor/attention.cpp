// Tiled attention: softmax(scale q kᵀ) v without ever holding the (Tq, Tk)
// weights, forward and backward, after the tiling and online-softmax idea of
// FlashAttention (Dao et al., 2022), on the CPU.
//
// Legend: N matrices (all leading dims flattened: B·h), Tq queries, Tk keys,
//         d head dim (q and k), dv value dim, Br query rows per tile,
//         Bc keys per tile, s = scale.
//
// Forward, for a tile of Br query rows: walk the keys Bc at a time; for each
// tile S = s Q_i K_jᵀ (Br × Bc, in a scratch buffer), keep per row the
// running max m and the running sum l of exp(S - m), and the unnormalized
// output acc = Σ_j exp(S - m) V_j. When a new tile raises a row's max from m
// to m', what was summed so far is multiplied by exp(m - m') first: the
// result is exact, not an approximation. At the end, out = acc / l, and
// lse = m + log l (the log of the softmax's denominator) is all a row keeps.
//
// Backward recomputes each tile of weights from lse instead of reading it:
//   P = exp(S - lse)                     (Br × Bc)
//   dV_j += Pᵀ dO_i
//   dP = dO_i V_jᵀ,  dS = P ⊙ (dP - δ)   δ = rowsum(dO ⊙ O), one per query row
//   dQ_i += s dS K_j,  dK_j += s dSᵀ Q_i
// (dS is the softmax backward: δ equals Σ_k P dP over the row.)
//
// A row whose scores are all -inf (every key masked, or q kᵀ overflowing
// to -inf) weighs no key: its output is 0, its lse -inf, and its gradient 0,
// the rule of scaled_softmax (an all -inf softmax row is 0, not NaN). A NaN
// score makes its row NaN, as there.
//
// Causal (query i sees keys j <= i, as scaled_softmax's mask): a key tile
// that starts after a row tile's last query is skipped, which halves the work;
// inside the diagonal tile the future keys are set to weight 0.
//
// The scratch is two Br × Bc buffers per thread (std::vector: workspace, not
// tensor memory). Forward splits the work by (matrix, row tile), backward by
// matrix; each piece runs on one thread in a fixed order, so the bits do not
// depend on the thread count.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "base/hooks.h"
#include "tensor/blas_operand.h"
#include "tensor/factory.h"
#include "tensor/fast_math.h"
#include "tensor/kernels.h"
#include "tensor/parallel.h"

namespace ember::kernel {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr int64_t kRows = 128;  // Br
constexpr int64_t kCols = 128;  // Bc

// N (T, c) matrices with unit column stride, each at its own offset: how
// BLAS reads q, k, v (and the gradient) in place, including the (B, h, T, d)
// head views of a (B, T, D) projection, whose row stride is D.
inline int64_t stride_at(const Tensor& x, int64_t d) { return x.stride()[static_cast<size_t>(d < 0 ? d + x.dim() : d)]; }

struct Mats {
  Tensor t;  // what is read: the tensor itself, or a contiguous copy
  std::vector<int64_t> base;
  int64_t ld = 1;
};

Mats as_mats(const Tensor& x) {
  Mats m;
  const int64_t T = x.size(-2), c = x.size(-1);
  BlasOperand op{false, 1};
  // matmul's rule, row-major case only: the tiles pass each operand as it is
  // or with BLAS's transpose flag, whichever the formula asks for
  const bool as_is = blas_layout(T, c, stride_at(x, -2), stride_at(x, -1), op) && !op.trans;
  m.t = as_is ? x : contiguous(x);
  if (!as_is) blas_layout(T, c, stride_at(m.t, -2), stride_at(m.t, -1), op);
  m.ld = op.ld;
  const int64_t lead = m.t.dim() - 2;
  int64_t N = 1;
  for (int64_t i = 0; i < lead; ++i) N *= m.t.size(i);
  m.base.resize(static_cast<size_t>(N));
  for (int64_t n = 0; n < N; ++n) {
    int64_t rest = n, off = m.t.storage_offset();
    for (int64_t i = lead - 1; i >= 0; --i) {
      off += (rest % m.t.size(i)) * stride_at(m.t, i);
      rest /= m.t.size(i);
    }
    m.base[static_cast<size_t>(n)] = off;
  }
  return m;
}

// An output shaped like x but with last dim c: with x's own layout when x is
// dense (so that the (B, h, T, d) head view of a (B, T, D) buffer gives an
// output whose heads merge back into (B, T, D) as a view, without a copy),
// row-major otherwise.
Tensor empty_like_layout(const Tensor& x, int64_t c) {
  Shape shape = x.shape();
  shape.back() = c;
  const int64_t nd = x.dim();
  std::vector<int64_t> order(static_cast<size_t>(nd));
  for (int64_t i = 0; i < nd; ++i) order[static_cast<size_t>(i)] = i;
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return stride_at(x, a) > stride_at(x, b); });
  bool dense = c == x.size(-1) && order.back() == nd - 1;
  int64_t expect = 1;
  for (int64_t i = nd - 1; dense && i >= 0; --i) {
    const int64_t d = order[static_cast<size_t>(i)];
    if (x.size(d) != 1 && stride_at(x, d) != expect) dense = false;
    expect *= x.size(d);
  }
  if (!dense || x.numel() == 0) return empty(shape, x.dtype());
  Tensor flat = empty({x.numel()}, x.dtype());
  return as_strided(flat, shape, x.stride(), 0);
}

// Zeros shaped like x, in x's layout where BLAS can write that in place
// (empty_like_layout), row-major otherwise.
Tensor zeros_in_layout(const Tensor& x) {
  Tensor t = empty_like_layout(x, x.size(-1));
  if (t.numel() > 0 && !as_mats(t).t.is_same(t)) t = empty(x.shape(), x.dtype());
  fill_(t, 0.0);
  return t;
}

// C (m, n) = alpha op(a) op(b) + beta C for row-major a, b (op: transposed
// when ta / tb); with k = 0 (head dim 0) C = beta C, which BLAS may refuse.
template <typename T>
void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t lda, const T* b,
          int64_t ldb, T beta, T* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) c[i * ldc + j] = beta == T(0) ? T(0) : beta * c[i * ldc + j];
    return;
  }
  blas_gemm<T>({ta, lda}, {tb, ldb}, m, n, k, alpha, a, b, beta, c, ldc);
}

// max and sum of a row in 8 independent lanes, combined in a fixed order:
// a single running max or sum waits for the previous one at every element
// (a chain as long as the row); lanes let the compiler use vector registers,
// and the bits stay the same on every run.
template <typename T>
T row_max(const T* x, int64_t n) {
  T lane[8];
  for (int j = 0; j < 8; ++j) lane[j] = -std::numeric_limits<T>::infinity();
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int j = 0; j < 8; ++j) lane[j] = x[i + j] > lane[j] ? x[i + j] : lane[j];
  for (; i < n; ++i) lane[0] = x[i] > lane[0] ? x[i] : lane[0];
  T m = lane[0];
  for (int j = 1; j < 8; ++j) m = lane[j] > m ? lane[j] : m;
  return m;
}
template <typename T>
double row_sum(const T* x, int64_t n) {
  T lane[8] = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int j = 0; j < 8; ++j) lane[j] += x[i + j];
  double s = 0;
  for (; i < n; ++i) s += x[i];
  for (int j = 0; j < 8; ++j) s += lane[j];
  return s;
}

// The keys query row qi may see in the key tile [c0, c1): the first `valid`.
inline int64_t visible(bool causal, int64_t qi, int64_t c0, int64_t c1) {
  if (!causal) return c1 - c0;
  return std::clamp<int64_t>(qi - c0 + 1, 0, c1 - c0);
}

// The key tiles a row tile [r0, r1) visits: all, or (causal) those starting
// at or before its last query.
inline int64_t key_end(bool causal, int64_t r1, int64_t Tk) { return causal ? std::min(Tk, r1) : Tk; }

void check_operands(const Tensor& q, const Tensor& k, const Tensor& v, double scale, const char* op) {
  EMBER_CHECK(q.dim() >= 2 && k.dim() >= 2 && v.dim() >= 2, op,
              "q, k, v need shape (..., T, d), got " << shape_str(q.shape()) << ", " << shape_str(k.shape()) << ", "
                                                     << shape_str(v.shape()));
  EMBER_CHECK(q.dim() == k.dim() && k.dim() == v.dim() &&
                  std::equal(q.shape().begin(), q.shape().end() - 2, k.shape().begin()) &&
                  std::equal(k.shape().begin(), k.shape().end() - 2, v.shape().begin()),
              op, "q " << shape_str(q.shape()) << ", k " << shape_str(k.shape()) << " and v " << shape_str(v.shape())
                       << " must have the same leading dims (no broadcasting)");
  EMBER_CHECK(q.size(-1) == k.size(-1) && k.size(-2) == v.size(-2), op,
              "q " << shape_str(q.shape()) << " and k " << shape_str(k.shape()) << " must share d, and k and v "
                   << shape_str(v.shape()) << " must share Tk");
  EMBER_CHECK(q.dtype() == k.dtype() && k.dtype() == v.dtype() && is_floating(q.dtype()), op,
              "q, k, v must share one floating dtype, got " << dtype_name(q.dtype()) << ", " << dtype_name(k.dtype())
                                                            << ", " << dtype_name(v.dtype()));
  EMBER_CHECK(std::isfinite(scale) && scale > 0, op, "scale must be finite and positive, got " << scale);
}

// Work per matrix (multiply-adds of the tiles visited), for the thread grain:
// with an offset (a cache), every query sees the first `offset` keys whole.
double tile_flops(int64_t Tq, int64_t Tk, int64_t d, int64_t dv, bool causal, int64_t offset = 0) {
  const double pairs = causal ? double(Tq) * double(std::min(Tk, offset)) +
                                    0.5 * double(Tq) * double(std::min(Tq, std::max<int64_t>(Tk - offset, 0)))
                              : double(Tq) * double(Tk);
  return 2.0 * pairs * double(d + dv);
}

int64_t grain_for(double flops_per_item) {
  const double target = double(1 << 21);  // as matmul's: below this, one thread
  return std::max<int64_t>(1, static_cast<int64_t>(target / std::max(flops_per_item, 1.0)));
}

}  // namespace

TiledAttention tiled_attention_forward(const Tensor& q, const Tensor& k, const Tensor& v, double scale, bool causal,
                                       int64_t offset) {
  const char* op = "tiled_attention";
  check_operands(q, k, v, scale, op);
  EMBER_CHECK(offset >= 0, op, "the queries' offset must be >= 0, got " << offset << " for q " << shape_str(q.shape()));
  const int64_t Tq = q.size(-2), Tk = k.size(-2), d = q.size(-1), dv = v.size(-1);
  Tensor out = empty_like_layout(q, dv);
  Shape lse_shape(q.shape().begin(), q.shape().end() - 1);
  Tensor lse = empty(lse_shape, q.dtype());
  if (out.numel() == 0) return {out, full(lse_shape, -std::numeric_limits<double>::infinity(), q.dtype())};
  Mats mq = as_mats(q), mk = as_mats(k), mv = as_mats(v), mo = as_mats(out);
  if (!mo.t.is_same(out)) {  // a layout BLAS cannot write in place: row-major instead
    out = empty(out.shape(), q.dtype());
    mo = as_mats(out);
  }
  const int64_t N = static_cast<int64_t>(mq.base.size()), tiles = (Tq + kRows - 1) / kRows;
  EMBER_DISPATCH_FLOAT(q.dtype(), op, [&]<typename T>() {
    const T *pq = mq.t.data_ptr<T>() - mq.t.storage_offset(), *pk = mk.t.data_ptr<T>() - mk.t.storage_offset(),
            *pv = mv.t.data_ptr<T>() - mv.t.storage_offset();
    T* po = out.data_ptr<T>() - out.storage_offset();
    T* pl = lse.data_ptr<T>();
    const T s = static_cast<T>(scale), ninf = -std::numeric_limits<T>::infinity();
    const double per_tile = tile_flops(std::min(Tq, kRows), Tk, d, dv, causal, offset);
    detail::parallel_for(N * tiles, grain_for(per_tile), [&](int64_t t0, int64_t t1) {
      std::vector<T> S(static_cast<size_t>(kRows * kCols)), acc(static_cast<size_t>(kRows * dv));
      std::vector<double> m(kRows), l(kRows);
      for (int64_t task = t0; task < t1; ++task) {
        const int64_t n = task / tiles, r0 = (task % tiles) * kRows, r1 = std::min(Tq, r0 + kRows), R = r1 - r0;
        const T* Q = pq + mq.base[n] + r0 * mq.ld;
        std::fill(m.begin(), m.end(), -std::numeric_limits<double>::infinity());
        std::fill(l.begin(), l.end(), 0.0);
        std::fill(acc.begin(), acc.end(), T(0));
        for (int64_t c0 = 0; c0 < key_end(causal, offset + r1, Tk); c0 += kCols) {
          const int64_t c1 = std::min(Tk, c0 + kCols), C = c1 - c0;
          gemm<T>(false, true, R, C, d, s, Q, mq.ld, pk + mk.base[n] + c0 * mk.ld, mk.ld, T(0), S.data(), kCols);
          for (int64_t r = 0; r < R; ++r) {
            T* row = S.data() + r * kCols;
            const int64_t valid = visible(causal, offset + r0 + r, c0, c1);
            std::fill(row + valid, row + C, T(0));
            if (valid == 0) continue;
            const double m_new = std::max(m[r], static_cast<double>(row_max(row, valid)));
            // While every score so far is -inf the shift is 0, not -inf (which
            // would give -inf - -inf = NaN): such a score has weight exp(-inf)
            // = 0, as in scaled_softmax, and a NaN score stays NaN.
            detail::exp_shifted(row, m_new == -kInf ? T(0) : static_cast<T>(m_new), row, valid);
            const double sum = row_sum(row, valid);
            // 0 for the first tile with a finite score (m = -inf), 1 while the max stays
            const double corr = m_new == m[r] ? 1.0 : std::exp(m[r] - m_new);
            if (corr != 1.0) {
              T* a = acc.data() + r * dv;
              for (int64_t e = 0; e < dv; ++e) a[e] = static_cast<T>(a[e] * corr);
            }
            l[r] = l[r] * corr + sum;
            m[r] = m_new;
          }
          gemm<T>(false, false, R, dv, C, T(1), S.data(), kCols, pv + mv.base[n] + c0 * mv.ld, mv.ld, T(1), acc.data(),
                  dv);
        }
        for (int64_t r = 0; r < R; ++r) {
          T* o = po + mo.base[n] + (r0 + r) * mo.ld;
          const T* a = acc.data() + r * dv;
          if (l[r] == 0) {  // no key (Tk = 0), or every score -inf: output 0, as scaled_softmax gives weight 0
            std::fill(o, o + dv, T(0));
            pl[n * Tq + r0 + r] = ninf;
            continue;
          }
          const T inv = static_cast<T>(1.0 / l[r]);
          for (int64_t e = 0; e < dv; ++e) o[e] = a[e] * inv;
          pl[n * Tq + r0 + r] = static_cast<T>(m[r] + std::log(l[r]));
        }
      }
    });
  });
  const double item = double(dtype_size(q.dtype()));
  note_work(double(N) * tile_flops(Tq, Tk, d, dv, causal, offset), item * double(q.numel() + k.numel() + v.numel()),
            item * double(out.numel() + lse.numel()));
  return {out, lse};
}

TiledAttentionGrads tiled_attention_backward(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out,
                                             const Tensor& lse, const Tensor& g, double scale, bool causal) {
  const char* op = "tiled_attention backward";
  check_operands(q, k, v, scale, op);
  EMBER_CHECK(g.shape() == out.shape() && g.dtype() == out.dtype(), op,
              "gradient " << dtype_name(g.dtype()) << " " << shape_str(g.shape()) << " must match the output "
                          << dtype_name(out.dtype()) << " " << shape_str(out.shape()));
  const int64_t Tq = q.size(-2), Tk = k.size(-2), d = q.size(-1), dv = v.size(-1);
  // Each gradient in its input's layout (as the forward's output is in q's):
  // the gradient of a head view of a (B, T, D) projection then merges back
  // into (B, T, D) as a view, not a copy.
  Tensor dq = zeros_in_layout(q), dk = zeros_in_layout(k), dvv = zeros_in_layout(v);
  Shape out_shape = q.shape(), lse_shape(q.shape().begin(), q.shape().end() - 1);
  out_shape.back() = dv;
  EMBER_CHECK(out.shape() == out_shape && out.dtype() == q.dtype() && lse.shape() == lse_shape &&
                  lse.dtype() == q.dtype(),
              op, "the output " << dtype_name(out.dtype()) << " " << shape_str(out.shape()) << " and lse "
                                << dtype_name(lse.dtype()) << " " << shape_str(lse.shape()) << " must be "
                                << dtype_name(q.dtype()) << " " << shape_str(out_shape) << " and "
                                << shape_str(lse_shape) << " for q " << shape_str(q.shape()) << " and v "
                                << shape_str(v.shape()));
  if (Tq == 0 || Tk == 0 || out.numel() == 0) return {dq, dk, dvv};  // d = 0 still averages v
  Mats mq = as_mats(q), mk = as_mats(k), mv = as_mats(v), mo = as_mats(out), mg = as_mats(g);
  const Mats mdq = as_mats(dq), mdk = as_mats(dk), mdv = as_mats(dvv);  // themselves, not copies (zeros_in_layout)
  Tensor lse_c = contiguous(lse);
  const int64_t N = static_cast<int64_t>(mq.base.size());
  EMBER_DISPATCH_FLOAT(q.dtype(), op, [&]<typename T>() {
    auto at = [](const Mats& m) { return m.t.data_ptr<T>() - m.t.storage_offset(); };
    const T *pq = at(mq), *pk = at(mk), *pv = at(mv), *po = at(mo), *pg = at(mg);
    const T* pl = lse_c.data_ptr<T>();
    auto at_out = [](const Mats& m) { return const_cast<T*>(m.t.data_ptr<T>()) - m.t.storage_offset(); };
    T *pdq = at_out(mdq), *pdk = at_out(mdk), *pdv = at_out(mdv);
    const T s = static_cast<T>(scale);
    detail::parallel_for(N, grain_for(2.5 * tile_flops(Tq, Tk, d, dv, causal)), [&](int64_t n0, int64_t n1) {
      std::vector<T> P(static_cast<size_t>(kRows * kCols)), dS(static_cast<size_t>(kRows * kCols)), delta(Tq);
      for (int64_t n = n0; n < n1; ++n) {
        const T *Q = pq + mq.base[n], *K = pk + mk.base[n], *V = pv + mv.base[n], *O = po + mo.base[n],
                *G = pg + mg.base[n], *L = pl + n * Tq;
        T *dQ = pdq + mdq.base[n], *dK = pdk + mdk.base[n], *dV = pdv + mdv.base[n];
        for (int64_t i = 0; i < Tq; ++i) {  // δ_i = Σ_e dO_ie O_ie
          double acc = 0;
          for (int64_t e = 0; e < dv; ++e) acc += double(G[i * mg.ld + e]) * O[i * mo.ld + e];
          delta[i] = static_cast<T>(acc);
        }
        for (int64_t r0 = 0; r0 < Tq; r0 += kRows) {
          const int64_t r1 = std::min(Tq, r0 + kRows), R = r1 - r0;
          for (int64_t c0 = 0; c0 < key_end(causal, r1, Tk); c0 += kCols) {
            const int64_t c1 = std::min(Tk, c0 + kCols), C = c1 - c0;
            gemm<T>(false, true, R, C, d, s, Q + r0 * mq.ld, mq.ld, K + c0 * mk.ld, mk.ld, T(0), P.data(), kCols);
            for (int64_t r = 0; r < R; ++r) {
              T* row = P.data() + r * kCols;
              const int64_t valid = visible(causal, r0 + r, c0, c1);
              if (L[r0 + r] == -kInf) std::fill(row, row + valid, T(0));  // a row that weighs no key (all -inf)
              else detail::exp_shifted(row, L[r0 + r], row, valid);       // P = exp(S - lse)
              std::fill(row + valid, row + C, T(0));
            }
            // dV_j += Pᵀ dO_i
            gemm<T>(true, false, C, dv, R, T(1), P.data(), kCols, G + r0 * mg.ld, mg.ld, T(1), dV + c0 * mdv.ld, mdv.ld);
            // dP = dO_i V_jᵀ, then dS = P ⊙ (dP - δ)
            gemm<T>(false, true, R, C, dv, T(1), G + r0 * mg.ld, mg.ld, V + c0 * mv.ld, mv.ld, T(0), dS.data(), kCols);
            for (int64_t r = 0; r < R; ++r) {
              const T* p = P.data() + r * kCols;
              T* ds = dS.data() + r * kCols;
              const T dl = delta[r0 + r];
              for (int64_t c = 0; c < C; ++c) ds[c] = p[c] * (ds[c] - dl);
            }
            // dQ_i += s dS K_j,  dK_j += s dSᵀ Q_i
            gemm<T>(false, false, R, d, C, s, dS.data(), kCols, K + c0 * mk.ld, mk.ld, T(1), dQ + r0 * mdq.ld, mdq.ld);
            gemm<T>(true, false, C, d, R, s, dS.data(), kCols, Q + r0 * mq.ld, mq.ld, T(1), dK + c0 * mdk.ld, mdk.ld);
          }
        }
      }
    });
  });
  const double item = double(dtype_size(q.dtype()));
  note_work(2.5 * double(N) * tile_flops(Tq, Tk, d, dv, causal),
            item * double(q.numel() + k.numel() + v.numel() + out.numel() + g.numel() + lse.numel()),
            item * double(dq.numel() + dk.numel() + dvv.numel()));
  return {dq, dk, dvv};
}

}  // namespace ember::kernel
