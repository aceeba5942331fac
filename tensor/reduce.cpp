// Reductions. Most of them first arrange the input as a contiguous (M, K)
// matrix of rows: M = the kept positions, K = the reduced elements (a view
// when the layout already allows it, a copy otherwise), then reduce each row.
// Float sums accumulate in double. Every row is reduced in a fixed order, and
// a single long row is split into fixed-size blocks whose partial sums are
// added in order, so results never depend on the thread count.
#include <algorithm>
#include <cmath>
#include <limits>

#include "base/hooks.h"
#include "tensor/elementwise.h"
#include "tensor/factory.h"
#include "tensor/fast_math.h"
#include "tensor/kernels.h"
#include "tensor/machine/at_each_width.h"

namespace ember::kernel {

namespace {

template <typename T> using acc_t = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;

struct Rows {
  Tensor data;      // contiguous (M, K)
  int64_t M, K;
  Shape out_shape;  // the result's shape (keepdim honoured)
  Shape perm;       // kept dims then reduced dims
};

Rows as_rows(const Tensor& x, const Shape& dims_in, bool keepdim, const char* op) {
  const std::vector<bool> reduced = reduced_dims(x.dim(), dims_in, op);
  Rows r;
  r.M = 1;
  r.K = 1;
  Shape kept, red;
  for (int64_t d = 0; d < x.dim(); ++d) {
    if (reduced[d]) {
      red.push_back(d);
      r.K *= x.shape()[d];
      if (keepdim) r.out_shape.push_back(1);
    } else {
      kept.push_back(d);
      r.M *= x.shape()[d];
      r.out_shape.push_back(x.shape()[d]);
    }
  }
  r.perm = kept;
  r.perm.insert(r.perm.end(), red.begin(), red.end());
  r.data = reshape(contiguous(permute(x, r.perm)), {r.M, r.K});
  return r;
}

// The inverse of as_rows for a keepdim=true layout: (M, K) rows back to a
// tensor of `shape` in its own dim order (a copy only if dims were permuted).
Tensor from_rows(const Tensor& rows, const Rows& r, const Shape& shape) {
  Shape perm_shape;
  for (int64_t pd : r.perm) perm_shape.push_back(shape[pd]);
  Tensor permuted = reshape(rows, perm_shape);
  Shape inverse(r.perm.size());
  for (size_t i = 0; i < r.perm.size(); ++i) inverse[r.perm[i]] = static_cast<int64_t>(i);
  return contiguous(permute(permuted, inverse));
}

// Sum of p[0..n) in a fixed order: eight partial sums, element i into
// partial i mod 8 in order, then ((0+1)+(2+3))+((4+5)+(6+7)). One running sum
// would be a chain of dependent additions that no compiler may reorder; this
// order is the code's, so it vectorizes at every SIMD width (compiled for the
// chosen one) and gives the same bits at each.
template <typename T>
acc_t<T> row_sum(const T* p, int64_t n) {
  acc_t<T> acc[8] = {};
  detail::at_width([&]() EMBER_INLINE {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
      for (int64_t j = 0; j < 8; ++j) acc[j] += static_cast<acc_t<T>>(p[i + j]);
    for (int64_t j = 0; i + j < n; ++j) acc[j] += static_cast<acc_t<T>>(p[i + j]);
  });
  return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

constexpr int64_t kBlock = 8192;

// Sums each row of an (M, K) float/int matrix into out[M] (type O).
template <typename T, typename O, typename F>
void reduce_rows(const Rows& r, O* out, const F& finish) {
  const T* p = r.data.data_ptr<T>();
  const int64_t M = r.M, K = r.K;
  if (M == 1 && K > 2 * kBlock) {
    // One long row: fixed blocks in parallel, partials added in order.
    int64_t nb = (K + kBlock - 1) / kBlock;
    std::vector<acc_t<T>> part(nb);
    detail::parallel_for(nb, 4, [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b) part[b] = row_sum(p + b * kBlock, std::min(kBlock, K - b * kBlock));
    });
    acc_t<T> s = 0;
    for (auto v : part) s += v;
    out[0] = finish(s);
    return;
  }
  detail::parallel_for(M, std::max<int64_t>(1, detail::kGrain / std::max<int64_t>(K, 1)), [&](int64_t m0, int64_t m1) {
    for (int64_t m = m0; m < m1; ++m) out[m] = finish(row_sum(p + m * K, K));
  });
}

// out[m] = sum over k of p[row[k] + m] for m0 <= m < m1, each column's sum
// in k order (a float's in double): at each SIMD width, the same bits
// (tensor/machine/at_each_width.h). A sum over the batch, as the bias
// gradient of every Linear is; row[k] is where row k starts (k * M when the
// input is contiguous; any stride, 0 too, when the reduced dims are a
// broadcast's).
struct ColumnSums {
  template <typename T>
  [[gnu::always_inline]] static void run(const T* p, const int64_t* row_at, bool rows_broadcast, T* o, int64_t K,
                                         int64_t m0, int64_t m1) {
    // Columns a chunk at a time, the chunk's sums on the stack (in L1; a
    // heap array as wide as m1 - m0 would be fresh pages at every call).
    constexpr int64_t kChunk = 512;
    acc_t<T> acc[kChunk];
    for (int64_t c0 = m0; c0 < m1; c0 += kChunk) {
      const int64_t c1 = std::min(m1, c0 + kChunk);
      for (int64_t m = c0; m < c1; ++m) acc[m - c0] = 0;
      for (int64_t k = 0; k < K; ++k) {
        const T* row = p + row_at[k];
        if (rows_broadcast) {  // every element of row k is row[0]
          const T v = row[0];
          for (int64_t m = c0; m < c1; ++m) acc[m - c0] += v;
        } else {
          for (int64_t m = c0; m < c1; ++m) acc[m - c0] += row[m];
        }
      }
      for (int64_t m = c0; m < c1; ++m) o[m] = static_cast<T>(acc[m - c0]);
    }
  }
};

// When x's sum can run as ColumnSums: the reduced dims are 0..lead-1 (any
// strides: a gradient broadcast from a smaller shape has stride 0 there) and
// the kept dims after them are one block of M elements, contiguous or one
// broadcast value (every stride 0, as a gradient expanded from a scalar is).
struct LeadingSum {
  int64_t lead = 0;  // 0: the general path
  bool broadcast = false;
};
LeadingSum leading_reduced_dims(const Tensor& x, const Shape& dims) {
  if (dims.empty() || x.dim() == 0) return {};
  const std::vector<bool> red = reduced_dims(x.dim(), dims, "sum");
  int64_t k = 0;
  while (k < x.dim() && red[static_cast<size_t>(k)]) ++k;
  if (k == x.dim()) return {};
  bool contiguous = true, broadcast = true;
  int64_t expect = 1;  // the kept block's contiguous strides, innermost first
  for (int64_t d = x.dim() - 1; d >= k; --d) {
    if (red[static_cast<size_t>(d)]) return {};
    if (x.shape()[d] == 1) continue;
    contiguous = contiguous && x.stride()[d] == expect;
    broadcast = broadcast && x.stride()[d] == 0;
    expect *= x.shape()[d];
  }
  if (!contiguous && !broadcast) return {};
  return {k, !contiguous};
}

}  // namespace

namespace {
// Work rule of a reduction: `per_element` operations per input element,
// the input read once, the output written once.
void note_reduction(const Tensor& x, const Tensor& out, double per_element) {
  const double item = static_cast<double>(dtype_size(x.dtype()));
  note_work(per_element * static_cast<double>(x.numel()), item * static_cast<double>(x.numel()),
            static_cast<double>(dtype_size(out.dtype())) * static_cast<double>(out.numel()));
}
}  // namespace

Tensor sum(const Tensor& x, const Shape& dims, bool keepdim) {
  EMBER_CHECK(x.dtype() != kBool, "sum", "not defined for bool tensors; convert with to(kInt64)");
  if (const LeadingSum how = leading_reduced_dims(x, dims); how.lead > 0) {
    const int64_t lead = how.lead;
    // Column sweep: out[m] = sum_k x[k, m], rows k over the leading dims.
    Shape out_shape;
    int64_t K = 1;
    for (int64_t d = 0; d < x.dim(); ++d) {
      if (d < lead) K *= x.shape()[d];
      if (d >= lead) out_shape.push_back(x.shape()[d]);
      else if (keepdim) out_shape.push_back(1);
    }
    const int64_t M = numel_of(out_shape);
    // Where each row starts (elements from x's first): an odometer over the
    // leading dims; from the caching allocator, as K can be large.
    const Tensor rows = empty({K}, kInt64);
    int64_t* row_at = rows.data_ptr<int64_t>();
    Shape idx(static_cast<size_t>(lead), 0);
    int64_t offset = 0;
    for (int64_t k = 0; k < K; ++k) {
      row_at[k] = offset;
      for (int64_t d = lead - 1; d >= 0; --d) {
        offset += x.stride()[d];
        if (++idx[d] < x.shape()[d]) break;
        offset -= x.stride()[d] * x.shape()[d];
        idx[d] = 0;
      }
    }
    Tensor out = empty(out_shape, x.dtype());
    EMBER_DISPATCH_NUMERIC(x.dtype(), "sum", [&]<typename T>() {
      const T* p = x.data_ptr<T>();
      T* o = out.data_ptr<T>();
      detail::parallel_for(M, std::max<int64_t>(64, detail::kGrain / std::max<int64_t>(K, 1)), [&](int64_t m0, int64_t m1) {
        detail::AtEachWidth<ColumnSums>::run<T>(p, row_at, how.broadcast, o, K, m0, m1);
      });
    });
    note_reduction(x, out, 1);
    return out;
  }
  Rows r = as_rows(x, dims, keepdim, "sum");
  Tensor out = empty(r.out_shape, x.dtype());
  EMBER_DISPATCH_NUMERIC(x.dtype(), "sum", [&]<typename T>() {
    reduce_rows<T>(r, out.data_ptr<T>(), [](acc_t<T> s) { return static_cast<T>(s); });
  });
  note_reduction(x, out, 1);
  return out;
}

Tensor mean(const Tensor& x, const Shape& dims, bool keepdim) {
  EMBER_CHECK(is_floating(x.dtype()), "mean",
              "expected a float32 or float64 tensor, got " << dtype_name(x.dtype()) << " of shape " << shape_str(x.shape()));
  Rows r = as_rows(x, dims, keepdim, "mean");
  Tensor out = empty(r.out_shape, x.dtype());
  const double K = static_cast<double>(r.K);
  EMBER_DISPATCH_FLOAT(x.dtype(), "mean", [&]<typename T>() {
    reduce_rows<T>(r, out.data_ptr<T>(), [K](double s) { return static_cast<T>(s / K); });  // 0/0 = nan, like PyTorch
  });
  note_reduction(x, out, 1);
  return out;
}

Tensor var(const Tensor& x, const Shape& dims, int64_t correction, bool keepdim) {
  EMBER_CHECK(is_floating(x.dtype()), "var",
              "expected a float32 or float64 tensor, got " << dtype_name(x.dtype()) << " of shape " << shape_str(x.shape()));
  EMBER_CHECK(correction >= 0, "var", "correction must be >= 0, got " << correction);
  Rows r = as_rows(x, dims, keepdim, "var");
  Tensor out = empty(r.out_shape, x.dtype());
  EMBER_DISPATCH_FLOAT(x.dtype(), "var", [&]<typename T>() {
    const T* p = r.data.data_ptr<T>();
    T* o = out.data_ptr<T>();
    const int64_t K = r.K;
    detail::parallel_for(r.M, std::max<int64_t>(1, detail::kGrain / std::max<int64_t>(K, 1)), [&](int64_t m0, int64_t m1) {
      for (int64_t m = m0; m < m1; ++m) {
        // Two passes: the mean, then squared deviations (stable).
        const T* row = p + m * K;
        double mu = row_sum(row, K) / static_cast<double>(K);
        double ss = 0;
        for (int64_t k = 0; k < K; ++k) ss += (row[k] - mu) * (row[k] - mu);
        double denom = static_cast<double>(K - correction);
        o[m] = static_cast<T>(denom > 0 ? ss / denom : std::numeric_limits<double>::quiet_NaN());
      }
    });
  });
  note_reduction(x, out, 4);  // sum, then subtract, square, add
  return out;
}

Tensor norm(const Tensor& x, double p, const Shape& dims, bool keepdim) {
  EMBER_CHECK(is_floating(x.dtype()), "norm",
              "expected a float32 or float64 tensor, got " << dtype_name(x.dtype()) << " of shape " << shape_str(x.shape()));
  EMBER_CHECK(p > 0, "norm", "p must be > 0 (or infinity: max |x|), got " << p);
  Rows r = as_rows(x, dims, keepdim, "norm");
  Tensor out = empty(r.out_shape, x.dtype());
  EMBER_DISPATCH_FLOAT(x.dtype(), "norm", [&]<typename T>() {
    const T* d = r.data.data_ptr<T>();
    T* o = out.data_ptr<T>();
    for (int64_t m = 0; m < r.M; ++m) {
      double s = 0;
      if (std::isinf(p)) {  // max |x|; a NaN wins
        for (int64_t k = 0; k < r.K; ++k) {
          double a = std::abs(static_cast<double>(d[m * r.K + k]));
          s = (a > s || a != a) && s == s ? a : s;
        }
        o[m] = static_cast<T>(s);
        continue;
      }
      for (int64_t k = 0; k < r.K; ++k) {
        double a = std::abs(static_cast<double>(d[m * r.K + k]));
        s += p == 2.0 ? a * a : (p == 1.0 ? a : std::pow(a, p));
      }
      o[m] = static_cast<T>(p == 2.0 ? std::sqrt(s) : (p == 1.0 ? s : std::pow(s, 1.0 / p)));
    }
  });
  note_reduction(x, out, 2);
  return out;
}

namespace {
template <bool IsMax>
std::pair<Tensor, Tensor> extreme(const Tensor& x, int64_t d, bool keepdim, const char* op) {
  EMBER_CHECK(x.dtype() != kBool, op, "not defined for bool tensors");
  const int64_t w = wrap_dim_or_scalar(d, x.dim(), op);
  if (x.dim() > 0) {
    EMBER_CHECK(x.shape()[w] > 0, op,
                "cannot reduce over dim " << d << " of size 0 (shape " << shape_str(x.shape()) << ")");
  }
  Rows r = as_rows(x, x.dim() == 0 ? Shape{} : Shape{d}, keepdim, op);
  Tensor values = empty(r.out_shape, x.dtype());
  Tensor indices = empty(r.out_shape, kInt64);
  EMBER_DISPATCH_NUMERIC(x.dtype(), op, [&]<typename T>() {
    const T* p = r.data.data_ptr<T>();
    T* v = values.data_ptr<T>();
    int64_t* idx = indices.data_ptr<int64_t>();
    for (int64_t m = 0; m < r.M; ++m) {
      const T* row = p + m * r.K;
      int64_t best = 0;
      for (int64_t k = 1; k < r.K; ++k) {
        if (row[best] != row[best]) break;  // NaN wins, like PyTorch
        bool better = IsMax ? (row[k] > row[best]) : (row[k] < row[best]);
        if (better || row[k] != row[k]) best = k;
      }
      v[m] = row[best];
      idx[m] = best;
    }
  });
  note_reduction(x, values, 1);
  return {values, indices};
}
}  // namespace

std::pair<Tensor, Tensor> max(const Tensor& x, int64_t d, bool keepdim) { return extreme<true>(x, d, keepdim, "max"); }
std::pair<Tensor, Tensor> min(const Tensor& x, int64_t d, bool keepdim) { return extreme<false>(x, d, keepdim, "min"); }

Tensor argmax(const Tensor& x, std::optional<int64_t> d, bool keepdim) {
  if (!d) {
    EMBER_CHECK(x.numel() > 0, "argmax", "cannot take argmax of an empty tensor of shape " << shape_str(x.shape()));
    return extreme<true>(reshape(x, {-1}), 0, false, "argmax").second;
  }
  return extreme<true>(x, *d, keepdim, "argmax").second;
}

namespace {
// softmax / log_softmax over rows of length K: subtract the row max first so
// exp never overflows (stable at +-1e4). Of scale * x, and with causal > 0
// the softmax over the last dim of (…, causal, K) rows where query i sees
// keys 0..i only (the rest get weight 0), as attention's scores need: the
// scale and the mask cost no pass of their own.
template <bool Log>
Tensor softmax_impl(const Tensor& x, int64_t d, const char* op, double scale = 1.0, int64_t causal = 0) {
  EMBER_CHECK(is_floating(x.dtype()), op,
              "expected a float32 or float64 tensor, got " << dtype_name(x.dtype()) << " of shape " << shape_str(x.shape()));
  const int64_t w = wrap_dim_or_scalar(d, x.dim(), op);
  if (x.dim() == 0) return Log ? zeros_like(x) : ones_like(x);
  Rows r = as_rows(x, {w}, true, op);
  Tensor out_rows = empty({r.M, r.K}, x.dtype());
  EMBER_DISPATCH_FLOAT(x.dtype(), op, [&]<typename T>() {
    const T* p = r.data.data_ptr<T>();
    T* o = out_rows.data_ptr<T>();
    const int64_t rowlen = r.K;
    const T sc = static_cast<T>(scale);
    detail::parallel_for(r.M, std::max<int64_t>(1, detail::kGrain / std::max<int64_t>(rowlen, 1)), [&](int64_t m0, int64_t m1) {
      for (int64_t m = m0; m < m1; ++m) {
        const T* row = p + m * rowlen;
        T* orow = o + m * rowlen;
        const int64_t K = causal > 0 ? std::min(rowlen, m % causal + 1) : rowlen;  // the keys this row sees
        for (int64_t k = K; k < rowlen; ++k) orow[k] = Log ? -std::numeric_limits<T>::infinity() : T(0);
        T mx = -std::numeric_limits<T>::infinity();
        for (int64_t k = 0; k < K; ++k) mx = row[k] > mx ? row[k] : mx;
        if (mx == -std::numeric_limits<T>::infinity()) mx = 0;  // all -inf: avoid inf - inf
        // exp over the whole row at once (SIMD); the sum stays in order.
        detail::exp_affine(row, sc, sc * mx, orow, K);
        T s = 0;
        for (int64_t k = 0; k < K; ++k) s += orow[k];
        if (s == 0) {
          // Every entry is -inf (e.g. a fully masked attention row): the
          // documented rule is weight 0 everywhere (log: -inf), never NaN.
          for (int64_t k = 0; k < K; ++k) orow[k] = Log ? -std::numeric_limits<T>::infinity() : T(0);
          continue;
        }
        if constexpr (Log) {
          T ls = std::log(s);
          for (int64_t k = 0; k < K; ++k) orow[k] = sc * row[k] - sc * mx - ls;
        } else {
          T inv = static_cast<T>(1) / s;
          for (int64_t k = 0; k < K; ++k) orow[k] *= inv;
        }
      }
    });
  });
  note_reduction(x, out_rows, Log ? 5 : 4);  // max, subtract and exp, sum, scale (log: and log)
  return from_rows(out_rows, r, x.shape());
}
}  // namespace

Tensor softmax(const Tensor& x, int64_t d) { return softmax_impl<false>(x, d, "softmax"); }
Tensor log_softmax(const Tensor& x, int64_t d) { return softmax_impl<true>(x, d, "log_softmax"); }
Tensor scaled_softmax(const Tensor& x, double scale, bool causal) {
  const char* op = "scaled_softmax";
  EMBER_CHECK(std::isfinite(scale) && scale > 0, op, "scale must be finite and positive, got " << scale);
  EMBER_CHECK(!causal || x.dim() >= 2, op,
              "a causal softmax needs (…, Tq, Tk) scores, got shape " << shape_str(x.shape()));
  return softmax_impl<false>(x, -1, op, scale, causal && x.numel() > 0 ? x.size(-2) : 0);
}

// One pass per row instead of four tensor ops:
//   softmax:     dx = y (g - Σ g y)
//   log_softmax: dx = g - exp(y) Σ g
// times the scale for scaled_softmax; a key the causal mask hides gets 0
// (it is not in the row: a NaN elsewhere in the row does not reach it).
Tensor softmax_backward(const Tensor& y, const Tensor& g, int64_t d, bool log, double scale, int64_t causal) {
  const char* op = log ? "log_softmax backward" : "softmax backward";
  EMBER_CHECK(y.shape() == g.shape() && y.dtype() == g.dtype(), op,
              "output " << shape_str(y.shape()) << " and gradient " << shape_str(g.shape()) << " must match");
  const int64_t w = wrap_dim_or_scalar(d, y.dim(), op);
  if (y.dim() == 0) return zeros_like(y);
  Rows ry = as_rows(y, {w}, true, op), rg = as_rows(g, {w}, true, op);
  Tensor out = empty({ry.M, ry.K}, y.dtype());
  EMBER_DISPATCH_FLOAT(y.dtype(), op, [&]<typename T>() {
    const T *py = ry.data.data_ptr<T>(), *pg = rg.data.data_ptr<T>();
    T* po = out.data_ptr<T>();
    const int64_t K = ry.K;
    const T sc = static_cast<T>(scale);
    detail::parallel_for(ry.M, std::max<int64_t>(1, detail::kGrain / std::max<int64_t>(K, 1)), [&](int64_t m0, int64_t m1) {
      for (int64_t m = m0; m < m1; ++m) {
        const T *yr = py + m * K, *gr = pg + m * K;
        T* o = po + m * K;
        // the keys this row sees (as the forward); the others are not in its softmax
        const int64_t seen = causal > 0 ? std::min(K, m % causal + 1) : K;
        std::fill(o + seen, o + K, T(0));
        double s = 0;
        if (log) {
          for (int64_t k = 0; k < seen; ++k) s += gr[k];
          detail::exp_shifted(yr, T(0), o, seen);
          for (int64_t k = 0; k < seen; ++k) o[k] = sc * (gr[k] - o[k] * static_cast<T>(s));
        } else {
          for (int64_t k = 0; k < seen; ++k) s += static_cast<double>(gr[k]) * yr[k];
          for (int64_t k = 0; k < seen; ++k) o[k] = sc * yr[k] * (gr[k] - static_cast<T>(s));
        }
      }
    });
  });
  note_reduction(y, out, 4);
  return from_rows(out, ry, y.shape());
}

Tensor sum_to(const Tensor& x, const Shape& shape) {
  if (x.shape() == shape) return x;
  // Dims that broadcasting added (leading) or stretched (size 1 in `shape`).
  Shape dims;
  const int64_t lead = x.dim() - static_cast<int64_t>(shape.size());
  EMBER_CHECK(lead >= 0, "sum_to", "cannot sum shape " << shape_str(x.shape()) << " to " << shape_str(shape));
  for (int64_t d = 0; d < x.dim(); ++d) {
    if (d < lead || (shape[d - lead] == 1 && x.shape()[d] != 1)) dims.push_back(d);
  }
  if (dims.empty()) return reshape(x, shape);
  return reshape(sum(x, dims, true), shape);
}

}  // namespace ember::kernel
